// The double-precision product of the sign and Lyapunov iterations' checks and polish:
// C = alpha·A·B + beta·D + gamma·I over strided views (entry (i, k) of A at
// a_off + i·a_rs + k·a_cs, likewise B, C, D), for k in k0 .. k1 of this launch (the host cuts
// the depth so no invocation loops past the software renderers' limit; later launches pass
// D = C, beta = 1, gamma = 0). Tile sizes come as #defines (src/inverse/kernels/double.rs,
// DoubleTile): BM x BN entries of C per work group of WG_X x WG_Y invocations, each holding
// TM x TN of them in registers (rows ty + WG_Y·u, columns tx + WG_X·v), depth slices of BK
// through shared memory. Each slice is staged with consecutive invocations on consecutive
// addresses whichever stride of the operand is 1 (a uniform choice), fetched into registers
// while the slice before it is multiplied out of the other of two shared buffers (one barrier
// per slice); entry (k, r) of a shared slice sits at column r ^ swizzle(k), so the depth-major
// stores of a half-warp fall on distinct 64-bit banks (and the row reads stay on 16 distinct
// ones) without padding: both buffers of the largest tile then fill GL's least maximum of
// 32 KiB of shared memory (llvmpipe's). Bounds are checked only in tiles over
// C's edge and the slice over the depth's end. With `sums`, each work group also writes Σ C²
// over its tile to partial[group] (a Frobenius norm without reading C back). With `lower`,
// only C's lower triangle is wanted: tiles wholly above its diagonal return at once (a zero
// sum). The scalars come as their two 32-bit halves (packDouble2x32). With PAIRS, slices are
// held as pairs of adjacent rows (columns) and each invocation owns pairs of them, so its reads
// of a slice are 16-byte loads, half as many; a pair's place in its row of the slice is XORed
// with the depth (mod 8), which keeps both the stores and the reads on distinct banks.
layout(local_size_x = WG_X, local_size_y = WG_Y) in;

layout(std430, binding = 0) buffer CBuf { double c[]; };
layout(std430, binding = 1) readonly buffer ABuf { double a[]; };
layout(std430, binding = 2) readonly buffer BBuf { double b[]; };
layout(std430, binding = 3) readonly buffer DBuf { double d[]; };
layout(std430, binding = 4) writeonly buffer PartialBuf { double partial[]; };

uniform uint rows;
uniform uint cols;
uniform uint k0;
uniform uint k1;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint a_off;
uniform uint a_rs;
uniform uint a_cs;
uniform uint b_off;
uniform uint b_rs;
uniform uint b_cs;
uniform uint d_off;
uniform uint d_rs;
uniform uint d_cs;
uniform uint alpha_lo;
uniform uint alpha_hi;
uniform uint beta_lo;
uniform uint beta_hi;
uniform uint gamma_lo;
uniform uint gamma_hi;
uniform int sums;
uniform int lower;

#define THREADS (WG_X * WG_Y)

#if PAIRS
// Entries (pairs) of a slice each invocation stages (the host keeps these whole).
#define A_LOADS (BM / 2u * BK / THREADS)
#define B_LOADS (BK * BN / 2u / THREADS)
// Row u and column v of an invocation's registers within the tile.
#define ROW(t, u) (2u * ((t) + WG_Y * ((u) >> 1)) + ((u) & 1u))
#define COL(t, v) (2u * ((t) + WG_X * ((v) >> 1)) + ((v) & 1u))

shared dvec2 As[2][BK][BM / 2u];
shared dvec2 Bs[2][BK][BN / 2u];

dvec2 pa[A_LOADS];
dvec2 pb[B_LOADS];

// Where pair r of depth k sits in its row of a slice: a permutation of each aligned 8 pairs
// (128 bytes), distinct over 8 consecutive depths or 8 consecutive pairs.
uint swizzle(uint k, uint r) {
    return r ^ (k & 7u);
}

// Staged pair e of A's slice: (row pair, depth), consecutive invocations on consecutive
// addresses as below.
uvec2 a_entry(uint e) {
    return a_cs == 1u ? uvec2(e / BK, e % BK) : uvec2(e % (BM / 2u), e / (BM / 2u));
}

// Staged pair e of B's slice: (depth, column pair).
uvec2 b_entry(uint e) {
    return b_cs == 1u ? uvec2(e / (BN / 2u), e % (BN / 2u)) : uvec2(e % BK, e / BK);
}

