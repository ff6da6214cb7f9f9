// Partial pivoting for column p of an n x n row-major matrix (one work group): the row r >= p
// with the largest |a(r, p)| (smallest r on ties) is swapped with row p across all n columns,
// r is recorded in piv[p], and column p and row p's panel part (columns k0 .. k0+b) are saved
// to `saved` (n + b values) for the panel update that follows. A pivot at or below `tol` (or
// NaN) records p and the pivot in the status word, once: the first singular column. Without
// `pivoting` (the LU of an SPD matrix) row p stays and a pivot at or below `tol` (not its
// magnitude: a negative pivot fails) is recorded: the Cholesky pivot of that column.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) buffer SavedBuf { float saved[]; };
layout(std430, binding = 2) buffer PivBuf { uint piv[]; };
layout(std430, binding = 3) buffer StatusBuf { uint status[]; };

uniform uint n;
uniform uint p;
uniform uint k0;
uniform uint b;
uniform float tol;
uniform int pivoting;

shared float best_v[256];
shared uint best_i[256];

void main() {
    uint t = gl_LocalInvocationID.x;
    float bv = -1.0;
    uint bi = p;
    for (uint r = p + t; pivoting != 0 && r < n; r += 256u) {
        float v = abs(a[r * n + p]);
        if (v > bv) {
            bv = v;
            bi = r;
        }
    }
    best_v[t] = bv;
    best_i[t] = bi;
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
    uint r = best_i[0];
    if (r != p) {
        for (uint j = t; j < n; j += 256u) {
            float x = a[p * n + j];
            a[p * n + j] = a[r * n + j];
            a[r * n + j] = x;
        }
    }
    memoryBarrierBuffer();
    barrier();
    for (uint i = t; i < n; i += 256u) saved[i] = a[i * n + p];
    for (uint j = t; j < b; j += 256u) saved[n + j] = a[p * n + k0 + j];
    if (t == 0u) {
        piv[p] = r;
        float pv = a[p * n + p];
        float size = pivoting != 0 ? abs(pv) : pv;
        if (!(size > tol) && status[0] == 0xFFFFFFFFu) {
            status[0] = p;
            status[1] = floatBitsToUint(pv);
        }
    }
}
