// Triangular solves in a single launch, one chain per right-hand side: L·y = b (forward) or
// Lᵀ·x = y (backward) with the factor's diagonal blocks of order NB already inverted
// (trtri_blocks.comp), for the `rhs` right sides in x, row i of right side r at
// r·x_rhs + i·x_row (one after another: x_rhs = m, x_row = 1; the columns of a row-major
// m × rhs matrix: x_rhs = 1, x_row = rhs), each with its own ready flags. Work group g takes a ticket (the order groups start in)
// and solves block row I = ticket / rhs (forward; the last one first backward) of right side
// ticket % rhs, each exactly as that right side's chain would alone. It subtracts the tiles L_IJ·x_J of the
// blocks J solved before it as each one is published, then x_I = L_II⁻¹·(b_I − Σ), writes x_I
// over b_I and publishes it (ready[I]). A group waits only for groups that took earlier
// tickets, so they are running or done: every chain always progresses (the argument of
// decoupled look-back). The critical path is a tile product and an inverse product per block
// where the blocked solve launches two products per block.
//
// Storage: L(i, j), i ≥ j, lies at off_v + (i − i_v)·rs_v + (j − j_v)·cs_v in view v: view 0
// for rows below n1 (the whole factor in full storage, where n1 = m), view 1 for rows from n1
// and columns below n1, view 2 for both from n1 (RFP's three blocks). Blocks never straddle n1.
//
// A group whose wait outlasts `spin_limit` polls (software renderers end long loops) gives up:
// it sets `gave_up` and publishes nothing, and the host solves again the blocked way.
layout(local_size_x = 32, local_size_y = 8) in;

#define RQ (NB / 8u)
#define CK (NB / 32u)

layout(std430, binding = 0) readonly buffer LBuf { float l[]; };
layout(std430, binding = 1) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 2) coherent buffer XBuf { float x[]; };
layout(std430, binding = 3) coherent buffer Sync { uint ticket; uint gave_up; uint ready[]; };

uniform uint rhs;
uniform uint x_row;
uniform uint x_rhs;
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

