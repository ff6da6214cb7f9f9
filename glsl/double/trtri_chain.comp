// Z = L⁻¹ in f64 for the lower triangular L of the chained Cholesky (glsl/double/
// potrf_chain.comp) in ONE launch, by tiles of NB x NB that wait for the tiles they read:
// work group g takes a ticket (tickets follow the order groups start in) and computes tile
// (i, j), i ≥ j, tickets counting the tiles row by row (i outer, j inner), so that a tile
// waits only for earlier tickets and the chain always progresses. Tile (i, j):
//   i = j: Z_jj = inv(L_jj), from its transpose the factor kept at rows j·NB.. of Inv (row
//          stride NB), zeros above its diagonal;
//   i > j: Z_ij = −inv(L_ii)·Σ_{j≤k<i} L_ik·Z_kj, each term once tile (k, j) is published;
// then its flag ready[t] is published (a memory barrier before the flag). Z's tiles above the
// diagonal are not written. A group whose waits outlast `spin_limit` polls in all or that
// finds the chain given up sets `gave_up` and writes and publishes nothing (every write comes
// after its last wait); the host launches the chain again with the same flags.
layout(local_size_x = 16, local_size_y = 16) in;

#define PX 16u
#define PY 16u
#define THREADS (PX * PY)
#define EA int(NB / PY)
#define EB int(NB / PX)
#define LOADS ((NB * NB) / THREADS)

layout(std430, binding = 0) readonly buffer LBuf { double l[]; };
layout(std430, binding = 1) readonly buffer InvBuf { double inv[]; };
layout(std430, binding = 2) coherent buffer ZBuf { double z[]; };
// The ticket and the gave-up word, six spare, then one ready flag per tile from word 8.
layout(std430, binding = 3) coherent buffer SyncBuf {
    uint ticket;
    uint gave_up;
    uint spare[6];
    uint ready[];
};

uniform uint n;
uniform uint spin_limit;

shared double ta[NB][NB + 1u];
shared double tb[NB][NB + 1u];
shared uint order_shared;
shared uint stop_shared;

uint at(uint r, uint s) { return r * n + s; }

// The flag of tile (i, j): its ticket (row i holds i + 1 tiles).
uint flag_index(uint i, uint j) { return (i * (i + 1u)) / 2u + j; }

// Invocation 0 polls flag f until it is set (or the chain is given up, or the polls run out);
// true for the whole group when it must stop.
bool wait_for(uint f, inout uint spins, uint tid) {
    if (tid == 0u) {
        uint seen = atomicOr(ready[f], 0u);
        while (seen == 0u && spins < spin_limit) {
            spins++;
            if (spins % 32u == 0u && atomicOr(gave_up, 0u) != 0u) break;
            seen = atomicOr(ready[f], 0u);
        }
        if (seen == 0u) stop_shared = 1u;
    }
    barrier();
    bool stop = stop_shared != 0u;
    memoryBarrierBuffer();
    return stop;
}

// acc += ta·tb over the NB x NB tiles in shared memory: acc(r, s) += Σ_p ta[r][p]·tb[p][s].
void add_product(inout double acc[EA][EB]) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    for (uint p = 0u; p < NB; p++) {
        double bv[EB];
        for (int b = 0; b < EB; b++) bv[b] = tb[p][tx + PX * uint(b)];
        for (int q = 0; q < EA; q++) {
            double av = ta[ty + PY * uint(q)][p];
            for (int b = 0; b < EB; b++) acc[q][b] = fma(av, bv[b], acc[q][b]);
        }
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
    // Ticket → (i, j): row i holds i + 1 tiles.
    uint t = order_shared;
    uint i = 0u;
    while (t > i) {
        t -= i + 1u;
        i++;
    }
    uint j = t;
    uint r0 = i * NB;
    uint s0 = j * NB;
    uint ni = min(NB, n - r0);
    uint nj = min(NB, n - s0);
    if (i == j) {
        // inv(L_jj)(r, s) = kept(s, r), lower triangle only.
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                uint s = tx + PX * uint(b);
                if (r < ni && s < nj) z[at(r0 + r, s0 + s)] = s <= r ? inv[(r0 + s) * NB + r] : 0.0;
            }
    } else {
        double acc[EA][EB];
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) acc[q][b] = 0.0;
        uint spins = 0u;
        bool stop = false;
        for (uint k = j; k < i && !stop; k++) {
            stop = wait_for(flag_index(k, j), spins, tid);
            if (stop) break;
            // L_ik (rows of tile row i, whole NB columns: k < i) and Z_kj (whole: k, j < i).
            for (uint q = 0u; q < LOADS; q++) {
                uint e = tid + q * THREADS;
                uint rr = e / NB;
                uint p = e % NB;
                ta[rr][p] = rr < ni ? l[at(r0 + rr, k * NB + p)] : 0.0;
                tb[rr][p] = z[at(k * NB + rr, s0 + p)];
            }
            barrier();
            add_product(acc);
            barrier();
        }
        if (stop) {
            if (tid == 0u) atomicOr(gave_up, 1u);
            return;
        }
        // Z_ij = −inv(L_ii)·acc: inv(L_ii)(r, p) = kept(p, r), zero outside its triangle.
        for (uint q = 0u; q < LOADS; q++) {
            uint e = tid + q * THREADS;
            uint rr = e / NB;
            uint p = e % NB;
            ta[rr][p] = (rr < ni && p <= rr) ? -inv[(r0 + p) * NB + rr] : 0.0;
        }
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) tb[ty + PY * uint(q)][tx + PX * uint(b)] = acc[q][b];
        barrier();
        double prod[EA][EB];
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) prod[q][b] = 0.0;
        add_product(prod);
        for (int q = 0; q < EA; q++)
            for (int b = 0; b < EB; b++) {
                uint r = ty + PY * uint(q);
                uint s = tx + PX * uint(b);
                if (r < ni) z[at(r0 + r, s0 + s)] = prod[q][b];
            }
    }
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) atomicExchange(ready[order_shared], 1u);
}
