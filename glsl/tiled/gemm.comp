// C = alpha·A·diag(d)·Bᵀ + beta·C over one output tile per work group (the tile list says
// which), for C (rows x cols), A (rows x depth), B (cols x depth), each a strided view
// (offset + i·rs + j·cs) into a storage buffer. With `lower` set only entries with
// col ≤ row + shift are written: the SYRK of assembly (Algorithm 3 at tile granularity) and of
// Cholesky's trailing update (shift 0), or a piece of one split over several buffers. Tile
// sizes come as #defines: BM x BN outputs per group, TM x TN per invocation (in registers),
// k-slices of BK in shared memory (SHARED = 1), or read straight from the buffers (SHARED = 0,
// the variant for CPU renderers). With FUSED_DIAG (potrf_inv_fn.glsl inserted at the marker
// below) the work group of tile (0, 0) then factors and inverts the diagonal block at C's
// corner: the blocked Cholesky's inner update and its next diagonal block in one dispatch.
layout(local_size_x = WG_X, local_size_y = WG_Y) in;

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 1) readonly buffer ABuf { float a[]; };
layout(std430, binding = 2) readonly buffer BBuf { float b[]; };
layout(std430, binding = 3) readonly buffer DBuf { float d[]; };
layout(std430, binding = 4) readonly buffer TileBuf { uvec2 tiles[]; };

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
// First entry of d for this launch's depth.
uniform uint d_off;
#ifdef FUSED_DIAG
// The diagonal block at C's corner to factor and invert after the update (diag_n = 0: none),
// its first global column (status word) and its inverse's offset.
uniform uint diag_n;
uniform uint diag_column0;
uniform uint diag_inv_off;
#endif
// FUSED_DIAG_FUNCTION

float load_a(uint i, uint k) {
    return (i < rows && k < depth) ? a[a_off + i * a_rs + k * a_cs] : 0.0;
}

float load_b(uint j, uint k) {
    if (j >= cols || k >= depth) return 0.0;
    float v = b[b_off + j * b_rs + k * b_cs];
    return use_d != 0 ? v * d[d_off + k] : v;
}

#if SHARED
// k-slices of A and B, four rows per vec4 so each invocation reads its rows with wide loads;
// one vec4 of padding per slice keeps the k-strided stores off one bank.
shared vec4 As[BK][BM / 4 + 1];
shared vec4 Bs[BK][BN / 4 + 1];
#endif

void main() {
    uvec2 tile = tiles[tile_base + gl_WorkGroupID.x];
    uint row0 = tile.x * BM;
    uint col0 = tile.y * BN;
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    // Invocation (tx, ty) owns rows 4(ty + g·WG_Y) + r and columns 4(tx + h·WG_X) + s.
    vec4 acc[TM][TN / 4];
    // An update C ± A·Bᵀ (beta = 1, alpha = ±1: the trailing updates) accumulates onto ±C itself,
    // so each product is rounded against the running value as the paper's rank-1 passes do,
    // instead of summing the products apart and cancelling against C at the end.
    bool onto_c = beta == 1.0 && abs(alpha) == 1.0;
    for (int g = 0; g < TM / 4; g++)
        for (int r = 0; r < 4; r++)
            for (int h = 0; h < TN / 4; h++)
                for (int s = 0; s < 4; s++) {
                    uint i = row0 + 4u * (ty + uint(g) * WG_Y) + uint(r);
                    uint j = col0 + 4u * (tx + uint(h) * WG_X) + uint(s);
                    bool inside = onto_c && i < rows && j < cols && (lower == 0 || int(j) <= int(i) + shift);
                    acc[g * 4 + r][h][s] = inside ? alpha * c[c_off + i * c_rs + j * c_cs] : 0.0;
                }

#if SHARED
    uint tid = ty * WG_X + tx;
    const uint threads = WG_X * WG_Y;
    bool a_rows_contiguous = a_rs == 1u;
    bool b_rows_contiguous = b_rs == 1u;
    for (uint k0 = 0u; k0 < depth; k0 += BK) {
        // Cooperative loads, each invocation 4 values per vec4, consecutive invocations on
        // consecutive addresses whichever way the view is laid out.
        for (uint e = tid; e < BK * BM / 4; e += threads) {
            uint kk = a_rows_contiguous ? e / (BM / 4) : e % BK;
            uint r4 = a_rows_contiguous ? e % (BM / 4) : e / BK;
            uint i = row0 + r4 * 4u;
            As[kk][r4] = vec4(load_a(i, k0 + kk), load_a(i + 1u, k0 + kk),
                              load_a(i + 2u, k0 + kk), load_a(i + 3u, k0 + kk));
        }
        for (uint e = tid; e < BK * BN / 4; e += threads) {
            uint kk = b_rows_contiguous ? e / (BN / 4) : e % BK;
            uint c4 = b_rows_contiguous ? e % (BN / 4) : e / BK;
            uint j = col0 + c4 * 4u;
            Bs[kk][c4] = vec4(load_b(j, k0 + kk), load_b(j + 1u, k0 + kk),
                              load_b(j + 2u, k0 + kk), load_b(j + 3u, k0 + kk));
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk++) {
            vec4 av[TM / 4];
            vec4 bv[TN / 4];
            for (int g = 0; g < TM / 4; g++) av[g] = As[kk][ty + g * WG_Y];
            for (int h = 0; h < TN / 4; h++) bv[h] = Bs[kk][tx + h * WG_X];
            for (int g = 0; g < TM / 4; g++)
                for (int r = 0; r < 4; r++)
                    for (int h = 0; h < TN / 4; h++) acc[g * 4 + r][h] += av[g][r] * bv[h];
        }
        barrier();
    }
#else
    for (uint k = 0u; k < depth; k++) {
        vec4 bv[TN / 4];
        for (int h = 0; h < TN / 4; h++) {
            uint j = col0 + 4u * (tx + uint(h) * WG_X);
            bv[h] = vec4(load_b(j, k), load_b(j + 1u, k), load_b(j + 2u, k), load_b(j + 3u, k));
        }
        for (int g = 0; g < TM / 4; g++)
            for (int r = 0; r < 4; r++) {
                float av = load_a(row0 + 4u * (ty + uint(g) * WG_Y) + uint(r), k);
                for (int h = 0; h < TN / 4; h++) acc[g * 4 + r][h] += av * bv[h];
            }
    }
#endif

    for (int g = 0; g < TM / 4; g++)
        for (int r = 0; r < 4; r++) {
            uint i = row0 + 4u * (ty + uint(g) * WG_Y) + uint(r);
            if (i >= rows) continue;
            for (int h = 0; h < TN / 4; h++)
                for (int s = 0; s < 4; s++) {
                    uint j = col0 + 4u * (tx + uint(h) * WG_X) + uint(s);
                    if (j >= cols || (lower != 0 && int(j) > int(i) + shift)) continue;
                    uint at = c_off + i * c_rs + j * c_cs;
                    float v = alpha * acc[g * 4 + r][h][s];
                    c[at] = onto_c ? v : (beta == 0.0 ? v : v + beta * c[at]);
                }
        }
#ifdef FUSED_DIAG
    // The work group of the corner tile factors the diagonal block there once its own writes
    // are visible to it (no other work group writes those entries).
    if (diag_n > 0u && tile.x == 0u && tile.y == 0u) {
        memoryBarrierBuffer();
        barrier();
        factor_block(diag_n, c_off, c_rs, c_cs, diag_column0, diag_inv_off);
    }
#endif
}
