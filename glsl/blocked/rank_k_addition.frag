// Rank-K outer-product addition (Kernel 2, K = 2·KB columns of A per pass):
// C_T(I, J) = C_S(I, J) + Σ_t A(I, k+t)·B(J, k+t)ᵀ over the KB texel columns from k.
// A and B hold texel (x, y) = rows 2x.., columns 2y.. (transposed, so that neighbouring
// fragments read neighbouring texels): T0 = (k+.5, y), read .yx, is A's texel (I, k) and
// T1 = (x, k+.5) B's texel (J, k).
// The upper entry of a diagonal block (I = J, wherever C's format puts it) is set to zero:
// C's strict upper triangle.
const int KB = 16;
uniform sampler2D C;
uniform sampler2D A;
uniform sampler2D B;
in vec3 T0;
in vec2 T1;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 row = texel(T0.yx);
    ivec2 col = texel(T1.xy);
    vec4 sum = texelFetch(C, here, 0);
    for (int t = 0; t < KB; ++t) {
        sum += times_transpose(texelFetch(A, row + ivec2(0, t), 0),
                               texelFetch(B, col + ivec2(0, t), 0));
    }
    if (row.x == col.x) {
        sum.y = 0.0;
    }
    result = sum;
}
