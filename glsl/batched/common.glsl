// Shared by the batched kernels (glsl/batched/*.comp): P problems per work group, T
// invocations per problem of order N (T ≥ N, so invocation i < N owns row i of the vectors;
// the group's invocations sub·T .. sub·T + T − 1 hold its problem `sub`), each problem's
// matrix in packed lower storage (row i starts at i(i+1)/2) in shared memory, or, where that
// does not fit (GLOBAL_WORK), in a global work buffer of NP floats per problem. The host puts
// `#version`, N, T, P, GROUP (T·P as a literal), KC (observations staged per step), SB (rows
// per block of the triangular solves), GLOBAL_WORK (only with P = 1), VEC4_STAGE and
// PAIR_ROWS (observations.glsl) in front, and INVERSE_SOLVE (with INVERSE_GLOBAL where L⁻¹
// lives in the work buffer) where the solves are products with L⁻¹. Barriers span the whole group, so no invocation
// leaves early: every problem runs every loop (a failed one on its garbage), and only the
// writes of results depend on the problem.
layout(local_size_x = GROUP) in;

#define NP (N * (N + 1) / 2)

// The problems of this launch: the group's problems are problem0 + P·gl_WorkGroupID.x + sub
// of the `count` problems in the buffers (launches are cut to GL_MAX_COMPUTE_WORK_GROUP_COUNT).
uniform uint problem0;
uniform uint count;

layout(std430, binding = 5) writeonly buffer InfoBuf { int info[]; };

#if defined(GLOBAL_WORK) || defined(INVERSE_GLOBAL)
layout(std430, binding = 6) coherent buffer WorkBuf { float work[]; };
#endif
#ifdef GLOBAL_WORK
uint work_base;
#define S(e) work[work_base + (e)]
#else
shared float S_[P][NP];
#define S(e) S_[sub][e]
#endif

#ifdef INVERSE_SOLVE
// L⁻¹ (the plan's TriangularSolves::Inverse) in packed lower storage beside the factor: built
// by factor() in the same sweep as L (as glsl/tiled/potrf_inv_fn.glsl does for the tiled
// path's diagonal blocks), so each solve is two products, one barrier each. In the work buffer
// after the factors' triangles (if there) where it does not fit in shared memory, by slot.
#ifdef INVERSE_GLOBAL
uint inverse_base;
#define Y(e) work[inverse_base + (e)]
#else
shared float Y_[P][NP];
#define Y(e) Y_[sub][e]
#endif
// L⁻¹·b, read by the product with L⁻ᵀ.
shared float W_[P][N];
#define W W_[sub]
#endif

// The right side, then y, then x (f32), one entry per row.
shared float V_[P][N];
#define V V_[sub]

uint problem;
// The invocation's index within its problem, and its problem's slot in the group.
uint t;
uint sub;
// Whether the slot holds a problem: the last group of a batch may have empty slots, which
// compute the batch's last problem again (so their barriers are met) but write nothing.
bool occupied;

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

