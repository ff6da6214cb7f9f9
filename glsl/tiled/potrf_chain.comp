// The Cholesky of full storage in ONE launch, left-looking by tiles of NB x NB (the diagonal
// block's order): work group g takes a ticket (tickets follow the order groups start in) and
// computes tile (i, j), i ≥ j, ticket t counting the tiles column by column (j outer, i inner),
// so a tile depends only on earlier tickets and the chain always progresses (the argument of
// decoupled look-back, as in trsv_chain.comp). Tile (i, j):
//   acc = C_ij − Σ_{k<j} L_ik·L_jkᵀ, each term once tiles (i, k) and (j, k) are published;
//   i = j: acc written back, factored and inverted by factor_block (potrf_inv_fn.glsl,
//          potrf_inv_panels.glsl, potrf_inv_lanes.glsl or potrf_inv_pairs.glsl, inserted at
//          the FUSED_DIAG_FUNCTION line; the pairs' factor_block_from takes acc from the
//          registers, no write and barrier before it), L_jj⁻¹ to slot j;
//   i > j: once (j, j) is published, L_ij = acc·L_jj⁻ᵀ;
// then its flag ready[t] is published (memory barrier before the flag).
// With CHAIN_FOLD 1 (issue 25: one hand-off fewer per diagonal step), the sub-diagonal tile
// (j + 1, j) of a column whose next diagonal tile is in the launch publishes its sum acc only
// (flag 1), and the group of (j + 1, j + 1), once (j, j) is published, forms
// L_{j+1,j} = acc·L_jj⁻ᵀ itself, writes it (flag 2: final), subtracts its last term from
// registers and shared memory and factors. Tiles that read L_{j+1,j} wait for flag 2, set by
// the group of (j + 1, j + 1), whose ticket comes before theirs (column j + 1 onward): every
// wait is still on an earlier ticket. A pivot that is not
// positive (or NaN) is reported with atomicMin on the status word (the earliest column wins;
// diagonal tiles run one after the other, so its pivot is the one beside it), and the chain
// goes on publishing its (NaN) tiles: a failure never hangs it.
//
// Storage: C(r, s), r ≥ s, lies at c_off + r·c_rs + s·c_cs; only the lower triangle is read or
// written. The view may be a block column [B11; B21] (m rows, n ≤ m columns, n a multiple of
// NB where n < m): its first n columns are factored (L11 and L21 = B21·L11⁻ᵀ), as the outer
// block columns of the chained panels are; `column0` is its first column in the whole matrix.
// A group whose waits outlast `spin_limit` polls in all (software renderers end long loops) or
// that finds the chain given up sets `gave_up` and writes and publishes nothing (every write
// comes after the last wait): a tile is either published, and final, or as it was. The host
// then launches the chain again with the same flags (a group whose tile is published returns
// at once): the first tile not published waits for nobody, so every launch makes progress.
layout(local_size_x = PX, local_size_y = PY) in;

layout(std430, binding = 0) coherent buffer CBuf { float c[]; };

// FUSED_DIAG_FUNCTION

// Tickets, the gave-up word and one ready flag per tile (ticket order).
layout(std430, binding = 3) coherent buffer Sync { uint ticket; uint gave_up; uint ready[]; };
// The status word the host reads (factor_block's own, at binding 5, is a scratch word here).
layout(std430, binding = 6) coherent buffer ChainStatus { uint chain_column; float chain_pivot; };
// The inverses factor_block writes (binding 1), read back coherently by other work groups.
layout(std430, binding = 7) coherent buffer InvRead { float inv_r[]; };

uniform uint m;
uniform uint n;
uniform uint column0;
uniform uint tiles;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint spin_limit;

#ifndef CHAIN_FOLD
#define CHAIN_FOLD 0
#endif

// CHAIN_FOLD_EARLY (Tuning::chain_fold_early, with CHAIN_FOLD): the folded tile's flag 2 set
// once L_{j,j-1} is written, before the diagonal group's update from it (else after).
#ifndef CHAIN_FOLD_EARLY
#define CHAIN_FOLD_EARLY 0
#endif
// CHAIN_LEAN (Tuning::chain_lean): the barrier after each term's last slice dropped where the
// next term's wait (itself a barrier) follows.
#ifndef CHAIN_LEAN
#define CHAIN_LEAN 0
#endif
#ifndef CHAIN_POLL
#define CHAIN_POLL 0
#endif
#ifndef CHAIN_GAVE_UP_EVERY
#define CHAIN_GAVE_UP_EVERY 32u
#endif
#if CHAIN_POLL == 2
// The same flags through a volatile view (CHAIN_POLL 2): a plain load per poll, which the
// compiler may not hoist out of the loop, instead of an atomic read-modify-write.
layout(std430, binding = 3) volatile coherent buffer SyncPoll { uint poll_ticket; uint poll_gave_up; uint ready_poll[]; };
#endif

