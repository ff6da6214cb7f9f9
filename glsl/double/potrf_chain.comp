// The f64 Cholesky of A (order n, row-major, its lower triangle) in ONE launch, left-looking
// by tiles of NB x NB, as the f32 chain (glsl/tiled/potrf_chain.comp) runs it: work group g
// takes a ticket (tickets follow the order groups start in) and computes tile (i, j), i ≥ j,
// tickets counting the tiles column by column, so that a tile waits only for earlier tickets
// and the chain always progresses. Tile (i, j):
//   acc = A_ij − Σ_{k<j} L_ik·L_jkᵀ, each term once tiles (i, k) and (j, k) are published;
//   i = j: acc factored in registers (square-root free, one barrier a column, its unit factor's
//          inverse built in the same sweep, as glsl/tiled/potrf_inv_fn.glsl), L_jj over the
//          tile and inv(L_jj)ᵀ at rows j·NB.. of Inv (row stride NB), zeros above its diagonal;
//   i > j: once (j, j) is published, L_ij = acc·inv(L_jj)ᵀ;
// then its flag ready[t] is published (a memory barrier before the flag). With CHAIN_FOLD 1
// (the f32 chain's fold: one hand-off fewer per diagonal step) the sub-diagonal tile (j + 1, j)
// publishes its sum only (flag 1) and the group of (j + 1, j + 1), once (j, j) is published,
// forms L_{j+1,j} itself, writes it (flag 2: final, which the tiles reading it wait for; that
// group's ticket comes before theirs) and subtracts its term from registers through shared
// memory: the same operations in the same order, so the same bits. CHAIN_AHEAD (> 0): after
// each wait the group reads the flags of the next CHAIN_AHEAD terms at once and runs through
// those published without waiting again. CHAIN_POLL 1 polls a flag by atomic reads, 2 by
// plain loads of a volatile view (the gave-up word every 32 polls in both). Only A's lower
// triangle is read or written. The first pivot that is not positive (or NaN) is recorded in
// the sync words (its column and its value; diagonal tiles run one after the other, so the
// earliest column is the first recorded) and the chain goes on publishing its (NaN) tiles: a
// failure never hangs it. A group whose waits outlast `spin_limit` polls in all (software
// renderers end long loops) or that finds the chain given up sets `gave_up` and writes and
// publishes nothing (every write comes after its last wait); the host launches the chain again
// with the same flags (a group whose tile is published returns at once).
layout(local_size_x = 16, local_size_y = 16) in;

#define PX 16u
#define PY 16u
#define THREADS (PX * PY)
// Rows (index a) and columns (index b) of a tile per invocation.
#define EA int(NB / PY)
#define EB int(NB / PX)
// Entries of an NB x NB tile each invocation moves to shared memory.
#define LOADS ((NB * NB) / THREADS)

layout(std430, binding = 0) coherent buffer ABuf { double a[]; };
layout(std430, binding = 1) coherent buffer InvBuf { double inv[]; };
// The ticket, the gave-up word, the first failed column (0xFFFFFFFF: none) and its pivot's
// two halves, then one ready flag per tile (ticket order) from word 8.
layout(std430, binding = 2) coherent buffer SyncBuf {
    uint ticket;
    uint gave_up;
    uint failed_column;
    uint pivot_lo;
    uint pivot_hi;
    uint spare[3];
    uint ready[];
};

uniform uint n;
uniform uint tile_rows;
uniform uint spin_limit;

#ifndef CHAIN_FOLD
#define CHAIN_FOLD 0
#endif
#ifndef CHAIN_AHEAD
#define CHAIN_AHEAD 0
#endif
#ifndef CHAIN_POLL
#define CHAIN_POLL 1
#endif
#if CHAIN_POLL == 2
// The same flags through a volatile view: a plain load per poll, which the compiler may not
// hoist out of the loop, instead of an atomic read-modify-write.
layout(std430, binding = 2) volatile coherent buffer SyncPoll { uint poll_head[8]; uint ready_poll[]; };
#endif

