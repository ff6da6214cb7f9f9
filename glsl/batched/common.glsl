// Shared by the batched kernels (glsl/batched/*.comp): one work group of T invocations per
// problem of order N (T ≥ N, so invocation i < N owns row i of the vectors), the problem's
// matrix in packed lower storage (row i starts at i(i+1)/2) in shared memory, or, where that
// does not fit (GLOBAL_WORK), in a global work buffer of NP floats per problem. The host puts
// `#version`, N, T, KC (observations staged per step), SB (rows per block
// of the triangular solves) and GLOBAL_WORK in front.
layout(local_size_x = T) in;

#define NP (N * (N + 1) / 2)

// The problems of this launch: the group's problem is problem0 + gl_WorkGroupID.x of the
// `count` problems in the buffers (launches are cut to GL_MAX_COMPUTE_WORK_GROUP_COUNT).
uniform uint problem0;
uniform uint count;

layout(std430, binding = 5) writeonly buffer InfoBuf { int info[]; };

#ifdef GLOBAL_WORK
layout(std430, binding = 6) coherent buffer WorkBuf { float work[]; };
uint work_base;
#define S(e) work[work_base + (e)]
#else
shared float S_[NP];
#define S(e) S_[e]
#endif

// The right side, then y, then x (f32), one entry per row.
shared float V[N];

uint problem;
uint t;

// Orders the group's writes to its work storage (shared memory, or the work buffer where
// GLOBAL_WORK) before the barrier's later reads; the kernels write other buffers only at the end.
void sync() {
#ifdef GLOBAL_WORK
    groupMemoryBarrier();
#else
    memoryBarrierShared();
#endif
    barrier();
}

// Sets the group's problem; false (for the whole group) past the last one.
bool start() {
    t = gl_LocalInvocationID.x;
    problem = problem0 + gl_WorkGroupID.x;
#ifdef GLOBAL_WORK
    work_base = problem * uint(NP);
#endif
    return problem < count;
}

uint lower_index(uint i, uint k) {
    return i * (i + 1u) / 2u + k;
}

// Rows are dealt out in pairs (p, N − 1 − p), which together hold N + 1 entries of the
// triangle (and N − 1 − 2j of column j's trailing update), so every pair has the same work;
// G invocations share a pair, taking every G-th entry of each row. No index arithmetic
// beyond products (the former square root per entry is gone).
#define PAIRS ((N + 1) / 2)
#define G (T / PAIRS)

// This invocation's pair p (≥ PAIRS: none), its partner row q = N − 1 − p, and lane h < G.
uint pair_p() { return t / uint(G); }
uint pair_h() { return t % uint(G); }

// Columns j and j + 1's rank-2 update of row i (row start `base`): entries k = j + 2 + h,
// j + 2 + h + G, … ≤ i lose S(i, j)·S(k, j)/d + b_i·b_k/d₂, where b is column j + 1 after
// column j's update (b_k = S(k, j + 1) − S(k, j)·c, c = S(j + 1, j)/d) and d₂ its pivot; the
// row's multipliers in registers and the index of row k stepped without products
// ((k + G)(k + G + 1)/2 − k(k + 1)/2 = G·k + G(G + 1)/2). Returns b_i.
float update_rows2(uint base, uint i, uint j, uint h, float inv, float c, float inv2) {
    float ai = S(base + j);
    float bi = S(base + j + 1u) - ai * c;
    float ma = ai * inv;
    float mb = bi * inv2;
    uint kb = lower_index(j + 2u + h, 0u);
    for (uint k = j + 2u + h; k <= i; k += uint(G)) {
        float ak = S(kb + j);
        float bk = S(kb + j + 1u) - ak * c;
        S(base + k) -= ma * ak + mb * bk;
        kb += uint(G) * k + uint(G * (G + 1) / 2);
    }
    return bi;
}