// One poll of flag f (CHAIN_POLL 1 and 2).
uint poll_flag(uint f) {
#if CHAIN_POLL == 2
    return ready_poll[f];
#else
    return atomicOr(ready[f], 0u);
#endif
}

#define THREADS (PX * PY)
// The products run over slices of KS columns (KS divides NB; the host defines it): two padded
// NB x KS slices in shared memory, so that tiles of 64 fit llvmpipe's 32 KiB.
#define LOADS ((NB * KS) / THREADS)

shared float ta[NB][KS + 1];
shared float tb[NB][KS + 1];
shared uint order_shared;
shared uint stop_shared;
shared uint bad_shared;
shared uint ahead_shared;

uint at(uint r, uint s) { return c_off + r * c_rs + s * c_cs; }

// The flag of tile (i, j): its ticket (`tiles` row tiles; column j holds tiles − j of them).
uint flag_index(uint i, uint j) { return j * tiles - (j * (j - 1u)) / 2u + (i - j); }

// Whether tile (i, j) is folded (CHAIN_FOLD): the sub-diagonal tile of a column whose next
// diagonal tile is factored in this launch (the last column of a block column has none).
bool folded(uint i, uint j) { return CHAIN_FOLD != 0 && i == j + 1u && i * uint(NB) < n; }

// The flag value at which tile (i, j) holds its final L_ij (2 where folded).
uint final_flag(uint i, uint j) { return folded(i, j) ? 2u : 1u; }

// Invocation 0 polls the flag until it reaches `need` (or the gave-up word); true for the
// whole group when it must stop. CHAIN_POLL (Tuning::chain_poll, issue 25: the polls lie on
// the critical path): 0 reads the flag and the gave-up word by atomic RMW every poll and the
// flag once more after the loop; 1 reads the gave-up word every CHAIN_GAVE_UP_EVERY polls
// only and decides by the last poll; 2 as 1 with the flag read by plain volatile loads.
bool wait_for(uint f, uint need, inout uint spins, uint tid) {
    if (tid == 0u) {
#if CHAIN_POLL == 0
        while (atomicOr(ready[f], 0u) < need && atomicOr(gave_up, 0u) == 0u && spins < spin_limit)
            spins++;
        if (atomicOr(ready[f], 0u) < need) stop_shared = 1u;
#else
        uint seen = poll_flag(f);
        while (seen < need && spins < spin_limit) {
            spins++;
            if (spins % CHAIN_GAVE_UP_EVERY == 0u && atomicOr(gave_up, 0u) != 0u) break;
            seen = poll_flag(f);
        }
        if (seen < need) stop_shared = 1u;
#endif
    }
    barrier();
    bool stop = stop_shared != 0u;
    memoryBarrierBuffer();
    return stop;
}

#ifndef CHAIN_AHEAD
#define CHAIN_AHEAD 0
#endif

// CHAIN_AHEAD (Tuning::chain_ahead): how many of the terms k + 1 .. k + CHAIN_AHEAD after one
// just waited for are published already (both tiles final), counted from k + 1 up to the
// first that is not: their flags read at once, one per invocation, so that a tile whose
// earlier terms are long published waits (a barrier and an L2 round trip) once per run of
// them instead of twice per term. Every invocation returns the count.
#if CHAIN_AHEAD > 0
uint terms_ready_after(uint i, uint j, uint k, uint terms, bool diagonal, uint tid) {
    if (tid == 0u) ahead_shared = uint(CHAIN_AHEAD);
    barrier();
    uint t = tid % uint(CHAIN_AHEAD);
    bool other = tid >= uint(CHAIN_AHEAD);
    uint kk = k + 1u + t;
    if (tid < 2u * uint(CHAIN_AHEAD) && !(other && diagonal)) {
        if (kk >= terms) {
            if (!other) atomicMin(ahead_shared, t);
        } else {
            uint row = other ? j : i;
            if (poll_flag(flag_index(row, kk)) < final_flag(row, kk)) atomicMin(ahead_shared, t);
        }
    }
    barrier();
    uint ahead = ahead_shared;
    memoryBarrierBuffer();
    return ahead;
}
#endif