shared double ta[NB][NB + 1u];
shared double tb[NB][NB + 1u];
shared double col[2][NB];
shared double row[2][NB];
shared double piv[NB];
// sqrt(pivot) and its reciprocal per column of a diagonal tile.
shared double root[NB];
shared double root_inv[NB];
shared uint order_shared;
shared uint stop_shared;
shared uint bad_shared;
shared uint ahead_shared;

uint at(uint r, uint s) { return r * n + s; }

// The flag of tile (i, j): its ticket (column j holds tile_rows − j tiles).
uint flag_index(uint i, uint j) { return j * tile_rows - (j * (j - 1u)) / 2u + (i - j); }

// One poll of flag f.
uint poll_flag(uint f) {
#if CHAIN_POLL == 2
    return ready_poll[f];
#else
    return atomicOr(ready[f], 0u);
#endif
}

// Whether tile (i, j) is folded (CHAIN_FOLD): the sub-diagonal tile of a column.
bool folded(uint i, uint j) { return CHAIN_FOLD != 0 && i == j + 1u && i < tile_rows; }

// The flag value at which tile (i, j) holds its final L_ij (2 where folded).
uint final_flag(uint i, uint j) { return folded(i, j) ? 2u : 1u; }

// Invocation 0 polls flag f until it reaches `need` (or the chain is given up, or the polls
// run out); true for the whole group when it must stop.
bool wait_for(uint f, uint need, inout uint spins, uint tid) {
    if (tid == 0u) {
        uint seen = poll_flag(f);
        while (seen < need && spins < spin_limit) {
            spins++;
            if (spins % 32u == 0u && atomicOr(gave_up, 0u) != 0u) break;
            seen = poll_flag(f);
        }
        if (seen < need) stop_shared = 1u;
    }
    barrier();
    bool stop = stop_shared != 0u;
    memoryBarrierBuffer();
    return stop;
}

#if CHAIN_AHEAD > 0
// How many of the terms k + 1 .. k + CHAIN_AHEAD after the one just waited for are published
// already (both tiles final), counted from k + 1 up to the first that is not: their flags
// read at once, one per invocation. Every invocation returns the count.
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
            uint r = other ? j : i;
            if (poll_flag(flag_index(r, kk)) < final_flag(r, kk)) atomicMin(ahead_shared, t);
        }
    }
    barrier();
    uint ahead = ahead_shared;
    memoryBarrierBuffer();
    return ahead;
}
#endif

// acc −= X·Yᵀ over NB columns, X's rows staged in ta and Y's in tb (in ta too where `same`):
// the one product of the chain's terms, so a term from registers adds the bits one from
// memory would.
void subtract_staged(inout double acc[EA][EB], bool same) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    for (uint p = 0u; p < NB; p++) {
        double bv[EB];
        for (int b = 0; b < EB; b++) bv[b] = same ? ta[tx + PX * uint(b)][p] : tb[tx + PX * uint(b)][p];
        for (int q = 0; q < EA; q++) {
            double av = ta[ty + PY * uint(q)][p];
            for (int b = 0; b < EB; b++) acc[q][b] = fma(-av, bv[b], acc[q][b]);
        }
    }
}

// x ← x·Wᵀ with W = inv(L_jj), whose transpose lies at rows s0.. of Inv:
// (x·Wᵀ)(r, s) = Σ_p x(r, p)·W(s, p), W(s, p) = inv[(s0 + p)·NB + s].
void times_inverse_t(inout double x[EA][EB], uint s0, uint tid) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) ta[ty + PY * uint(q)][tx + PX * uint(b)] = x[q][b];
    for (uint q = 0u; q < LOADS; q++) {
        uint e = tid + q * THREADS;
        uint p = e / NB;
        uint s = e % NB;
        tb[s][p] = inv[(s0 + p) * NB + s];
    }
    barrier();
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) x[q][b] = 0.0;
    for (uint p = 0u; p < NB; p++) {
        double bv[EB];
        for (int b = 0; b < EB; b++) bv[b] = tb[tx + PX * uint(b)][p];
        for (int q = 0; q < EA; q++) {
            double av = ta[ty + PY * uint(q)][p];
            for (int b = 0; b < EB; b++) x[q][b] = fma(av, bv[b], x[q][b]);
        }
    }
}

