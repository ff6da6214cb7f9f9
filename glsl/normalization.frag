// Kernel 4, normalization: L(i, k) / L(k, k), the pivot fetched at T0.
uniform sampler2D L;
in vec3 T0;
void main() {
    result = fetch(L, gl_FragCoord.xy) / fetch(L, T0.xy);
}
