// Shared by the batched kernels (glsl/batched/*.comp): one work group of T invocations per
// problem of order N (T ≥ N, so invocation i < N owns row i of the vectors), the problem's
// matrix in packed lower storage (row i starts at i(i+1)/2) in shared memory, or, where that
// does not fit (GLOBAL_WORK), in a global work buffer of NP floats per problem. The host puts
// `#version`, N, T, KC (observations staged per step) and GLOBAL_WORK in front.
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

// Orders every write of the group (shared and buffer) before the barrier's later reads.
void sync() {
    groupMemoryBarrier();
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

// The Cholesky factor of S (C's lower triangle) in place, Algorithm 5 column by column: column
// j's rank-1 update of the trailing triangle uses the unscaled column and 1/pivot, so one
// barrier per column suffices; the columns are scaled at the end. Returns LAPACK's INFO:
// 0, or j + 1 when column j's pivot (before its square root) is not positive (or NaN), or −1
// when a pivot is +inf (the problem left float32's range). Every invocation reads the same
// pivot, so the early return is uniform over the group.
int factor() {
    uint p = pair_p();
    uint h = pair_h();
    uint q = uint(N) - 1u - p;
    bool owner = p < uint(PAIRS);
    for (uint j = 0u; j < uint(N); j++) {
        float piv = S(lower_index(j, j));
        if (!(piv > 0.0)) return int(j) + 1;
        if (isinf(piv)) return -1;
        float inv = 1.0 / piv;
        if (owner) {
            // Row p's entries j+1 .. p, then row q's j+1 .. q (q = p only once).
            uint np = p > j ? p - j : 0u;
            uint nq = (q > j && q != p) ? q - j : 0u;
            for (uint c = h; c < np + nq; c += uint(G)) {
                uint i = c < np ? p : q;
                uint k = j + 1u + (c < np ? c : c - np);
                S(lower_index(i, k)) -= S(lower_index(i, j)) * inv * S(lower_index(k, j));
            }
        }
        sync();
    }
    if (owner) {
        uint np = p + 1u;
        uint nq = q != p ? q + 1u : 0u;
        for (uint c = h; c < np + nq; c += uint(G)) {
            uint i = c < np ? p : q;
            uint k = c < np ? c : c - np;
            if (k != i) S(lower_index(i, k)) /= sqrt(S(lower_index(k, k)));
        }
    }
    sync();
    if (t < uint(N)) S(lower_index(t, t)) = sqrt(S(lower_index(t, t)));
    sync();
    return 0;
}

// V ← L⁻ᵀ·L⁻¹·V: the forward and the backward solve with the factor in S, one barrier per
// column (invocation i updates its own row; the column's value is read unscaled).
void solve_in_place() {
    for (uint j = 0u; j < uint(N); j++) {
        float yj = V[j] / S(lower_index(j, j));
        if (t > j && t < uint(N)) V[t] -= S(lower_index(t, j)) * yj;
        sync();
    }
    if (t < uint(N)) V[t] /= S(lower_index(t, t));
    sync();
    for (uint jj = 0u; jj < uint(N); jj++) {
        uint j = uint(N) - 1u - jj;
        float xj = V[j] / S(lower_index(j, j));
        if (t < j) V[t] -= S(lower_index(j, t)) * xj;
        sync();
    }
    if (t < uint(N)) V[t] /= S(lower_index(t, t));
    sync();
}