// prod = x·Wᵀ, W = L_jj⁻¹ at inv_r[base] (row-major, NB-strided, whole: tile j is not the
// last): (x·Wᵀ)(r, s) = Σ_p x(r, p)·W(s, p), slice by slice (x's columns h..h + KS to ta, W's
// to tb).
void times_inverse_t(float x[EA][EB], uint base, uint tid, out float prod[EA][EB]) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) prod[a][b] = 0.0;
    for (uint h = 0u; h < uint(NB); h += uint(KS)) {
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint s = tx + uint(PX) * uint(b);
                if (s >= h && s < h + uint(KS)) ta[ty + uint(PY) * uint(a)][s - h] = x[a][b];
            }
        for (uint q = 0u; q < uint(LOADS); q++) {
            uint e = tid + q * uint(THREADS);
            uint rr = e / uint(KS);
            uint p = e % uint(KS);
            tb[rr][p] = inv_r[base + rr * uint(NB) + h + p];
        }
        barrier();
        for (uint p = 0u; p < uint(KS); p++) {
            float bv[EB];
            for (int b = 0; b < EB; b++) bv[b] = tb[tx + uint(PX) * uint(b)][p];
            for (int a = 0; a < EA; a++) {
                float av = ta[ty + uint(PY) * uint(a)][p];
                for (int b = 0; b < EB; b++) prod[a][b] += av * bv[b];
            }
        }
        barrier();
    }
}

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * uint(PX) + tx;
    if (tid == 0u) {
        order_shared = atomicAdd(ticket, 1u);
        // Given up, or published by an earlier launch of the same chain.
        stop_shared = atomicOr(gave_up, 0u) | atomicOr(ready[order_shared], 0u);
    }
    barrier();
    if (stop_shared != 0u) return;
    // Ticket → (i, j): column j holds tiles − j tiles.
    uint t = order_shared;
    uint j = 0u;
    while (t >= tiles - j) {
        t -= tiles - j;
        j++;
    }
    uint i = j + t;
    uint r0 = i * uint(NB);
    uint s0 = j * uint(NB);
    uint ni = min(uint(NB), m - r0);
    uint nj = min(uint(NB), n - s0);
    bool diagonal = i == j;
    // acc[a][b] is entry (ty + PY·a, tx + PX·b) of the tile.
    float acc[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint r = ty + uint(PY) * uint(a);
            uint s = tx + uint(PX) * uint(b);
            acc[a][b] = (r < ni && s < nj && (!diagonal || s <= r)) ? c[at(r0 + r, s0 + s)] : 0.0;
        }
    uint spins = 0u;
    bool stop = false;
    // Folded: the diagonal group takes the last term from L_{j,j-1}, which it forms itself;
    // the sub-diagonal group publishes its sum.
    bool fold_diag = CHAIN_FOLD != 0 && diagonal && j > 0u;
    bool fold_sub = folded(i, j);
    uint terms = fold_diag ? j - 1u : j;
    // Terms after k known published (CHAIN_AHEAD): no wait for them.
    uint ready_ahead = 0u;
    for (uint k = 0u; k < terms && !stop; k++) {
        if (ready_ahead == 0u) {
            stop = wait_for(flag_index(i, k), final_flag(i, k), spins, tid);
            if (!stop && !diagonal) stop = wait_for(flag_index(j, k), final_flag(j, k), spins, tid);
            if (stop) break;
#if CHAIN_AHEAD > 0
            ready_ahead = terms_ready_after(i, j, k, terms, diagonal, tid);
#endif
        } else {
            ready_ahead--;
        }
        // L_ik and L_jk (whole NB columns: k < j is never the last, short, tile column).
        for (uint h = k * uint(NB); h < (k + 1u) * uint(NB); h += uint(KS)) {
            for (uint q = 0u; q < uint(LOADS); q++) {
                uint e = tid + q * uint(THREADS);
                uint rr = e / uint(KS);
                uint p = e % uint(KS);
                ta[rr][p] = rr < ni ? c[at(r0 + rr, h + p)] : 0.0;
                tb[rr][p] = rr < nj ? c[at(s0 + rr, h + p)] : 0.0;
            }
            barrier();
            for (uint p = 0u; p < uint(KS); p++) {
                float bv[EB];
                for (int b = 0; b < EB; b++) bv[b] = tb[tx + uint(PX) * uint(b)][p];
                for (int a = 0; a < EA; a++) {
                    float av = ta[ty + uint(PY) * uint(a)][p];
                    for (int b = 0; b < EB; b++) acc[a][b] -= av * bv[b];
                }
            }
#if CHAIN_LEAN
            // The last slice of a term that is not the last: the next term's wait_for holds a
            // barrier before any invocation writes ta or tb again (unless the next term is
            // known published: no wait, so the barrier stays).
            if (h + uint(KS) < (k + 1u) * uint(NB) || k + 1u == terms || ready_ahead > 0u) barrier();
#else
            barrier();
#endif
        }
    }
