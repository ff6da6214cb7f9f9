// The panel solve over 4 x 4 blocks (Kernel 4 for a block column, the Brook+ normalization
// step): X = A(I, k..)·L_kk⁻ᵀ, block by block: X_j = (A_j − Σ_{t<j} X_t·L_jtᵀ)·L_jj⁻ᵀ, each
// 4 x 4 L_jj lower triangular (only its lower entries are read). The fragment of texel
// column k+tj keeps its row's blocks up to tj and writes X_tj. T0 = (origin + .5, ±1) as in
// block_factor.frag: block (k+j, k+t) is texel origin ± (t, j), and block (I, k+j) of the
// fragment's row is texel (origin.x ± j, y) (a block column never straddles the packed fold).
const int KB = 4;
in vec3 T0;
// X with X·Dᵀ = S, D lower triangular (its upper entries are never read), column by column.
mat4 solve(mat4 s, mat4 d) {
    mat4 x = mat4(0.0);
    for (int c = 0; c < 4; ++c) {
        vec4 v = s[c];
        for (int t = 0; t < c; ++t) {
            v -= x[t] * d[t][c];
        }
        x[c] = v / d[c][c];
    }
    return x;
}
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    int tj = dir * (here.x - o.x);
    mat4 x[KB];
    mat4 mine = mat4(0.0);
    for (int j = 0; j < KB; ++j) {
        mat4 s = block(ivec2(o.x + dir * j, here.y));
        for (int t = 0; t < j; ++t) {
            s -= x[t] * transpose(block(o + dir * ivec2(t, j)));
        }
        x[j] = solve(s, block(o + dir * ivec2(j, j)));
        if (j == tj) {
            mine = x[j];
        }
    }
    put(mine);
}
