// The panel solve (Kernel 4 for a block column, the Brook+ normalization step):
// X = A(I, k..)·L_kk⁻ᵀ, block by block: X_j = (A_j − Σ_{t<j} X_t·L_jtᵀ)·L_jj⁻ᵀ, each 2x2
// L_jj lower triangular (only its lower entries are read). The fragment of texel column
// k+tj keeps its row's blocks up to tj and writes X_tj. T0 = (k+.5, .) names the column k.
const int KB = 8;
uniform sampler2D L;
in vec3 T0;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    int k = int(floor(T0.x));
    int tj = here.x - k;
    vec4 x[KB];
    vec4 block = vec4(0.0);
    for (int j = 0; j < KB; ++j) {
        vec4 s = texelFetch(L, ivec2(k + j, here.y), 0);
        for (int t = 0; t < j; ++t) {
            s -= times_transpose(x[t], texelFetch(L, ivec2(k + t, k + j), 0));
        }
        // X·Dᵀ = S for the lower 2x2 D = [[p, 0], [q, r]] = (d.x, -, d.z, d.w), by columns.
        vec4 d = texelFetch(L, ivec2(k + j, k + j), 0);
        vec2 c0 = s.xz / d.x;
        vec2 c1 = (s.yw - c0 * d.z) / d.w;
        x[j] = vec4(c0.x, c1.x, c0.y, c1.y);
        if (j == tj) {
            block = x[j];
        }
    }
    result = block;
}
