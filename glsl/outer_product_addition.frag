// Kernel 2, outer-product addition: C_T(i, j) = C_S(i, j) + A(i, k) * b(j).
uniform sampler2D C;
uniform sampler2D A;
uniform sampler2D b;
in vec3 T0;
in vec2 T1;
void main() {
    result = fetch(C, gl_FragCoord.xy) + fetch(A, T0.xy) * fetch(b, T1.xy);
}
