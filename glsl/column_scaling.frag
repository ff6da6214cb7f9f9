// Kernel 1, column scaling: b(i) = A(i, k) * d(k). T0 = (i, k+.5, .5) interpolated.
uniform sampler2D A;
uniform sampler2D d;
in vec3 T0;
void main() {
    result = fetch(A, T0.yx) * fetch(d, T0.yz);
}