#if CHAIN_FOLD
    // The sub-diagonal tile's sum (published before (j − 1, j − 1) is, mostly), then L_{j-1,j-1}⁻¹.
    float sub[EA][EB];
    if (!stop && fold_diag) {
        stop = wait_for(flag_index(j, j - 1u), 1u, spins, tid);
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + uint(PY) * uint(a);
                uint s = tx + uint(PX) * uint(b);
                sub[a][b] = (!stop && r < ni) ? c[at(r0 + r, s0 - uint(NB) + s)] : 0.0;
            }
        if (!stop) stop = wait_for(flag_index(j - 1u, j - 1u), 1u, spins, tid);
    }
#endif
    if (!stop && !diagonal && !fold_sub) stop = wait_for(flag_index(j, j), 1u, spins, tid);
    if (stop) {
        if (tid == 0u) atomicOr(gave_up, 1u);
        return;
    }
#if CHAIN_FOLD
    if (fold_diag) {
        // L_{j,j-1} = sub·L_{j-1,j-1}⁻ᵀ written (flag 2 once the group is past its last
        // barrier below), and its term acc −= L_{j,j-1}·L_{j,j-1}ᵀ from the registers through ta.
        float l[EA][EB];
        times_inverse_t(sub, (j - 1u) * uint(NB * NB), tid, l);
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + uint(PY) * uint(a);
                uint s = tx + uint(PX) * uint(b);
                if (r < ni) c[at(r0 + r, s0 - uint(NB) + s)] = l[a][b];
            }
        memoryBarrierBuffer();
        for (uint h = 0u; h < uint(NB); h += uint(KS)) {
            for (int a = 0; a < EA; a++)
                for (int b = 0; b < EB; b++) {
                    uint s = tx + uint(PX) * uint(b);
                    uint r = ty + uint(PY) * uint(a);
                    if (s >= h && s < h + uint(KS)) ta[r][s - h] = r < ni ? l[a][b] : 0.0;
                }
            barrier();
#if CHAIN_FOLD_EARLY
            // Every invocation wrote its part of L_{j,j-1} (memory barrier) before this
            // barrier: flag 2 now, so that the tiles reading L_{j,j-1} (the next sub-diagonal
            // tile's sum first) do not wait for this group's update from it.
            if (h == 0u && tid == 0u) atomicExchange(ready[flag_index(j, j - 1u)], 2u);
#endif
            for (uint p = 0u; p < uint(KS); p++) {
                float bv[EB];
                for (int b = 0; b < EB; b++) bv[b] = ta[tx + uint(PX) * uint(b)][p];
                for (int a = 0; a < EA; a++) {
                    float av = ta[ty + uint(PY) * uint(a)][p];
                    for (int b = 0; b < EB; b++) acc[a][b] -= av * bv[b];
                }
            }
            barrier();
        }
#if !CHAIN_FOLD_EARLY
        if (tid == 0u) atomicExchange(ready[flag_index(j, j - 1u)], 2u);
#endif
    }
#endif
    if (diagonal) {
        if (tid == 0u) bad_shared = 0xFFFFFFFFu;
#ifdef FACTOR_FROM_REGISTERS
        // The sum handed over in registers (the factor writes L over the tile).
        factor_block_from(acc, ni, at(r0, s0), c_rs, c_cs, s0, j * uint(NB * NB));
#else
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + uint(PY) * uint(a);
                uint s = tx + uint(PX) * uint(b);
                if (r < ni && s <= r) c[at(r0 + r, s0 + s)] = acc[a][b];
            }
        memoryBarrierBuffer();
        barrier();
        factor_block(ni, at(r0, s0), c_rs, c_cs, s0, j * uint(NB * NB));
#endif
        barrier();
        // The first pivot that is not positive, found by every invocation at once (one thread
        // scanning the tile's pivots had been on the chain's critical path).
        for (uint q = tid; q < ni; q += uint(THREADS))
            if (PIVOT_FAILS(piv[q])) atomicMin(bad_shared, q);
        barrier();
        if (tid == 0u && bad_shared < ni) {
            uint column = column0 + s0 + bad_shared;
            uint old = atomicMin(chain_column, column);
            if (column < old) chain_pivot = piv[bad_shared];
        }
    } else if (fold_sub) {
        // Folded: the sum only (whole NB columns: column j is not the last); the group of
        // (j + 1, j + 1) forms L_{j+1,j}.
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + uint(PY) * uint(a);
                uint s = tx + uint(PX) * uint(b);
                if (r < ni) c[at(r0 + r, s0 + s)] = acc[a][b];
            }
    } else {
        // L_ij = acc·L_jj⁻ᵀ.
        float prod[EA][EB];
        times_inverse_t(acc, j * uint(NB * NB), tid, prod);
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + uint(PY) * uint(a);
                uint s = tx + uint(PX) * uint(b);
                if (r < ni) c[at(r0 + r, s0 + s)] = prod[a][b];
            }
    }
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) atomicExchange(ready[order_shared], 1u);
}
