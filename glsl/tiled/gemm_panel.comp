// C = alpha·A·Bᵀ + beta·C over one BM x BN output tile per work group (the tile list says
// which), A and B read from k-major zero-padded panels in blocks of PT rows (pack_panel.comp:
// vec4 (i / PT)·block4 + k·PT/4 + (i % PT)/4 holds rows i..i+3 at depth k, d already folded
// into one of them; block4 > kp·PT/4 where the blocks are padded off power-of-two strides), so
// a work group streams one contiguous range of each. With REGBUF the next k-step's operands
// are read from shared memory before the current step's products. The panels are padded to whole
// tiles and whole k-slices, so the loop has no bounds checks or strides: each k-slice of BK is
// one vec4 load per invocation per operand (BK·BM/4 vec4s over the group), fetched into
// registers while the previous slice is multiplied out of shared memory (two shared buffers:
// one barrier per slice; with PAIRS, outside SUPPORT, the loop takes the slices two at a time,
// each naming its shared buffer by a literal). With `lower` set only entries with
// col ≤ row + shift are written (the SYRK of assembly and of the trailing updates). An update C ± A·Bᵀ (beta = 1, alpha = ±1)
// accumulates onto ±C itself, as gemm.comp does, so the results match the general kernel's.
// With FUSED_DIAG (potrf_inv_fn.glsl inserted at the marker) the work group of the corner tile
// then factors and inverts the diagonal block there, as gemm.comp's does: the trailing update
// of the blocked Cholesky also factors the next block column's first diagonal block.
// With SUPPORT, a_support / b_support (src/tiled/product.rs's Support) say where A's rows
// (B's) may be nonzero along the depth: 1 from k = i + shift on, 2 up to k = i + shift; a work
// group multiplies only the k-slices that meet both for its rows and columns. (A program of
// its own: the bounds cost the other products' speed on the H200, docs/results.md.)
layout(local_size_x = WG_X, local_size_y = WG_Y) in;

#ifndef SUPPORT
#define SUPPORT 0
#endif

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 1) readonly buffer ABuf { vec4 a4[]; };
layout(std430, binding = 2) readonly buffer BBuf { vec4 b4[]; };
layout(std430, binding = 4) readonly buffer TileBuf { uvec2 tiles[]; };

uniform uint rows;
uniform uint cols;
uniform uint slices;
uniform uint block4;
uniform uint pt;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform float alpha;
uniform float beta;
uniform int lower;
uniform int shift;
uniform uint tile_base;
#if SUPPORT
uniform int a_support;
uniform int a_shift;
uniform int b_support;
uniform int b_shift;
#endif

#ifdef FUSED_DIAG
// The diagonal block at C's corner to factor and invert after the update (diag_n = 0: none),
// its first global column (for the status word) and where its inverse goes.
uniform uint diag_n;
uniform uint diag_column0;
uniform uint diag_inv_off;

// FUSED_DIAG_FUNCTION
#endif

#define THREADS (WG_X * WG_Y)
#define A_VECS (BK * BM / 4u)
#define B_VECS (BK * BN / 4u)
#define A_LOADS ((A_VECS + THREADS - 1u) / THREADS)
#define B_LOADS ((B_VECS + THREADS - 1u) / THREADS)

shared vec4 As[2][BK][BM / 4u];
shared vec4 Bs[2][BK][BN / 4u];

