// C = alpha·A·diag(d)·Bᵀ + beta·C, the product of gemm.comp shaped for software renderers
// (llvmpipe): there every storage-buffer read is a loop over the SIMD lanes while texelFetch is
// one vector gather, so A, B and d are read through buffer textures and no shared memory or
// barrier is used. Each invocation keeps TM x TN outputs in registers (rows ty·TM + r, columns
// tx·TN + s of the work group's tile). VEC = 4 reads four consecutive k per texel (RGBA32F
// view; the launch guarantees k-contiguous, 4-aligned operands and a depth that is a multiple
// of 4), VEC = 1 one float per texel (any strides). With `lower` set only entries with
// col ≤ row + shift are written, as in gemm.comp. IN_PLACE = 1 is the variant whose C is its A.
layout(local_size_x = WG_X, local_size_y = WG_Y) in;

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 4) readonly buffer TileBuf { uvec2 tiles[]; };

uniform samplerBuffer a_tex;
uniform samplerBuffer b_tex;
uniform samplerBuffer d_tex;
uniform samplerBuffer c_tex;

uniform uint rows;
uniform uint cols;
uniform uint depth;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint a_off;
uniform uint a_rs;
uniform uint a_cs;
uniform uint b_off;
uniform uint b_rs;
uniform uint b_cs;
uniform float alpha;
uniform float beta;
uniform int use_d;
uniform int lower;
uniform int shift;
uniform uint tile_base;
// First entry of d for this launch's depth (a multiple of 4).
uniform uint d_off;

void main() {
    uvec2 tile = tiles[tile_base + gl_WorkGroupID.x];
    uint row0 = tile.x * BM + gl_LocalInvocationID.y * uint(TM);
    uint col0 = tile.y * BN + gl_LocalInvocationID.x * uint(TN);
    bool onto_c = beta == 1.0 && abs(alpha) == 1.0;
    float acc[TM][TN];
    // Rows and columns past the edge read the last one (in bounds) and are never written.
    int ai[TM];
    int bj[TN];
    for (int r = 0; r < TM; r++) {
        uint i = min(row0 + uint(r), rows - 1u);
        ai[r] = int(a_off + i * a_rs);
        for (int s = 0; s < TN; s++) {
            uint j = col0 + uint(s);
            bool inside = onto_c && row0 + uint(r) < rows && j < cols
                && (lower == 0 || int(j) <= int(row0) + r + shift);
            acc[r][s] = inside ? alpha * texelFetch(c_tex, int(c_off + (row0 + uint(r)) * c_rs + j * c_cs)).x : 0.0;
        }
    }
    for (int s = 0; s < TN; s++) bj[s] = int(b_off + min(col0 + uint(s), cols - 1u) * b_rs);

#if VEC == 4
    for (int r = 0; r < TM; r++) ai[r] >>= 2;
    for (int s = 0; s < TN; s++) bj[s] >>= 2;
    int quads = int(depth) >> 2;
    for (int q = 0; q < quads; q++) {
        vec4 dq = use_d != 0 ? texelFetch(d_tex, int(d_off >> 2) + q) : vec4(1.0);
        vec4 av[TM];
        vec4 bv[TN];
        for (int r = 0; r < TM; r++) av[r] = texelFetch(a_tex, ai[r] + q);
        for (int s = 0; s < TN; s++) bv[s] = texelFetch(b_tex, bj[s] + q) * dq;
        for (int r = 0; r < TM; r++)
            for (int s = 0; s < TN; s++) {
                float t = acc[r][s];
                t += av[r].x * bv[s].x;
                t += av[r].y * bv[s].y;
                t += av[r].z * bv[s].z;
                t += av[r].w * bv[s].w;
                acc[r][s] = t;
            }
    }
#else
    for (int k = 0; k < int(depth); k++) {
        float dk = use_d != 0 ? texelFetch(d_tex, int(d_off) + k).x : 1.0;
        float av[TM];
        float bv[TN];
        for (int r = 0; r < TM; r++) av[r] = texelFetch(a_tex, ai[r] + k * int(a_cs)).x;
        for (int s = 0; s < TN; s++) bv[s] = texelFetch(b_tex, bj[s] + k * int(b_cs)).x * dk;
        for (int r = 0; r < TM; r++)
            for (int s = 0; s < TN; s++) acc[r][s] += av[r] * bv[s];
    }
#endif

#if IN_PLACE
    // C and A are the same entries (x ← x·L⁻ᵀ, one tile column): every invocation of the group
    // has read its rows before any is written.
    barrier();
#endif
    for (int r = 0; r < TM; r++) {
        uint i = row0 + uint(r);
        if (i >= rows) continue;
        for (int s = 0; s < TN; s++) {
            uint j = col0 + uint(s);
            if (j >= cols || (lower != 0 && int(j) > int(i) + shift)) continue;
            uint at = c_off + i * c_rs + j * c_cs;
            float v = alpha * acc[r][s];
            c[at] = onto_c ? v : (beta == 0.0 ? v : v + beta * c[at]);
        }
    }
}
