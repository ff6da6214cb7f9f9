// Copy of a 4 x 4 block back into the source of the pair (Algorithm 5's copy, by blocks).
void main() {
    put(block(ivec2(gl_FragCoord.xy)));
}
