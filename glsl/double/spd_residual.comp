// r = b − C·x in f64 for the symmetric C of order n held as its stored triangle packed by
// rows (packed_c.glsl, as spd_unpack.comp reads it): one work group per row i, its invocations
// over the columns, partial sums added in shared memory. Rows row0 .. row0 + gl_NumWorkGroups.x.
layout(local_size_x = 128) in;

layout(std430, binding = 1) readonly buffer BBuf { double b[]; };
layout(std430, binding = 2) readonly buffer XBuf { double x[]; };
layout(std430, binding = 3) writeonly buffer RBuf { double r[]; };

uniform uint n;
uniform int upper;
uniform uint row0;
// Where x and r begin in their buffers (the f64 factor's solve keeps several vectors in one).
uniform uint x_off;
uniform uint r_off;

shared double sums[128];

// C(i, j) for the stored triangle.
double entry(uint i, uint j) {
    uint lo = min(i, j);
    uint hi = max(i, j);
    return packed_c(upper != 0 ? lo * n - (lo * (lo - 1u)) / 2u + (hi - lo)
                               : (hi * (hi + 1u)) / 2u + lo);
}

void main() {
    uint i = row0 + gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    double s = 0.0;
    if (i < n) {
        for (uint j = t; j < n; j += 128u) {
            s += entry(i, j) * x[x_off + j];
        }
    }
    sums[t] = s;
    barrier();
    for (uint w = 64u; w > 0u; w >>= 1u) {
        if (t < w) {
            sums[t] += sums[t + w];
        }
        barrier();
    }
    if (t == 0u && i < n) {
        r[r_off + i] = b[i] - sums[0];
    }
}
