// The inverse of the diagonal block's factor over 2x2 blocks, for the panel
// (block_panel.frag): drawn into the pair's source over the diagonal block right after
// block_factor.frag drew L_kk into the target, which this pass reads. The fragment of block
// (k+ti, k+tj) computes block column tj of Y = L_kk⁻¹ by forward substitution,
// Y_r = L_rr⁻¹·(δ_r,tj·I − Σ_{t<r} L_rt·Y_t) (zero above tj), and writes Y_ti. The copy after
// the panel puts L_kk back. T0 = (origin + .5, ±1) as in block_factor.frag. A NaN pivot
// (not positive definite) makes the inverse NaN, and so the panel.
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
uniform sampler2D L;
in vec3 T0;
// The 2x2 product a·b of two blocks stored row by row.
vec4 times(vec4 a, vec4 b) {
    return a.xxzz * b.xyxy + a.yyww * b.zwzw;
}
// The inverse of the lower 2x2 block [[p, -], [q, r]] (its upper entry is never read).
vec4 lower_inverse(vec4 l) {
    return vec4(1.0 / l.x, 0.0, -l.z / (l.x * l.w), 1.0 / l.w);
}
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    int ti = dir * (here.y - o.y);
    int tj = dir * (here.x - o.x);
    vec4 y[KB];
    vec4 mine = vec4(0.0);
    for (int r = 0; r < KB; ++r) {
        vec4 s = r == tj ? vec4(1.0, 0.0, 0.0, 1.0) : vec4(0.0);
        for (int t = 0; t < r; ++t) {
            s -= times(texelFetch(L, o + dir * ivec2(t, r), 0), y[t]);
        }
        y[r] = times(lower_inverse(texelFetch(L, o + dir * ivec2(r, r), 0)), s);
        if (r == ti) {
            mine = y[r];
        }
    }
    result = mine;
}
