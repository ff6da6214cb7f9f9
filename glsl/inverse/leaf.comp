// One column step of the LU with partial pivoting of a leaf panel (columns c0 .. c0+w, w <= 32)
// over rows c0 .. n of an n x n row-major matrix, one dispatch per column and no row moved:
// each work group owns 256 rows (one per invocation). The pivot of column p is found from the
// per-group maxima the previous dispatch left in `part_in` (every group reduces them alike, so
// all agree), the pivot row r is recorded in chosen[p - c0], and every row not yet chosen in
// this leaf is updated in place: a(i, p) = l = a(i, p)/a(r, p), a(i, j) -= l·a(r, j) for the
// leaf's columns j > p; the group's largest |a(i, p+1)| over those rows goes to `part_out`.
// Rows chosen earlier hold their U row with the multipliers of earlier steps to its left (the
// packed LU row); permute.comp then moves them into place. start = 1: only the maxima of
// column c0. Without `pivoting` (the LU of an SPD matrix) r = p and a pivot (not its
// magnitude) at or below `tol` fails: its Cholesky pivot. A failing pivot (or NaN) records p and
// the pivot in the status word, once: the first singular column.
layout(local_size_x = 256) in;

struct Candidate {
    float v;
    uint i;
};

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer PartIn { Candidate part_in[]; };
layout(std430, binding = 2) writeonly buffer PartOut { Candidate part_out[]; };
layout(std430, binding = 3) buffer ChosenBuf { uint chosen[]; };
layout(std430, binding = 4) buffer StatusBuf { uint status[]; };

uniform uint n;
uniform uint c0;
uniform uint w;
uniform uint p;
uniform uint groups;
uniform float tol;
uniform int pivoting;
uniform int start;

shared float best_v[256];
shared uint best_i[256];
shared float pivot_row[32];
shared uint done[32];
shared uint pivot_index;

const uint NONE = 0xFFFFFFFFu;

// Keeps the larger candidate in slot t (the smaller row on ties; NaN counts as the largest).
void reduce(uint t) {
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) {
            float o = best_v[t + s];
            uint oi = best_i[t + s];
            if (o > best_v[t] || (o == best_v[t] && oi < best_i[t])) {
                best_v[t] = o;
                best_i[t] = oi;
            }
        }
        barrier();
    }
}

float magnitude(float x) {
    return isnan(x) ? 3.0e38 : abs(x);
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint i = c0 + gl_WorkGroupID.x * 256u + t;
    uint end = c0 + w;
    uint next = p + 1u;
    if (start != 0) {
        next = c0;
    } else {
        // The pivot of column p.
        float bv = -1.0;
        uint bi = NONE;
        for (uint g = t; pivoting != 0 && g < groups; g += 256u) {
            Candidate c = part_in[g];
            if (c.v > bv || (c.v == bv && c.i < bi)) {
                bv = c.v;
                bi = c.i;
            }
        }
        best_v[t] = bv;
        best_i[t] = bi;
        reduce(t);
        if (t == 0u) {
            uint r = (pivoting == 0 || best_i[0] == NONE) ? p : best_i[0];
            pivot_index = r;
        }
        if (t < p - c0) done[t] = chosen[t];
        barrier();
        uint r = pivot_index;
        if (t < end - p) pivot_row[t] = a[r * n + p + t];
        barrier();
        float piv = pivot_row[0];
        if (gl_WorkGroupID.x == 0u && t == 0u) {
            chosen[p - c0] = r;
            float size = pivoting != 0 ? abs(piv) : piv;
            if (!(size > tol) && status[0] == NONE) {
                status[0] = p;
                status[1] = floatBitsToUint(piv);
            }
        }
        bool live = i < n && i != r;
        for (uint k = 0u; k < p - c0; ++k) {
            if (done[k] == i) live = false;
        }
        float cand = -1.0;
        if (live) {
            float l = a[i * n + p] / piv;
            a[i * n + p] = l;
            for (uint j = p + 1u; j < end; ++j) {
                float v = a[i * n + j] - l * pivot_row[j - p];
                a[i * n + j] = v;
                if (j == next) cand = magnitude(v);
            }
        }
        best_v[t] = cand;
        best_i[t] = live && next < end ? i : NONE;
        reduce(t);
        if (t == 0u) part_out[gl_WorkGroupID.x] = Candidate(best_v[0], best_i[0]);
        return;
    }
    // start: the maxima of column c0 over rows c0 .. n.
    bool inside = i < n;
    best_v[t] = inside ? magnitude(a[i * n + next]) : -1.0;
    best_i[t] = inside ? i : NONE;
    reduce(t);
    if (t == 0u) part_out[gl_WorkGroupID.x] = Candidate(best_v[0], best_i[0]);
}
