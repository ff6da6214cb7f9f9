// Kernel 5, outer-product subtraction: L(i, j) - L(i, k) * L(j, k); the neighbour at T0, the
// pivot at T1.yx (the paper's swizzle).
uniform sampler2D L;
in vec3 T0;
in vec2 T1;
void main() {
    result = fetch(L, gl_FragCoord.xy) - fetch(L, T0.xy) * fetch(L, T1.yx);
}
