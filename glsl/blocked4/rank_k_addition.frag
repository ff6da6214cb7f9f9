// Rank-K outer-product addition over 4 x 4 blocks (Kernel 2, K = KA columns of A per pass):
// C_T(I, J) = C_S(I, J) + Σ_t a(I, k+t)·b(J, k+t)ᵀ, a and b the 4-row pieces of columns of
// A and B. A and B hold texel (x, y) = rows 4x..4x+4 of column y (neighbouring fragments
// read neighbouring texels): T0 = (k+.5, y), read .yx, is A's texel (I, k) and T1 = (x, k+.5)
// B's texel (J, k). Two fetches per 16 multiply-adds (2 x 2 blocks: per 8).
// The strict upper triangle of a diagonal block (I = J) is set to zero.
const int KA = 32;
uniform sampler2D A;
uniform sampler2D B;
in vec3 T0;
in vec2 T1;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 row = texel(T0.yx);
    ivec2 col = texel(T1.xy);
    mat4 sum = block(here);
    for (int t = 0; t < KA; ++t) {
        sum += outerProduct(texelFetch(A, row + ivec2(0, t), 0),
                            texelFetch(B, col + ivec2(0, t), 0));
    }
    if (row.x == col.x) {
        sum = lower(sum);
    }
    put(sum);
}