void main() {
    uvec2 tile = tiles[tile_base + gl_WorkGroupID.x];
    uint row0 = tile.x * BM;
    uint col0 = tile.y * BN;
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * WG_X + tx;
    // Invocation (tx, ty) owns rows 4(ty + g·WG_Y) + r and columns 4(tx + h·WG_X) + s.
    vec4 acc[TM][TN / 4];
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

#if SUPPORT
    // The depth slices [s_begin, s_end) where both operands may be nonzero for this tile.
    int k_begin = 0;
    int k_end = int(slices * BK);
    if (a_support == 1) k_begin = max(k_begin, int(row0) + a_shift);
    if (a_support == 2) k_end = min(k_end, int(row0 + BM) + a_shift);
    if (b_support == 1) k_begin = max(k_begin, int(col0) + b_shift);
    if (b_support == 2) k_end = min(k_end, int(col0 + BN) + b_shift);
    uint s_begin = uint(max(k_begin, 0)) / BK;
    uint s_end = uint(max(k_end, 0) + int(BK) - 1) / BK;
#endif

    // Element e of a slice: k-row e / (BM/4), vec4 e % (BM/4) of the tile's rows.
    vec4 pa[A_LOADS];
    vec4 pb[B_LOADS];
    uint ld4 = pt / 4u;
    uint a_base = (row0 / pt) * block4 + (row0 % pt) / 4u;
    uint b_base = (col0 / pt) * block4 + (col0 % pt) / 4u;
// The k-slice from depth K0 into registers, where OK.
#define FETCH(K0, OK) \
    for (uint l = 0u; l < A_LOADS; l++) { \
        uint e = tid + l * THREADS; \
        if (e < A_VECS && (OK)) pa[l] = a4[((K0) + e / (BM / 4u)) * ld4 + a_base + e % (BM / 4u)]; \
    } \
    for (uint l = 0u; l < B_LOADS; l++) { \
        uint e = tid + l * THREADS; \
        if (e < B_VECS && (OK)) pb[l] = b4[((K0) + e / (BN / 4u)) * ld4 + b_base + e % (BN / 4u)]; \
    }
// The registers' slice into shared buffer BUF.
#define STAGE(BUF) \
    for (uint l = 0u; l < A_LOADS; l++) { \
        uint e = tid + l * THREADS; \
        if (e < A_VECS) As[BUF][e / (BM / 4u)][e % (BM / 4u)] = pa[l]; \
    } \
    for (uint l = 0u; l < B_LOADS; l++) { \
        uint e = tid + l * THREADS; \
        if (e < B_VECS) Bs[BUF][e / (BN / 4u)][e % (BN / 4u)] = pb[l]; \
    }
#ifdef REGBUF
// The products of the slice in shared buffer BUF; step kk + 1's operands are read before step
// kk's products (register double buffering; the last step re-reads its own: no branch).
#define MULTIPLY(BUF) { \
        vec4 av[TM / 4]; \
        vec4 bv[TN / 4]; \
        for (int g = 0; g < TM / 4; g++) av[g] = As[BUF][0][ty + uint(g) * WG_Y]; \
        for (int h = 0; h < TN / 4; h++) bv[h] = Bs[BUF][0][tx + uint(h) * WG_X]; \
        for (uint kk = 0u; kk < BK; kk++) { \
            uint kn = min(kk + 1u, BK - 1u); \
            vec4 an[TM / 4]; \
            vec4 bn[TN / 4]; \
            for (int g = 0; g < TM / 4; g++) an[g] = As[BUF][kn][ty + uint(g) * WG_Y]; \
            for (int h = 0; h < TN / 4; h++) bn[h] = Bs[BUF][kn][tx + uint(h) * WG_X]; \
            for (int g = 0; g < TM / 4; g++) \
                for (int r = 0; r < 4; r++) \
                    for (int h = 0; h < TN / 4; h++) acc[g * 4 + r][h] += av[g][r] * bv[h]; \
            av = an; \
            bv = bn; \
        } \
    }
#else
// The products of the slice in shared buffer BUF.
#define MULTIPLY(BUF) \
    for (uint kk = 0u; kk < BK; kk++) { \
        vec4 av[TM / 4]; \
        vec4 bv[TN / 4]; \
        for (int g = 0; g < TM / 4; g++) av[g] = As[BUF][kk][ty + uint(g) * WG_Y]; \
        for (int h = 0; h < TN / 4; h++) bv[h] = Bs[BUF][kk][tx + uint(h) * WG_X]; \
        for (int g = 0; g < TM / 4; g++) \
            for (int r = 0; r < 4; r++) \
                for (int h = 0; h < TN / 4; h++) acc[g * 4 + r][h] += av[g][r] * bv[h]; \
    }
#endif
// Slice S multiplied out of shared buffer BUF; where MORE, the next slice is fetched into
// registers first (its loads in flight during the products) and staged into the other buffer
// after them (last read in the previous slice, before the last barrier).
#define SLICE(S, BUF, MORE) { \
        bool more = (MORE); \
        if (more) { FETCH(((S) + 1u) * BK, true) } \
        MULTIPLY(BUF) \
        if (more) { STAGE(1u - (BUF)) } \
        barrier(); \
    }
// The program on supports keeps the source it was measured with, statement for statement
// (here and in its depth loop below).
#if SUPPORT
    uint kb = s_begin * BK;
    FETCH(kb, s_begin < s_end)
    STAGE(0)
#else
    FETCH(0u, true)
    STAGE(0u)
#endif
    barrier();
#if SUPPORT
    // SLICE's steps with the slice's buffer held in `cur` and the other named as cur ^ 1u: in
    // SLICE's own form NVIDIA's compiler made this program markedly slower (docs/results.md,
    // "Products on supports").
    for (uint s = s_begin; s < s_end; s++) {
        uint cur = (s - s_begin) & 1u;
        bool more = s + 1u < s_end;
        if (more) {
            uint k0 = (s + 1u) * BK;
            FETCH(k0, true)
        }
        MULTIPLY(cur)
        if (more) {
            uint nxt = cur ^ 1u;
            STAGE(nxt)
        }
        barrier();
    }
#elif defined(PAIRS)
    for (uint s = 0u; s < slices; s += 2u) {
        SLICE(s, 0u, s + 1u < slices)
        if (s + 1u < slices) SLICE(s + 1u, 1u, s + 2u < slices)
    }
#else
    for (uint s = 0u; s < slices; s++) SLICE(s, s & 1u, s + 1u < slices)
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
