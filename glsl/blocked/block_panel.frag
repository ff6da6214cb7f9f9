// The panel solve (Kernel 4 for a block column, the Brook+ normalization step):
// X = A(I, k..)·L_kk⁻ᵀ, block by block: X_j = (A_j − Σ_{t<j} X_t·L_jtᵀ)·L_jj⁻ᵀ, each 2x2
// L_jj lower triangular (only its lower entries are read). The fragment of texel column
// k+tj keeps its row's blocks up to tj and writes X_tj. T0 = (origin + .5, ±1) as in
// block_factor.frag: block (k+j, k+t) is texel origin ± (t, j), and block (I, k+j) of the
// fragment's row is texel (origin.x ± j, y) (a block column never straddles the packed fold).
const int KB = 8;
uniform sampler2D L;
in vec3 T0;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    int tj = dir * (here.x - o.x);
    vec4 x[KB];
    vec4 block = vec4(0.0);
    for (int j = 0; j < KB; ++j) {
        vec4 s = texelFetch(L, ivec2(o.x + dir * j, here.y), 0);
        for (int t = 0; t < j; ++t) {
            s -= times_transpose(x[t], texelFetch(L, o + dir * ivec2(t, j), 0));
        }
        // X·Dᵀ = S for the lower 2x2 D = [[p, 0], [q, r]] = (d.x, -, d.z, d.w), by columns.
        vec4 d = texelFetch(L, o + dir * ivec2(j, j), 0);
        vec2 c0 = s.xz / d.x;
        vec2 c1 = (s.yw - c0 * d.z) / d.w;
        x[j] = vec4(c0.x, c1.x, c0.y, c1.y);
        if (j == tj) {
            block = x[j];
        }
    }
    result = block;
}
