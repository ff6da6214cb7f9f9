// Kernel 3, square root of the pivot.
uniform sampler2D L;
void main() {
    result = sqrt(fetch(L, gl_FragCoord.xy));
}