// The diagonal tile at (r0, r0) of order ni from its sum s (entry (ty + PY·q, tx + PX·b);
// outside the tile's lower triangle taken as the identity's): L over the tile, inv(L)ᵀ at rows
// r0.. of Inv, the pivots (before their square roots) in piv.
void factor_block(double s[EA][EB], uint ni, uint r0, uint tid) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + PY * uint(q);
            uint k = tx + PX * uint(b);
            if (!(i < ni && k <= i)) s[q][b] = i == k ? 1.0 : 0.0;
        }
    // y = L̃⁻¹ (L̃ the unit lower factor of the elimination, A = L̃·diag(pivots)·L̃ᵀ), built in
    // the same sweep: step j applies its multipliers to y's rows below j as to s's, so one
    // barrier per column publishes both column j of s and row j of y (final after step j − 1).
    double y[EA][EB];
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) y[q][b] = ty + PY * uint(q) == tx + PX * uint(b) ? 1.0 : 0.0;
    for (uint j = 0u; j < ni; j++) {
        uint buf = j & 1u;
        for (int b = 0; b < EB; b++)
            if (tx + PX * uint(b) == j)
                for (int q = 0; q < EA; q++) col[buf][ty + PY * uint(q)] = s[q][b];
        for (int q = 0; q < EA; q++)
            if (ty + PY * uint(q) == j)
                for (int b = 0; b < EB; b++) row[buf][tx + PX * uint(b)] = y[q][b];
        barrier();
        double p = col[buf][j];
        if (tid == 0u) piv[j] = p;
        double ip = reciprocal(p);
        for (int q = 0; q < EA; q++) {
            uint i = ty + PY * uint(q);
            if (i <= j) continue;
            double f = col[buf][i] * ip;
            for (int b = 0; b < EB; b++) {
                uint k = tx + PX * uint(b);
                if (k > j && i >= k) s[q][b] = fma(-f, col[buf][k], s[q][b]);
                if (i < ni && k <= j) y[q][b] = fma(-f, row[buf][k], y[q][b]);
            }
        }
    }
    barrier();
    // Each pivot's square root and its reciprocal, once.
    for (uint q = tid; q < ni; q += THREADS) {
        double r = sqrt(piv[q]);
        root[q] = r;
        root_inv[q] = reciprocal(r);
    }
    barrier();
    // L(i, k) = s(i, k)/sqrt(pivot k), L(i, i) = sqrt(pivot i); inv(L) = diag(pivots)^(-1/2)·y,
    // written transposed: inv(L)ᵀ(k, i) = inv(L)(i, k) at row r0 + k, column i.
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + PY * uint(q);
            uint k = tx + PX * uint(b);
            if (i < ni && k <= i) a[at(r0 + i, r0 + k)] = k == i ? root[i] : s[q][b] * root_inv[k];
            if (i < ni && k < ni) inv[(r0 + k) * NB + i] = k <= i ? y[q][b] * root_inv[i] : 0.0;
        }
}

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * PX + tx;
    if (tid == 0u) {
        order_shared = atomicAdd(ticket, 1u);
        // Given up, or published by an earlier launch of the same chain.
        stop_shared = atomicOr(gave_up, 0u) | atomicOr(ready[order_shared], 0u);
    }
    barrier();
    if (stop_shared != 0u) return;
    // Ticket → (i, j): column j holds tile_rows − j tiles.
    uint t = order_shared;
    uint j = 0u;
    while (t >= tile_rows - j) {
        t -= tile_rows - j;
        j++;
    }
    uint i = j + t;
    uint r0 = i * NB;
    uint s0 = j * NB;
    uint ni = min(NB, n - r0);
    uint nj = min(NB, n - s0);
    bool diagonal = i == j;
    double acc[EA][EB];
    for (int q = 0; q < EA; q++)
        for (int b = 0; b < EB; b++) {
            uint r = ty + PY * uint(q);
            uint s = tx + PX * uint(b);
            acc[q][b] = (r < ni && s < nj && (!diagonal || s <= r)) ? a[at(r0 + r, s0 + s)] : 0.0;
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
        // L_ik and L_jk (whole NB columns: tile column k < j is never the last, short, one).
        uint h = k * NB;
        for (uint q = 0u; q < LOADS; q++) {
            uint e = tid + q * THREADS;
            uint rr = e / NB;
            uint p = e % NB;
            ta[rr][p] = rr < ni ? a[at(r0 + rr, h + p)] : 0.0;
            tb[rr][p] = rr < nj ? a[at(s0 + rr, h + p)] : 0.0;
        }
        barrier();
        subtract_staged(acc, false);
        barrier();
    }
