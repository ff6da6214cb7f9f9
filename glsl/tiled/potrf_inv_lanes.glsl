// The factor-and-invert of one diagonal block of order NB = 32 (n ≤ NB) with a short critical
// path: the same function as potrf_inv_fn.glsl (same signature, same arithmetic, so the same
// results: C = L̃·diag(pivots)·L̃ᵀ, L written over C's lower triangle, L⁻¹ = diag(pivots)^(-1/2)·L̃⁻¹
// to `inv` as a full NB-strided row-major block, `piv` in shared memory, the first pivot that
// is not positive or NaN in the status word), but lane i of ONE subgroup holds row i of the
// block and row i of y = L̃⁻¹ in registers (every index a compile-time constant: the steps are
// unrolled by the macros below, so the arrays never go to local memory) and takes column j's
// entries from the other lanes by subgroupShuffle: no barrier per column, only the shuffles'
// latency (issue 25: the chained Cholesky waits on this factor at every diagonal tile).
// Without subgroup shuffles (llvmpipe), or where a subgroup has fewer than 32 invocations, the
// same steps exchange through shared memory, two barriers per column (as potrf_inv_fn's one).
// For blocks of other orders this file defines nothing (LANES_FACTOR undefined) and the
// caller inserts potrf_inv_fn.glsl after it.
#ifndef PX
#define PX 16
#define PY 16
#endif
#ifndef INV_BINDING
#define INV_BINDING 1
#endif
#if NB == 32 && PX * PY >= 32
#define LANES_FACTOR 1
#if defined(SUBGROUPS) && defined(GL_KHR_shader_subgroup_shuffle)
#define LANES_SHUFFLE 1
#endif

// Rows (index a) and columns (index b) of the block per invocation (the chain's tiles use them).
#define EA (NB / PY)
#define EB (NB / PX)

#ifndef FUSED_DIAG
layout(std430, binding = 0) buffer CBuf { float c[]; };
#endif
layout(std430, binding = INV_BINDING) writeonly buffer InvBuf { float inv[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

shared float piv[NB];
// The shared-memory exchange (no shuffles): column j of S, row j of y.
shared float lanes_col[NB];
shared float lanes_row[NB];

// M(J, K) for K = 0..31 (J fixed) and M(J) for J = 0..31: the unrolled loops.
#define LANES_K(M, J) M(J, 0) M(J, 1) M(J, 2) M(J, 3) M(J, 4) M(J, 5) M(J, 6) M(J, 7) \
    M(J, 8) M(J, 9) M(J, 10) M(J, 11) M(J, 12) M(J, 13) M(J, 14) M(J, 15) M(J, 16) M(J, 17) \
    M(J, 18) M(J, 19) M(J, 20) M(J, 21) M(J, 22) M(J, 23) M(J, 24) M(J, 25) M(J, 26) M(J, 27) \
    M(J, 28) M(J, 29) M(J, 30) M(J, 31)
#define LANES_J(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) \
    M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) \
    M(29) M(30) M(31)

// Row `lane` of the block (k ≤ lane, lane < n) and of the identity outside it; y = identity.
#define LANES_LOAD(J, K) \
    s[K] = (lane < n && K <= lane) ? c[c_off + lane * c_rs + K * c_cs] : (lane == K ? 1.0 : 0.0); \
    y[K] = lane == K ? 1.0 : 0.0;
// Step J's updates: S(lane, K) −= f·S(K, J) for K > J, y(lane, K) −= f·y(J, K) for K ≤ J
// (f = S(lane, J)/pivot below the pivot's row, 0 elsewhere: rows at or above J are final).
#define LANES_UPDATE(J, K) \
    if (K > J) s[K] -= f * LANES_COL(K, J); \
    if (K <= J) y[K] -= f * LANES_ROW(K, J);
// Step J: the pivot, the multiplier, column J of L written (final: S(lane, J) takes no update
// after step J; L(lane, J) = S(lane, J)/sqrt(pivot J), L(J, J) = sqrt(pivot J)), the updates.
// Writing each column as it is done leaves about 33 values live per lane (S's columns still
// to come, y's columns begun), not 96, so the kernels that call this keep their occupancy.
#define LANES_STEP(J) { \
    LANES_PUBLISH(J) \
    float p = LANES_COL(J, J); \
    if (lane == 0u) { \
        piv[J] = p; \
        if (PIVOT_FAILS(p) && failed_column == 0xFFFFFFFFu) { \
            failed_column = column0 + uint(J); \
            failed_pivot = p; \
        } \
    } \
    float f = lane > uint(J) ? s[J] * (1.0 / p) : 0.0; \
    if (lane == uint(J)) own = p; \
    if (lane < n && uint(J) <= lane) \
        c[c_off + lane * c_rs + uint(J) * c_cs] = lane == uint(J) ? sqrt(p) : s[J] / sqrt(p); \
    LANES_K(LANES_UPDATE, J) \
}
// X(lane, K) = y(lane, K)/sqrt(pivot lane), zero above the diagonal.
#define LANES_STORE(J, K) \
    if (lane < n && K < n) inv[inv_off + lane * uint(NB) + K] = K <= lane ? y[K] * ri : 0.0;
#define LANES_BODY \
    float s[NB]; \
    float y[NB]; \
    float own = 1.0; \
    LANES_K(LANES_LOAD, 0) \
    LANES_J(LANES_STEP) \
    float ri = 1.0 / sqrt(own); \
    LANES_K(LANES_STORE, 0)

#define LANES_ROW_OUT(J, K) lanes_row[K] = y[K];
// Through shared memory: the whole work group runs the steps (invocations past 32 on rows
// of the identity beyond the block, writing nothing).
#define LANES_PUBLISH(J) \
    barrier(); \
    if (lane < uint(NB)) lanes_col[lane] = s[J]; \
    if (lane == uint(J)) { LANES_K(LANES_ROW_OUT, J) } \
    barrier();
#define LANES_COL(K, J) lanes_col[K]
#define LANES_ROW(K, J) lanes_row[K]
void factor_block_shared(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off, uint lane) {
    LANES_BODY
}
#undef LANES_PUBLISH
#undef LANES_COL
#undef LANES_ROW

#ifdef LANES_SHUFFLE
// Through shuffles: lane i of the first subgroup (the others wait at the caller's barrier).
#define LANES_PUBLISH(J)
#define LANES_COL(K, J) subgroupShuffle(s[J], uint(K))
#define LANES_ROW(K, J) subgroupShuffle(y[K], uint(J))
void factor_block_lanes(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off, uint lane) {
    LANES_BODY
}
#endif

void factor_block(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off) {
    uint tid = gl_LocalInvocationID.y * uint(PX) + gl_LocalInvocationID.x;
#ifdef LANES_SHUFFLE
    if (gl_SubgroupSize >= 32u) {
        if (gl_SubgroupID == 0u && gl_SubgroupInvocationID < 32u)
            factor_block_lanes(n, c_off, c_rs, c_cs, column0, inv_off, gl_SubgroupInvocationID);
        barrier();
        return;
    }
#endif
    factor_block_shared(n, c_off, c_rs, c_cs, column0, inv_off, tid);
    barrier();
}
#endif
