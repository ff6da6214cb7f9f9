// The inverse of the diagonal block's factor over 4 x 4 blocks, for the panel
// (block_panel.frag): drawn into the pair's source over the diagonal block right after
// block_factor.frag drew L_kk into the target, which this pass reads. The fragment of block
// (k+ti, k+tj) computes block column tj of Y = L_kk⁻¹ by forward substitution,
// Y_r = L_rr⁻¹·(δ_r,tj·I − Σ_{t<r} L_rt·Y_t) (zero above tj), and writes Y_ti. The copy after
// the panel puts L_kk back. T0 = (origin + .5, ±1) as in block_factor.frag. A NaN pivot
// (not positive definite) makes the inverse NaN, and so the panel.
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
in vec3 T0;
// The inverse of a lower triangular 4 x 4 block (its upper entries are never read), column
// by column: L·y = e_c.
mat4 lower_inverse(mat4 l) {
    mat4 y = mat4(0.0);
    for (int c = 0; c < 4; ++c) {
        for (int r = c; r < 4; ++r) {
            float s = r == c ? 1.0 : 0.0;
            for (int t = c; t < r; ++t) {
                s -= l[t][r] * y[c][t];
            }
            y[c][r] = s / l[r][r];
        }
    }
    return y;
}
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    int ti = dir * (here.y - o.y);
    int tj = dir * (here.x - o.x);
    mat4 y[KB];
    mat4 mine = mat4(0.0);
    for (int r = 0; r < KB; ++r) {
        mat4 s = r == tj ? mat4(1.0) : mat4(0.0);
        for (int t = 0; t < r; ++t) {
            s -= block(o + dir * ivec2(t, r)) * y[t];
        }
        y[r] = lower_inverse(block(o + dir * ivec2(r, r))) * s;
        if (r == ti) {
            mine = y[r];
        }
    }
    put(mine);
}