// Sets the invocation's problem (an empty slot: the last one, with `occupied` false).
void start() {
    t = gl_LocalInvocationID.x % uint(T);
    sub = gl_LocalInvocationID.x / uint(T);
    problem = problem0 + gl_WorkGroupID.x * uint(P) + sub;
#ifdef INVERSE_GLOBAL
    // By slot, not problem: an empty slot's L⁻¹ must not race its problem's (the buffer
    // holds the problems rounded up to P).
#ifdef GLOBAL_WORK
    inverse_base = (count + problem) * uint(NP);
#else
    inverse_base = problem * uint(NP);
#endif
#endif
    occupied = problem < count;
    if (!occupied) problem = count - 1u;
#ifdef GLOBAL_WORK
    work_base = problem * uint(NP);
#endif
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

// The pivot block of columns j .. j + 3 (rows past N − 1 absent), eliminated as Algorithm 5
// would column by column, without square roots: d[m] the pivots, c[m][l] (l < m) the
// multipliers u_l(j + m)/d[l], where u_l(x) is row x's entry in column j + l after the
// updates of columns j .. j + l − 1.
struct PivotBlock {
    vec4 d;
    float c10, c20, c21, c30, c31, c32;
};

// Row x's entries in columns j .. j + 3 after the block's own updates (u_0 .. u_3), from its
// row start `base`; columns past x (or past N − 1) give 0.
vec4 eliminated(uint base, uint x, uint j, PivotBlock b) {
    float u0 = S(base + j);
    float u1 = j + 1u <= x ? S(base + j + 1u) - u0 * b.c10 : 0.0;
    float u2 = j + 2u <= x ? S(base + j + 2u) - u0 * b.c20 - u1 * b.c21 : 0.0;
    float u3 = j + 3u <= x ? S(base + j + 3u) - u0 * b.c30 - u1 * b.c31 - u2 * b.c32 : 0.0;
    return vec4(u0, u1, u2, u3);
}

// Columns j .. j + 3's rank-4 update of row i (row start `base`): entries k = j + 4 + h,
// j + 4 + h + G, … ≤ i lose Σ_l u_l(i)·u_l(k)/d[l], the row's multipliers in registers and the
// index of row k stepped without products ((k + G)(k + G + 1)/2 − k(k + 1)/2 = G·k +
// G(G + 1)/2). Returns u(i), whose columns j + 1 .. j + 3 are written after the barrier.
vec4 update_rows4(uint base, uint i, uint j, uint h, PivotBlock b, vec4 inv) {
    vec4 ui = eliminated(base, i, j, b);
    vec4 m = ui * inv;
    uint kb = lower_index(j + 4u + h, 0u);
    for (uint k = j + 4u + h; k <= i; k += uint(G)) {
        S(base + k) -= dot(m, eliminated(kb, k, j, b));
        kb += uint(G) * k + uint(G * (G + 1) / 2);
    }
    return ui;
}

// Whether row t's pivot says C is singular to working precision, after factor(): L(t,t)² at
// or below SINGULAR_RATIO (from the host for the solves: the single least squares' pivot
// tolerance, 32·2⁻²⁴)
// times `diag`, C(t,t) read before the factor. A pivot of an exactly singular C is rounding
// noise of a few 2⁻²⁴·C(j,j) and may come out positive, so the factor passes and x is noise;
// the solves give such a problem INFO N + 1 (LAPACK's dposvx: rcond below working precision).
#ifdef SINGULAR_RATIO
bool singular_pivot(float diag) {
    if (t >= uint(N)) return false;
    float l = S(lower_index(t, t));
    return !(l * l > float(SINGULAR_RATIO) * diag);
}
#endif

// Checks column j + m's pivot: 0 when it passes, else LAPACK's INFO (j + m + 1 when not
// positive or NaN, −1 when +inf: the problem left float32's range).
int pivot_status(float piv, uint col) {
    if (PIVOT_FAILS(piv)) return int(col) + 1;
    if (isinf(piv)) return -1;
    return 0;
}

#ifdef INVERSE_SOLVE
// Row r of Y = L̃⁻¹ (L̃ the unit lower factor of the elimination) at column k as it stands
// before the pivot block j .. j + 3 that holds row r: stored for k < j (set by the blocks
// before), else the identity's (nothing stored there yet); 0 past row N − 1.
float y_old(uint r, uint k, uint j) {
    if (r >= uint(N)) return 0.0;
    return k < j ? Y(lower_index(r, k)) : (k == r ? 1.0 : 0.0);
}

// Column k of the pivot block's rows j .. j + 3 of Y after the block's own elimination (the
// same multipliers as eliminated()), from the rows before it: nobody writes them in the step.
vec4 block_inverse(uint j, uint k, PivotBlock b) {
    vec4 y;
    y.x = y_old(j, k, j);
    y.y = y_old(j + 1u, k, j) - b.c10 * y.x;
    y.z = y_old(j + 2u, k, j) - b.c20 * y.x - b.c21 * y.y;
    y.w = y_old(j + 3u, k, j) - b.c30 * y.x - b.c31 * y.y - b.c32 * y.z;
    return y;
}

// Row i (below the pivot block) of Y loses Σ_l m_l·(block row j + l), as row i of S does:
// entries k = h, h + G, … < j + 4, those of the block's columns set (they were 0). Only row
// i's own lanes touch its row of Y in the step.
void update_inverse_row(uint i, uint j, uint h, PivotBlock b, vec4 m) {
    uint base = lower_index(i, 0u);
    for (uint k = h; k < j + 4u; k += uint(G)) {
        float y = dot(m, block_inverse(j, k, b));
        Y(base + k) = k < j ? Y(base + k) - y : -y;
    }
}
#endif

// The Cholesky factor of S (C's lower triangle) in place, Algorithm 5 four columns at a time:
// every invocation eliminates the 4 x 4 pivot block itself (the same values everywhere), then
// columns j .. j + 3's rank-4 update of the trailing triangle uses the unscaled columns and
// 1/pivot, so one barrier per four columns suffices (columns j + 1 .. j + 3 themselves, after
// the block's updates, are written after that barrier, when no one reads them any more); the
// columns are scaled at the end. Returns LAPACK's INFO: 0, or j + 1 when column j's pivot
// (before its square root) is not positive (or NaN), or −1 when a pivot is +inf (the problem
// left float32's range). The first failing pivot's status is kept and the elimination goes
// on (on garbage) to the end, so every problem of the group meets every barrier.
int factor() {
    int failed = 0;
    uint p = pair_p();
    uint h = pair_h();
    uint q = uint(N) - 1u - p;
    bool owner = p < uint(PAIRS);
    uint base_p = lower_index(p, 0u);
    uint base_q = lower_index(q, 0u);
    for (uint j = 0u; j < uint(N); j += 4u) {
        PivotBlock b;
        b.c10 = 0.0;
        b.c20 = 0.0;
        b.c21 = 0.0;
        b.c30 = 0.0;
        b.c31 = 0.0;
        b.c32 = 0.0;
        b.d = vec4(1.0);
        vec4 inv = vec4(0.0);
        // Row j + m of the block eliminated by the columns before it, its pivot checked.
        b.d.x = S(lower_index(j, j));
        if (failed == 0) failed = pivot_status(b.d.x, j);
        inv.x = 1.0 / b.d.x;
        if (j + 1u < uint(N)) {
            vec4 u = eliminated(lower_index(j + 1u, 0u), j + 1u, j, b);
            b.c10 = u.x * inv.x;
            b.d.y = u.y - u.x * b.c10;
            if (failed == 0) failed = pivot_status(b.d.y, j + 1u);
            inv.y = 1.0 / b.d.y;
        }
        if (j + 2u < uint(N)) {
            vec4 u = eliminated(lower_index(j + 2u, 0u), j + 2u, j, b);
            b.c20 = u.x * inv.x;
            b.c21 = u.y * inv.y;
            b.d.z = u.z - u.x * b.c20 - u.y * b.c21;
            if (failed == 0) failed = pivot_status(b.d.z, j + 2u);
            inv.z = 1.0 / b.d.z;
        }
        if (j + 3u < uint(N)) {
            vec4 u = eliminated(lower_index(j + 3u, 0u), j + 3u, j, b);
            b.c30 = u.x * inv.x;
            b.c31 = u.y * inv.y;
            b.c32 = u.z * inv.z;
            b.d.w = u.w - u.x * b.c30 - u.y * b.c31 - u.z * b.c32;
            if (failed == 0) failed = pivot_status(b.d.w, j + 3u);
            inv.w = 1.0 / b.d.w;
        }
        // Row p's entries j+4 .. p, then row q's j+4 .. q (q = p only once).
        vec4 up = vec4(0.0);
        vec4 uq = vec4(0.0);
        if (owner && p > j) up = update_rows4(base_p, p, j, h, b, inv);
        if (owner && q > j && q != p) uq = update_rows4(base_q, q, j, h, b, inv);
#ifdef INVERSE_SOLVE
        if (owner && p > j + 3u) update_inverse_row(p, j, h, b, up * inv);
        if (owner && q > j + 3u && q != p) update_inverse_row(q, j, h, b, uq * inv);
#endif
        sync();
#ifdef INVERSE_SOLVE
        // The block's rows j + 1 .. j + 3 of Y after its own elimination, column k by one
        // invocation for all three (the step's reads of them are done; the next step reads
        // only rows past j + 3).
        for (uint k = t; k < j + 3u; k += uint(T)) {
            vec4 y = block_inverse(j, k, b);
            if (j + 1u < uint(N) && k < j + 1u) Y(lower_index(j + 1u, k)) = y.y;
            if (j + 2u < uint(N) && k < j + 2u) Y(lower_index(j + 2u, k)) = y.z;
            if (j + 3u < uint(N) && k < j + 3u) Y(lower_index(j + 3u, k)) = y.w;
        }
#endif
        if (owner && h == 0u) {
            if (p > j) {
                if (j + 1u <= p) S(base_p + j + 1u) = up.y;
                if (j + 2u <= p) S(base_p + j + 2u) = up.z;
                if (j + 3u <= p) S(base_p + j + 3u) = up.w;
            }
            if (q > j && q != p) {
                if (j + 1u <= q) S(base_q + j + 1u) = uq.y;
                if (j + 2u <= q) S(base_q + j + 2u) = uq.z;
                if (j + 3u <= q) S(base_q + j + 3u) = uq.w;
            }
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
#ifdef INVERSE_SOLVE
            // L⁻¹ = diag(pivots)^(-1/2)·L̃⁻¹: row i scaled, its diagonal 1/√pivot.
            Y(e) = k == i ? V[i] : Y(e) * V[i];
#endif
        }
    }
    sync();
    return failed;
}

// Rows per block of the triangular solves (SB, from the host: 1 gives one barrier per row).
#define SOLVE_BLOCKS ((N + SB - 1) / SB)

// x = L⁻ᵀ·L⁻¹·v with the factor in S, where v is row t's value (0 past row N − 1); returns row
// t's x (0 past row N − 1). SB rows at a time, one barrier per block: the block's rows publish
// their values through V, every invocation solves the block's SB x SB triangle itself (the
// same values everywhere, read from shared memory as broadcasts), and each row still to come
// subtracts the block's part from its own value, held in a register. V is scratch; the caller
// syncs before V is next written.
#ifdef INVERSE_SOLVE
// x = L⁻ᵀ·(L⁻¹·v) with L⁻¹ in Y, where v is row t's value (0 past row N − 1); returns row t's
// x (0 past row N − 1): two products, one barrier each, rather than one barrier per block of
// rows. V and W are scratch; the caller syncs before V is next written.
float solve(float v) {
    bool row = t < uint(N);
    if (row) V[t] = v;
    sync();
    if (row) {
        uint base = lower_index(t, 0u);
        float y = 0.0;
        for (uint k = 0u; k <= t; k++) y = fma(Y(base + k), V[k], y);
        W[t] = y;
    }
    sync();
    float x = 0.0;
    if (row) {
        for (uint i = t; i < uint(N); i++) x = fma(Y(lower_index(i, t)), W[i], x);
    }
    return x;
}
#else
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
#endif
