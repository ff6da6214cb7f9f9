// Triangular solves of one right side of several columns (up to 8·CV) in a single launch each
// way: trsv_chain.comp's chain of blocks, each work group solving its block row for every
// column at once, so each tile of L is read once per solve rather than once per column, and a
// solve takes as many work groups as the factor has diagonal blocks of order NB.
//
// L·Y = B (forward) or Lᵀ·X = Y (backward), B row-major with `cols` columns, row i at
// i·x_row, X written over it, the factor's diagonal blocks of order NB already inverted
// (trtri_blocks.comp). Work group g takes a ticket (the order groups start in) and solves
// block row I = ticket (forward; the last one first backward): S = B_I − Σ_J M_IJ·X_J over
// the blocks J solved before it, taken as each is published, then X_I = M_II⁻¹·S, written and
// published (ready[I]); M = L forward, Lᵀ backward. A group waits only for groups that took
// earlier tickets, so they are running or done: the chain always progresses (the argument of
// decoupled look-back). Each tile goes through registers (fetched before the wait for the
// block it multiplies) and shared memory in slices of KC columns; invocation t keeps row
// t mod NB of 4·CV columns of the sums (CV vec4s), so no reduction across invocations is
// needed.
//
// Storage as trsv_chain.comp: L(i, j), i ≥ j, at off_v + (i − i_v)·rs_v + (j − j_v)·cs_v in
// view v (view 0 rows below n1, view 1 rows from n1 and columns below, view 2 both from n1).
//
// A group whose wait outlasts `spin_limit` polls (software renderers end long loops) gives up:
// it sets `gave_up` and publishes nothing, and the host solves again the blocked way.
layout(local_size_x = 256) in;

// RP columns in xs's rows (two invocations' 4·CV each), XS vec4s a row (one of padding);
// slices of KC columns, so that ls and xs fit in 32 KiB of shared memory (llvmpipe's limit).
#define RP (8u * CV)
#define XS (2u * CV + 1u)
#define KC 16u
#define SLICES (NB / KC)
#define LOADS (NB * KC / 256u)

layout(std430, binding = 0) readonly buffer LBuf { float l[]; };
layout(std430, binding = 1) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 2) coherent buffer XBuf { float x[]; };
layout(std430, binding = 3) coherent buffer Sync { uint ticket; uint gave_up; uint ready[]; };

uniform uint cols;
uniform uint x_row;
uniform uint m;
uniform uint n1;
uniform uint blocks1;
uniform uint blocks;
uniform uint transposed;
uniform uint spin_limit;
uniform uint off0;
uniform uint rs0;
uniform uint cs0;
uniform uint off1;
uniform uint rs1;
uniform uint cs1;
uniform uint off2;
uniform uint rs2;
uniform uint cs2;

shared float ls[NB][KC + 1u];
shared vec4 xs[NB * XS];
shared uint order_shared;
shared uint stop_shared;

uint block_start(uint b) { return b < blocks1 ? b * NB : n1 + (b - blocks1) * NB; }
uint block_size(uint b) {
    uint end = b < blocks1 ? n1 : m;
    return min(NB, end - block_start(b));
}

// The address of L(i0, j0), the first entry of the tile of rows i0.. and columns j0.., and
// its row and column strides.
uvec3 tile(uint i0, uint j0) {
    if (i0 < n1) return uvec3(off0 + i0 * rs0 + j0 * cs0, rs0, cs0);
    if (j0 < n1) return uvec3(off1 + (i0 - n1) * rs1 + j0 * cs1, rs1, cs1);
    return uvec3(off2 + (i0 - n1) * rs2 + (j0 - n1) * cs2, rs2, cs2);
}

// The strided addresses of tile M_IJ: L(sI.., sJ..) forward, its transpose L(sJ.., sI..)ᵀ
// backward.
uvec3 m_tile(uint sI, uint sJ) {
    if (transposed == 0u) return tile(sI, sJ);
    uvec3 a = tile(sJ, sI);
    return uvec3(a.x, a.z, a.y);
}

// Entry (i, k) of slice s that load p of invocation t brings: consecutive invocations take
// consecutive k where k is the tile's contiguous direction (`along_k`), else consecutive i.
uvec2 entry(uint s, uint p, bool along_k, uint t) {
    if (along_k) return uvec2(t / KC + (256u / KC) * p, s * KC + t % KC);
    return uvec2(t % 32u + 32u * (p % (NB / 32u)), s * KC + t / 32u + 8u * (p / (NB / 32u)));
}

// Fetches M(i, k) = BUF[A.x + i·A.y + k·A.z] for i < ROWS, k < DEPTH (0 elsewhere) into v,
// slice s, load p at v[s·LOADS + p]: a whole tile's loads unconditional, so that they are all
// in flight together. Macros rather than functions keep v in registers.
#define FETCH(BUF, A, ROWS, DEPTH)                                                         \
    {                                                                                      \
        uvec3 fa = (A);                                                                    \
        uint frows = (ROWS);                                                               \
        uint fdepth = (DEPTH);                                                             \
        bool along = fa.z <= fa.y;                                                         \
        if (frows == NB && fdepth == NB) {                                                 \
            for (uint s = 0u; s < SLICES; s++)                                             \
                for (uint p = 0u; p < LOADS; p++) {                                        \
                    uvec2 e = entry(s, p, along, t);                                       \
                    v[s * LOADS + p] = BUF[fa.x + e.x * fa.y + e.y * fa.z];                \
                }                                                                          \
        } else {                                                                           \
            for (uint s = 0u; s < SLICES; s++)                                             \
                for (uint p = 0u; p < LOADS; p++) {                                        \
                    uvec2 e = entry(s, p, along, t);                                       \
                    bool inside = e.x < frows && e.y < fdepth;                             \
                    v[s * LOADS + p] = inside ? BUF[fa.x + e.x * fa.y + e.y * fa.z] : 0.0; \
                }                                                                          \
        }                                                                                  \
    }

