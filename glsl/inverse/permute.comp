// Moves whole rows of an n x n row-major matrix after the leaf panel's column steps (leaf.comp):
// the pivot chosen at step c0+t, chosen[t], goes to row c0+t, as LAPACK's row interchanges
// would have put it (row q swapped with piv[q] at step q, in order). Each work group replays
// the w <= 32 interchanges in shared memory over the at most 2w rows they touch (slot s < w:
// row c0+s; slot w+t: row chosen[t] when it lies below the leaf), then mode 0 copies each
// touched row's new content into `moved` (2w rows of n) and mode 1 writes it back; mode 0's
// first group records piv[c0+t]. Columns by 256 per work group (x), slots along y.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) buffer MovedBuf { float moved[]; };
layout(std430, binding = 2) readonly buffer ChosenBuf { uint chosen[]; };
layout(std430, binding = 3) writeonly buffer PivBuf { uint piv[]; };

uniform uint n;
uniform uint c0;
uniform uint w;
uniform int mode;

// The row each slot stands for, the row whose content it holds now, where each slot's
// original row is now.
shared uint row_of[64];
shared uint content[64];
shared uint where_now[64];

uint slot(uint row) {
    if (row < c0 + w) return row - c0;
    uint s = 0u;
    for (uint t = 0u; t < w; ++t) {
        if (chosen[t] == row) s = w + t;
    }
    return s;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    if (t < 2u * w) {
        uint row = t < w ? c0 + t : chosen[t - w];
        // A chosen row inside the leaf already has its slot below w: this slot is unused.
        row_of[t] = (t >= w && row < c0 + w) ? 0xFFFFFFFFu : row;
        content[t] = row;
        where_now[t] = row;
    }
    barrier();
    if (t == 0u) {
        for (uint k = 0u; k < w; ++k) {
            uint q = c0 + k;
            uint r = chosen[k];
            uint at = where_now[slot(r)];
            if (gl_WorkGroupID.x == 0u && gl_WorkGroupID.y == 0u && mode == 0) piv[q] = at;
            if (at != q) {
                uint rq = content[slot(q)];
                content[slot(q)] = r;
                content[slot(at)] = rq;
                where_now[slot(r)] = q;
                where_now[slot(rq)] = at;
            }
        }
    }
    barrier();
    uint s = gl_WorkGroupID.y;
    uint j = gl_WorkGroupID.x * 256u + t;
    uint dst = row_of[s];
    if (j >= n || dst == 0xFFFFFFFFu || content[s] == dst) return;
    if (mode == 0) {
        moved[s * n + j] = a[content[s] * n + j];
    } else {
        a[dst * n + j] = moved[s * n + j];
    }
}