double a_at(uint i, uint k, bool check) {
    if (check && (i >= rows || k >= k1)) return 0.0LF;
    return a[a_off + i * a_rs + k * a_cs];
}

double b_at(uint k, uint j, bool check) {
    if (check && (j >= cols || k >= k1)) return 0.0LF;
    return b[b_off + k * b_rs + j * b_cs];
}

void fetch(uint tid, uint row0, uint col0, uint ks, bool check) {
    for (uint l = 0u; l < A_LOADS; ++l) {
        uvec2 rk = a_entry(tid + l * THREADS);
        uint i = row0 + 2u * rk.x;
        uint k = ks + rk.y;
        pa[l] = dvec2(a_at(i, k, check), a_at(i + 1u, k, check));
    }
    for (uint l = 0u; l < B_LOADS; ++l) {
        uvec2 kj = b_entry(tid + l * THREADS);
        uint k = ks + kj.x;
        uint j = col0 + 2u * kj.y;
        pb[l] = dvec2(b_at(k, j, check), b_at(k, j + 1u, check));
    }
}

void stage(uint tid, uint buf) {
    for (uint l = 0u; l < A_LOADS; ++l) {
        uvec2 rk = a_entry(tid + l * THREADS);
        As[buf][rk.y][swizzle(rk.y, rk.x)] = pa[l];
    }
    for (uint l = 0u; l < B_LOADS; ++l) {
        uvec2 kj = b_entry(tid + l * THREADS);
        Bs[buf][kj.x][swizzle(kj.x, kj.y)] = pb[l];
    }
}

// acc += the slice's depth kk (buffer cur).
#define MULTIPLY(cur, kk)                                                                \
    {                                                                                   \
        dvec2 x[TM / 2u];                                                               \
        dvec2 y[TN / 2u];                                                               \
        for (uint g = 0u; g < TM / 2u; ++g) x[g] = As[cur][kk][swizzle(kk, ty + WG_Y * g)]; \
        for (uint h = 0u; h < TN / 2u; ++h) y[h] = Bs[cur][kk][swizzle(kk, tx + WG_X * h)]; \
        for (uint u = 0u; u < TM; ++u)                                                  \
            for (uint v = 0u; v < TN; ++v)                                              \
                acc[u][v] = fma(x[u >> 1][u & 1u], y[v >> 1][v & 1u], acc[u][v]);       \
    }
// The tile's sum's scratch entry t (As is free after the last slice's barrier).
#define SUM_AT(t) As[0][(t) / (BM / 2u)][(t) % (BM / 2u)].x
#else
// Entries of a slice each invocation stages (the host keeps these whole).
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BK * BN / THREADS)

shared double As[2][BK][BM];
shared double Bs[2][BK][BN];

// The next slice, in registers while the current one is multiplied.
double pa[A_LOADS];
double pb[B_LOADS];

// The column of row k where entry (k, r) of a slice is stored. A half-warp's depth-major
// stores cover the BK depths of 16/BK consecutive columns; XORing the low four bits of the
// column with (k·16/BK) mod 16 puts them on 16 distinct 64-bit banks. Within each aligned 16
// columns this is a permutation, so reads of 16 consecutive columns still hit 16 banks.
uint swizzle(uint k, uint r) {
    return r ^ ((k * (16u / BK)) & 15u);
}

// Staged entry e of A's slice: (row, depth) within the tile. Depth-major where A's depth is
// contiguous (a_cs = 1: A plain), row-major otherwise (A transposed: a_rs = 1).
uvec2 a_entry(uint e) {
    return a_cs == 1u ? uvec2(e / BK, e % BK) : uvec2(e % BM, e / BM);
}

// Staged entry e of B's slice: (depth, column) within the tile. Column-major where B's
// columns are contiguous (b_cs = 1: B plain), depth-major otherwise (B transposed: b_rs = 1).
uvec2 b_entry(uint e) {
    return b_cs == 1u ? uvec2(e / BN, e % BN) : uvec2(e % BK, e / BK);
}

// Loads the slice at depth ks into pa and pb; `check`: some of it may lie outside A, B or
// the launch's depth (read as zeros).
void fetch(uint tid, uint row0, uint col0, uint ks, bool check) {
    for (uint l = 0u; l < A_LOADS; ++l) {
        uvec2 rk = a_entry(tid + l * THREADS);
        uint i = row0 + rk.x;
        uint k = ks + rk.y;
        if (check && (i >= rows || k >= k1)) pa[l] = 0.0LF;
        else pa[l] = a[a_off + i * a_rs + k * a_cs];
    }
    for (uint l = 0u; l < B_LOADS; ++l) {
        uvec2 kj = b_entry(tid + l * THREADS);
        uint k = ks + kj.x;
        uint j = col0 + kj.y;
        if (check && (j >= cols || k >= k1)) pb[l] = 0.0LF;
        else pb[l] = b[b_off + k * b_rs + j * b_cs];
    }
}

