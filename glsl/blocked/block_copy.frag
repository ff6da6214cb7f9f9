// Copy of a block back into the source of the pair (Algorithm 5's copy, by blocks).
uniform sampler2D L;
void main() {
    result = texelFetch(L, ivec2(gl_FragCoord.xy), 0);
}
