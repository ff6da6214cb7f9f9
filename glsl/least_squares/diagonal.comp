#version 430
// C = A·D²·Aᵀ's diagonal without overflow or underflow, one work group per row j of A (f64,
// row-major m x n): the row's largest magnitude r_j, p_j = its binary exponent, and
// v_j = Σ_k (A(j,k)·2^-p_j)²·(d(k)·2^-q), so that C(j,j) = v_j·2^(2p_j + q) (the CPU's
// DiagonalParts, from the copy of A already on the GPU instead of a pass over it on the host).
// Writes parts[3j] = v_j, parts[3j + 1] = 2p_j + q, parts[3j + 2] = r_j.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) readonly buffer DBuf { double d[]; };
layout(std430, binding = 2) writeonly buffer PartsBuf { double parts[]; };

uniform uint n;
// The first row of this launch (launches of at most GL's work-group count along y).
uniform uint row_base;
// The binary exponent of max |d|.
uniform int q;

shared double red[256];

// 2^k for k in [-1022, 1023], exactly.
double pow2(int k) { return packDouble2x32(uvec2(0u, uint(k + 1023) << 20)); }

// The binary exponent of x > 0 (subnormals too), as the host's exponent_of.
int exponent_of(double x) {
    int e = int((unpackDouble2x32(x).y >> 20) & 0x7ffu) - 1023;
    if (e == -1023) {
        double y = x * pow2(64);
        e = int((unpackDouble2x32(y).y >> 20) & 0x7ffu) - 1023 - 64;
    }
    return e;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint row = row_base + gl_WorkGroupID.y;
    uint base = row * n;
    double mx = 0.0LF;
    for (uint k = t; k < n; k += 256u) mx = max(mx, abs(a[base + k]));
    red[t] = mx;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    mx = red[0];
    barrier();
    int p = mx > 0.0LF ? exponent_of(mx) : 0;
    int h = (-p) >> 1;
    double f1 = pow2(h);
    double f2 = pow2(-p - h);
    int hq = (-q) >> 1;
    double g1 = pow2(hq);
    double g2 = pow2(-q - hq);
    double sum = 0.0LF;
    for (uint k = t; k < n; k += 256u) {
        double v = a[base + k] * f1 * f2;
        sum += v * v * (d[k] * g1 * g2);
    }
    red[t] = sum;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    if (t == 0u) {
        parts[3u * row] = red[0];
        parts[3u * row + 1u] = double(2 * p + q);
        parts[3u * row + 2u] = mx;
    }
}
