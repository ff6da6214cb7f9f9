// The diagonal block's factor (Kernel 3 for a 2·KB block, as the Brook+ sample's square-root
// step): each fragment of the block's lower triangle factors the whole block, right-looking
// over 2x2 blocks, reading only its lower triangle, and writes its own 2x2 piece. Loop
// bounds are constants, so compilers unroll them and keep the blocks in registers.
// T0 = (origin + .5, ±1): block (k+i, k+j) is texel origin ± (j, i), the origin that of
// block (k, k) (the full format and the packed trapezoid +1, the packed corner -1, its blocks
// rotated by 180°). A pivot that is not positive becomes NaN, and so does everything
// computed from it.
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
uniform sampler2D L;
in vec3 T0;
// Index of lower block (i, j), j <= i, in the packed array.
int at(int i, int j) {
    return i * (i + 1) / 2 + j;
}
float root(float p) {
    return p > 0.0 ? sqrt(p) : not_a_number();
}
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    vec4 a[KB * (KB + 1) / 2];
    for (int i = 0; i < KB; ++i) {
        for (int j = 0; j <= i; ++j) {
            a[at(i, j)] = texelFetch(L, o + dir * ivec2(j, i), 0);
        }
    }
    for (int j = 0; j < KB; ++j) {
        // The 2x2 Cholesky of the diagonal block (its upper entry is never read).
        vec4 d = a[at(j, j)];
        float l00 = root(d.x);
        float l10 = d.z / l00;
        float l11 = root(d.w - l10 * l10);
        a[at(j, j)] = vec4(l00, 0.0, l10, l11);
        // The blocks below it: X·Dᵀ = A by columns, D = [[l00, 0], [l10, l11]].
        for (int i = j + 1; i < KB; ++i) {
            vec4 s = a[at(i, j)];
            vec2 c0 = s.xz / l00;
            vec2 c1 = (s.yw - c0 * l10) / l11;
            a[at(i, j)] = vec4(c0.x, c1.x, c0.y, c1.y);
        }
        // The trailing blocks.
        for (int i = j + 1; i < KB; ++i) {
            for (int c = j + 1; c <= i; ++c) {
                a[at(i, c)] -= times_transpose(a[at(i, j)], a[at(c, j)]);
            }
        }
    }
    int ti = dir * (here.y - o.y);
    int tj = dir * (here.x - o.x);
    vec4 block = vec4(0.0);
    for (int i = 0; i < KB; ++i) {
        for (int j = 0; j <= i; ++j) {
            if (i == ti && j == tj) {
                block = a[at(i, j)];
            }
        }
    }
    result = block;
}