#if CHAIN_FOLD
    // The sub-diagonal tile's sum (published before (j − 1, j − 1) is, mostly), then
    // inv(L_{j-1,j-1}).
    double sub[EA][EB];
    if (!stop && fold_diag) {
        stop = wait_for(flag_index(j, j - 1u), 1u, spins, tid);
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                uint s = tx + PX * uint(b);
                sub[q][b] = (!stop && r < ni) ? a[at(r0 + r, s0 - NB + s)] : 0.0;
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
        // L_{j,j-1} = sub·inv(L_{j-1,j-1})ᵀ written, published (flag 2) once every invocation
        // has written its part, and its term acc −= L_{j,j-1}·L_{j,j-1}ᵀ from the registers
        // through ta, as the loop above would have taken it from memory.
        times_inverse_t(sub, s0 - NB, tid);
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                uint s = tx + PX * uint(b);
                if (r < ni) a[at(r0 + r, s0 - NB + s)] = sub[q][b];
            }
        memoryBarrierBuffer();
        barrier();
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                ta[r][tx + PX * uint(b)] = r < ni ? sub[q][b] : 0.0;
            }
        barrier();
        if (tid == 0u) atomicExchange(ready[flag_index(j, j - 1u)], 2u);
        subtract_staged(acc, true);
        barrier();
    }
#endif
    if (diagonal) {
        if (tid == 0u) bad_shared = 0xFFFFFFFFu;
        factor_block(acc, ni, r0, tid);
        barrier();
        // The first pivot that is not positive, looked for by every invocation at once.
        for (uint q = tid; q < ni; q += THREADS)
            if (PIVOT_FAILS_DOUBLE(piv[q])) atomicMin(bad_shared, q);
        barrier();
        if (tid == 0u && bad_shared < ni) {
            uint column = s0 + bad_shared;
            uint old = atomicMin(failed_column, column);
            if (column < old) {
                uvec2 bits = unpackDouble2x32(piv[bad_shared]);
                pivot_lo = bits.x;
                pivot_hi = bits.y;
            }
        }
    } else if (fold_sub) {
        // Folded: the sum only (whole NB columns: column j is not the last); the group of
        // (j + 1, j + 1) forms L_{j+1,j}.
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                if (r < ni) a[at(r0 + r, s0 + tx + PX * uint(b))] = acc[q][b];
            }
    } else {
        times_inverse_t(acc, s0, tid);
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                uint s = tx + PX * uint(b);
                if (r < ni) a[at(r0 + r, s0 + s)] = acc[q][b];
            }
    }
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) atomicExchange(ready[order_shared], 1u);
}