// The Cholesky factor of S (C's lower triangle) in place, Algorithm 5 two columns at a time:
// columns j and j + 1's rank-2 update of the trailing triangle uses the unscaled columns and
// 1/pivot, so one barrier per two columns suffices (column j + 1 itself, after column j's
// update, is written after that barrier, when no one reads it any more); the columns are
// scaled at the end. Returns LAPACK's INFO: 0, or j + 1 when column j's pivot (before its
// square root) is not positive (or NaN), or −1 when a pivot is +inf (the problem left
// float32's range). Every invocation computes the same pivots, so the early returns are
// uniform over the group.
int factor() {
    uint p = pair_p();
    uint h = pair_h();
    uint q = uint(N) - 1u - p;
    bool owner = p < uint(PAIRS);
    uint base_p = lower_index(p, 0u);
    uint base_q = lower_index(q, 0u);
    for (uint j = 0u; j < uint(N); j += 2u) {
        float piv = S(lower_index(j, j));
        if (!(piv > 0.0)) return int(j) + 1;
        if (isinf(piv)) return -1;
        if (j + 1u == uint(N)) break;
        float inv = 1.0 / piv;
        uint next = lower_index(j + 1u, 0u);
        float c = S(next + j) * inv;
        float piv2 = S(next + j + 1u) - c * S(next + j);
        if (!(piv2 > 0.0)) return int(j) + 2;
        if (isinf(piv2)) return -1;
        float inv2 = 1.0 / piv2;
        // Row p's entries j+2 .. p, then row q's j+2 .. q (q = p only once).
        float bp = 0.0;
        float bq = 0.0;
        if (owner && p > j) bp = update_rows2(base_p, p, j, h, inv, c, inv2);
        if (owner && q > j && q != p) bq = update_rows2(base_q, q, j, h, inv, c, inv2);
        sync();
        if (owner && h == 0u) {
            if (p > j) S(base_p + j + 1u) = bp;
            if (q > j && q != p) S(base_q + j + 1u) = bq;
        }
    }
    sync();
    // Column k scaled by 1/√pivot (V holds them; it is scratch until the solves); the
    // diagonal, read by no one in the scaling, becomes √pivot at once.
    if (t < uint(N)) {
        float pivot = S(lower_index(t, t));
        V[t] = inversesqrt(pivot);
        S(lower_index(t, t)) = sqrt(pivot);
    }
    sync();
    if (owner) {
        uint np = p + 1u;
        uint nq = q != p ? q + 1u : 0u;
        for (uint c = h; c < np + nq; c += uint(G)) {
            uint i = c < np ? p : q;
            uint k = c < np ? c : c - np;
            uint e = (c < np ? base_p : base_q) + k;
            if (k != i) S(e) *= V[k];
        }
    }
    sync();
    return 0;
}

// Rows per block of the triangular solves (SB, from the host: 1 gives one barrier per row).
#define SOLVE_BLOCKS ((N + SB - 1) / SB)

// x = L⁻ᵀ·L⁻¹·v with the factor in S, where v is row t's value (0 past row N − 1); returns row
// t's x (0 past row N − 1). SB rows at a time, one barrier per block: the block's rows publish
// their values through V, every invocation solves the block's SB x SB triangle itself (the
// same values everywhere, read from shared memory as broadcasts), and each row still to come
// subtracts the block's part from its own value, held in a register. V is scratch; the caller
// syncs before V is next written.
float solve(float v) {
    bool row = t < uint(N);
    uint base = lower_index(row ? t : 0u, 0u);
    float mine = 0.0;
    // Forward: L·y = v.
    for (uint s = 0u; s < uint(N); s += uint(SB)) {
        bool in_block = row && t >= s && t < s + uint(SB);
        if (in_block) V[t] = v;
        sync();
        float y[SB];
        // Only the block's rows and the rows after it need the block's values.
        if (row && t >= s) for (int i = 0; i < SB; i++) {
            uint r = s + uint(i);
            float yi = 0.0;
            if (r < uint(N)) {
                uint rb = lower_index(r, 0u);
                yi = V[r];
                for (int j = 0; j < i; j++) yi -= S(rb + s + uint(j)) * y[j];
                yi /= S(rb + r);
            }
            y[i] = yi;
            if (t == r) mine = yi;
        }
        if (row && t >= s + uint(SB)) {
            for (int j = 0; j < SB; j++) v -= S(base + s + uint(j)) * y[j];
        }
        if (in_block) v = mine;
    }
    // Every read of the forward sweep done before the backward sweep writes V.
    sync();
    // Backward: Lᵀ·x = y, the last block first.
    for (uint bb = 0u; bb < uint(SOLVE_BLOCKS); bb++) {
        uint s = (uint(SOLVE_BLOCKS) - 1u - bb) * uint(SB);
        bool in_block = row && t >= s && t < s + uint(SB);
        if (in_block) V[t] = v;
        sync();
        float x[SB];
        // Only the block's rows and the rows before it need the block's values.
        if (row && t < s + uint(SB)) for (int ii = 0; ii < SB; ii++) {
            int i = SB - 1 - ii;
            uint r = s + uint(i);
            float xi = 0.0;
            if (r < uint(N)) {
                xi = V[r];
                for (int j = i + 1; j < SB; j++) {
                    if (s + uint(j) < uint(N)) xi -= S(lower_index(s + uint(j), r)) * x[j];
                }
                xi /= S(lower_index(r, r));
            }
            x[i] = xi;
            if (t == r) mine = xi;
        }
        if (row && t < s) {
            for (int j = 0; j < SB; j++) {
                if (s + uint(j) < uint(N)) v -= S(lower_index(s + uint(j), t)) * x[j];
            }
        }
        if (in_block) v = mine;
    }
    return v;
}