// acc += M·X over the tile in v, its entries laid out as FETCH took them from A: slice by
// slice through ls, row i = t mod NB, the vec4s h·CV.. of xs's rows (h = t / NB).
#define MULTIPLY(A)                                                                        \
    {                                                                                      \
        uvec3 ma = (A);                                                                    \
        bool along = ma.z <= ma.y;                                                         \
        for (uint s = 0u; s < SLICES; s++) {                                               \
            for (uint p = 0u; p < LOADS; p++) {                                            \
                uvec2 e = entry(s, p, along, t);                                           \
                ls[e.x][e.y - s * KC] = v[s * LOADS + p];                                  \
            }                                                                              \
            barrier();                                                                     \
            for (uint k = 0u; k < KC; k++) {                                               \
                float a = ls[i][k];                                                        \
                uint row = (s * KC + k) * XS + h * CV;                                     \
                for (uint j = 0u; j < CV; j++) acc[j] += a * xs[row + j];                  \
            }                                                                              \
            barrier();                                                                     \
        }                                                                                  \
    }

void main() {
    uint t = gl_LocalInvocationID.x;
    if (t == 0u) {
        order_shared = atomicAdd(ticket, 1u);
        stop_shared = 0u;
    }
    barrier();
    uint place = order_shared;
    uint I = transposed == 0u ? place : blocks - 1u - place;
    uint sI = block_start(I);
    uint nI = block_size(I);
    uint i = t % NB;
    uint h = t / NB;
    uint c0 = h * 4u * CV;
    // The tile in flight, and this invocation's sums and entries of B_I (read now: only this
    // group writes them), columns c0 + 4j + q at [j][q].
    float v[SLICES * LOADS];
    vec4 acc[CV];
    vec4 b[CV];
    for (uint j = 0u; j < CV; j++) {
        for (uint q = 0u; q < 4u; q++) {
            uint c = c0 + 4u * j + q;
            b[j][q] = i < nI && c < cols ? x[(sI + i) * x_row + c] : 0.0;
        }
        acc[j] = vec4(0.0);
    }
    uint count = transposed == 0u ? I : blocks - 1u - I;
    uint base = I * NB * NB;
    uvec3 inverse = transposed == 0u ? uvec3(base, NB, 1u) : uvec3(base, 1u, NB);
    uint spins = 0u;
    // The first tile (or, for the chain's first block, the inverse) before any wait.
    uint first = transposed == 0u ? 0u : blocks - 1u;
    if (count > 0u) FETCH(l, m_tile(sI, block_start(first)), nI, block_size(first))
    else FETCH(inv, inverse, nI, nI)
    for (uint step = 0u; step < count; step++) {
        uint J = transposed == 0u ? step : blocks - 1u - step;
        uint sJ = block_start(J);
        uint nJ = block_size(J);
        if (t == 0u) {
            while (atomicOr(ready[J], 0u) == 0u && spins < spin_limit) spins++;
            if (atomicOr(ready[J], 0u) == 0u) stop_shared = 1u;
        }
        barrier();
        if (stop_shared != 0u) break;
        memoryBarrierBuffer();
        for (uint q = 0u; q < 4u * CV; q++) {
            uint e = t + 256u * q;
            uint k = e / RP;
            uint c = e % RP;
            xs[k * XS + c / 4u][c % 4u] = k < nJ && c < cols ? x[(sJ + k) * x_row + c] : 0.0;
        }
        barrier();
        MULTIPLY(m_tile(sI, sJ))
        // The next tile, or the inverse after the last, fetched before the next wait.
        if (step + 1u < count) {
            uint K = transposed == 0u ? step + 1u : blocks - 2u - step;
            FETCH(l, m_tile(sI, block_start(K)), nI, block_size(K))
        } else {
            FETCH(inv, inverse, nI, nI)
        }
    }
    if (stop_shared != 0u) {
        if (t == 0u) atomicOr(gave_up, 1u);
        return;
    }
    // S = B_I − Σ into xs, then X_I = M_II⁻¹·S (the inverse NB-strided, row-major).
    for (uint j = 0u; j < CV; j++) {
        xs[i * XS + h * CV + j] = i < nI ? b[j] - acc[j] : vec4(0.0);
        acc[j] = vec4(0.0);
    }
    barrier();
    MULTIPLY(inverse)
    if (i < nI) {
        for (uint j = 0u; j < CV; j++)
            for (uint q = 0u; q < 4u; q++) {
                uint c = c0 + 4u * j + q;
                if (c < cols) x[(sI + i) * x_row + c] = acc[j][q];
            }
    }
    memoryBarrierBuffer();
    barrier();
    if (t == 0u) atomicExchange(ready[I], 1u);
}