shared float red[NB][33];
shared float xs[NB];
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

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint t = ty * 32u + tx;
    if (t == 0u) {
        order_shared = atomicAdd(ticket, 1u);
        stop_shared = 0u;
    }
    barrier();
    // This group's right side: its values from xo, its flags from fo.
    uint r = order_shared % rhs;
    uint place = order_shared / rhs;
    uint xo = r * x_rhs;
    uint fo = r * blocks;
    uint I = transposed == 0u ? place : blocks - 1u - place;
    uint sI = block_start(I);
    uint nI = block_size(I);
    // acc: forward, rows ty + 8q of block I over this invocation's columns; backward,
    // columns tx + 32k of block I over this invocation's rows.
    float acc[RQ];
    for (uint q = 0u; q < RQ; q++) acc[q] = 0.0;
    uint spins = 0u;
    uint count = transposed == 0u ? I : blocks - 1u - I;
    for (uint step = 0u; step < count; step++) {
        uint J = transposed == 0u ? step : blocks - 1u - step;
        uint sJ = block_start(J);
        uint nJ = block_size(J);
        bool whole = nI == NB && nJ == NB;
        // A whole tile is loaded before the wait for x_J: L does not depend on it.
        float v[RQ * CK];
        if (whole) {
            if (transposed == 0u) {
                uvec3 a = tile(sI, sJ);
                for (uint k = 0u; k < CK; k++)
                    for (uint q = 0u; q < RQ; q++)
                        v[k * RQ + q] = l[a.x + (ty + 8u * q) * a.y + (tx + 32u * k) * a.z];
            } else {
                uvec3 a = tile(sJ, sI);
                for (uint q = 0u; q < RQ; q++)
                    for (uint k = 0u; k < CK; k++)
                        v[q * CK + k] = l[a.x + (ty + 8u * q) * a.y + (tx + 32u * k) * a.z];
            }
        }
        if (t == 0u) {
            while (atomicOr(ready[fo + J], 0u) == 0u && spins < spin_limit) spins++;
            if (atomicOr(ready[fo + J], 0u) == 0u) stop_shared = 1u;
        }
        barrier();
        if (stop_shared != 0u) break;
        memoryBarrierBuffer();
        if (t < nJ) xs[t] = x[xo + (sJ + t) * x_row];
        barrier();
        if (whole) {
            // A whole tile: its loads (issued together, with no bounds to test, before the
            // wait), then the products.
            if (transposed == 0u) {
                for (uint k = 0u; k < CK; k++) {
                    float xc = xs[tx + 32u * k];
                    for (uint q = 0u; q < RQ; q++) acc[q] += v[k * RQ + q] * xc;
                }
            } else {
                for (uint q = 0u; q < RQ; q++) {
                    float xr = xs[ty + 8u * q];
                    for (uint k = 0u; k < CK; k++) acc[k] += v[q * CK + k] * xr;
                }
            }
        } else if (transposed == 0u) {
            // acc[q] += L(sI + r, sJ + c)·x_J(c), r = ty + 8q, c = tx + 32k.
            uvec3 a = tile(sI, sJ);
            for (uint k = 0u; k < CK; k++) {
                uint c = tx + 32u * k;
                if (c >= nJ) break;
                float xc = xs[c];
                for (uint q = 0u; q < RQ; q++) {
                    uint r = ty + 8u * q;
                    if (r < nI) acc[q] += l[a.x + r * a.y + c * a.z] * xc;
                }
            }
        } else {
            // acc[k] += L(sJ + r, sI + c)·x_J(r), c = tx + 32k, r = ty + 8q.
            uvec3 a = tile(sJ, sI);
            for (uint q = 0u; q < RQ; q++) {
                uint r = ty + 8u * q;
                if (r >= nJ) break;
                float xr = xs[r];
                for (uint k = 0u; k < CK; k++) {
                    uint c = tx + 32u * k;
                    if (c < nI) acc[k] += l[a.x + r * a.y + c * a.z] * xr;
                }
            }
        }
        barrier();
    }
    if (stop_shared != 0u) {
        if (t == 0u) atomicOr(gave_up, 1u);
        return;
    }
    // s = b_I − Σ, reduced across the invocations that share a row (forward) or column.
    if (transposed == 0u) {
        for (uint q = 0u; q < RQ; q++) red[ty + 8u * q][tx] = acc[q];
    } else {
        for (uint k = 0u; k < CK; k++) red[tx + 32u * k][ty] = acc[k];
    }
    barrier();
    if (t < nI) {
        float s = 0.0;
        uint parts = transposed == 0u ? 32u : 8u;
        for (uint p = 0u; p < parts; p++) s += red[t][p];
        xs[t] = x[xo + (sI + t) * x_row] - s;
    } else if (t < NB) {
        xs[t] = 0.0;
    }
    barrier();
    // x_I = L_II⁻¹·s (forward) or L_II⁻ᵀ·s (backward); the inverse is NB-strided, row-major.
    uint base = I * NB * NB;
    for (uint q = 0u; q < RQ; q++) acc[q] = 0.0;
    if (transposed == 0u) {
        for (uint q = 0u; q < RQ; q++) {
            uint r = ty + 8u * q;
            for (uint k = 0u; k < CK; k++) {
                uint c = tx + 32u * k;
                acc[q] += inv[base + r * NB + c] * xs[c];
            }
        }
        for (uint q = 0u; q < RQ; q++) red[ty + 8u * q][tx] = acc[q];
    } else {
        for (uint q = 0u; q < RQ; q++) {
            uint r = ty + 8u * q;
            for (uint k = 0u; k < CK; k++) {
                uint c = tx + 32u * k;
                acc[k] += inv[base + r * NB + c] * xs[r];
            }
        }
        for (uint k = 0u; k < CK; k++) red[tx + 32u * k][ty] = acc[k];
    }
    barrier();
    if (t < nI) {
        float s = 0.0;
        uint parts = transposed == 0u ? 32u : 8u;
        for (uint p = 0u; p < parts; p++) s += red[t][p];
        x[xo + (sI + t) * x_row] = s;
    }
    memoryBarrierBuffer();
    barrier();
    if (t == 0u) atomicExchange(ready[fo + I], 1u);
}
