// A block's row interchanges (LAPACK's: row p swapped with piv[p] at step p, for p in
// k0 .. k0+b, b <= 64) on the columns outside the block's own k0 .. k0+b, which its leaves
// interchanged already: the Gauss-Jordan look-ahead (src/inverse/gje.rs) leaves them until the
// previous block's update of those columns is done. The touched rows are the block's and the
// rows swapped into it (slot s < b: row k0+s; slot b+i: row piv[k0+i] when it lies below the
// block and no earlier slot stands for it). The row at slot s ends with the content of row
// sigma(s): the swaps applied to its row in reverse order. Each work group owns 64 columns,
// reads every touched entry of them into registers, then writes them: no group reads what
// another writes.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer PivBuf { uint piv[]; };

uniform uint n;
uniform uint k0;
uniform uint b;

const uint NONE = 0xFFFFFFFFu;

shared uint pivots[64];
// By slot: the row it stands for (NONE: unused or unmoved) and the row its content comes from.
shared uint dest[128];
shared uint source[128];

void main() {
    uint t = gl_LocalInvocationID.x;
    if (t < b) pivots[t] = piv[k0 + t];
    barrier();
    if (t < 2u * b) {
        uint row = t < b ? k0 + t : pivots[t - b];
        bool live = t < b || row >= k0 + b;
        for (uint i = 0u; live && t >= b && i < t - b; ++i) {
            if (pivots[i] == row) live = false;
        }
        uint from = row;
        for (uint pp = b; pp > 0u; --pp) {
            uint p = k0 + pp - 1u;
            uint q = pivots[pp - 1u];
            from = from == p ? q : (from == q ? p : from);
        }
        dest[t] = live && from != row ? row : NONE;
        source[t] = from;
    } else if (t < 128u) {
        dest[t] = NONE;
        source[t] = NONE;
    }
    barrier();
    uint c = t % 64u;
    uint q = t / 64u;
    uint jp = gl_WorkGroupID.x * 64u + c;
    uint j = jp < k0 ? jp : jp + b;
    bool col = jp + b < n;
    float v[32];
    for (uint i = 0u; i < 32u; ++i) {
        uint s = q + 4u * i;
        v[i] = col && dest[s] != NONE ? a[source[s] * n + j] : 0.0;
    }
    barrier();
    for (uint i = 0u; i < 32u; ++i) {
        uint s = q + 4u * i;
        if (col && dest[s] != NONE) a[dest[s] * n + j] = v[i];
    }
}
