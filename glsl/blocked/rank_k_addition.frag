// Rank-K outer-product addition (Kernel 2, K = 2·KB columns of A per pass):
// C_T(I, J) = C_S(I, J) + Σ_t A(I, k+t)·B(J, k+t)ᵀ over the KB texel columns from k.
// T0 = (k+.5, y) walks A's row block I, T1 = (x, k+.5), read .yx, B's row block J.
// The upper entry of a diagonal block is set to zero: C's strict upper triangle.
const int KB = 16;
uniform sampler2D C;
uniform sampler2D A;
uniform sampler2D B;
in vec3 T0;
in vec2 T1;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 row = texel(T0.xy);
    ivec2 col = texel(T1.yx);
    vec4 sum = texelFetch(C, here, 0);
    for (int t = 0; t < KB; ++t) {
        sum += times_transpose(texelFetch(A, row + ivec2(t, 0), 0),
                               texelFetch(B, col + ivec2(t, 0), 0));
    }
    if (here.x == here.y) {
        sum.y = 0.0;
    }
    result = sum;
}