// Stores pa and pb into shared buffer `buf`.
void stage(uint tid, uint buf) {
    for (uint l = 0u; l < A_LOADS; ++l) {
        uvec2 rk = a_entry(tid + l * THREADS);
        As[buf][rk.y][swizzle(rk.y, rk.x)] = pa[l];
    }
    for (uint l = 0u; l < B_LOADS; ++l) {
        uvec2 kj = b_entry(tid + l * THREADS);
        Bs[buf][kj.x][swizzle(kj.x, kj.y)] = pb[l];
    }
}

#define ROW(t, u) ((t) + WG_Y * (u))
#define COL(t, v) ((t) + WG_X * (v))
#define MULTIPLY(cur, kk)                                                                \
    {                                                                                   \
        double x[TM];                                                                   \
        double y[TN];                                                                   \
        /* swizzle(kk, t + 16m) = swizzle(kk, t) + 16m (it changes the low four bits     \
           only), so with WG_X and WG_Y multiples of 16 each row needs one XOR. */       \
        uint xa = swizzle(kk, ty);                                                      \
        uint xb = swizzle(kk, tx);                                                      \
        for (uint u = 0u; u < TM; ++u) x[u] = As[cur][kk][xa + WG_Y * u];               \
        for (uint v = 0u; v < TN; ++v) y[v] = Bs[cur][kk][xb + WG_X * v];               \
        for (uint u = 0u; u < TM; ++u)                                                  \
            for (uint v = 0u; v < TN; ++v) acc[u][v] = fma(x[u], y[v], acc[u][v]);      \
    }
#define SUM_AT(t) As[0][(t) / BM][(t) % BM]
#endif

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * WG_X + tx;
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    if (lower != 0 && col0 >= row0 + BM) {
        if (sums != 0 && tid == 0u) partial[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = 0.0LF;
        return;
    }
    // No bounds checks in tiles wholly inside C (uniform over the work group).
    bool edge = row0 + BM > rows || col0 + BN > cols;
    double acc[TM][TN];
    for (uint u = 0u; u < TM; ++u)
        for (uint v = 0u; v < TN; ++v) acc[u][v] = 0.0LF;
    uint slices = (k1 - k0 + BK - 1u) / BK;
    fetch(tid, row0, col0, k0, edge || k0 + BK > k1);
    stage(tid, 0u);
    barrier();
    for (uint s = 0u; s < slices; ++s) {
        uint cur = s & 1u;
        bool more = s + 1u < slices;
        if (more) {
            uint ks = k0 + (s + 1u) * BK;
            fetch(tid, row0, col0, ks, edge || ks + BK > k1);
        }
        for (uint kk = 0u; kk < BK; ++kk) MULTIPLY(cur, kk)
        // The other buffer was last read in the slice before, ahead of the last barrier.
        if (more) stage(tid, cur ^ 1u);
        barrier();
    }
    double al = packDouble2x32(uvec2(alpha_lo, alpha_hi));
    double be = packDouble2x32(uvec2(beta_lo, beta_hi));
    double ga = packDouble2x32(uvec2(gamma_lo, gamma_hi));
    double s = 0.0LF;
    for (uint u = 0u; u < TM; ++u) {
        uint i = row0 + ROW(ty, u);
        for (uint v = 0u; v < TN; ++v) {
            uint j = col0 + COL(tx, v);
            if (edge && (i >= rows || j >= cols)) continue;
            double val = al * acc[u][v];
            if (be != 0.0LF) val += be * d[d_off + i * d_rs + j * d_cs];
            if (i == j) val += ga;
            c[c_off + i * c_rs + j * c_cs] = val;
            s += val * val;
        }
    }
    if (sums == 0) return;
    // The tile's sum through As (free since the last slice's barrier; it holds ≥ THREADS).
    SUM_AT(tid) = s;
    barrier();
    for (uint h = THREADS / 2u; h > 0u; h >>= 1) {
        if (tid < h) SUM_AT(tid) += SUM_AT(tid + h);
        barrier();
    }
    if (tid == 0u) partial[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = SUM_AT(0u);
}
