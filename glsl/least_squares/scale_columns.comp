#version 430
// out(i, j) = (2^a_exp·A(i, j))·(2^d_exp·d(j)) for the row-major m x n A in f64: the left
// factor of C' = 2^a_exp·(A·D²'·Aᵀ) assembled in f64 (D²' = 2^d_exp·D²). Each power of two
// multiplies in two halves (each representable for |e| up to about 2000), as to_single.comp
// does: ldexp of a double zero is not zero on every driver, and a product keeps ±0 exact.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) readonly buffer DBuf { double d[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { double scaled[]; };

uniform uint m;
uniform uint n;
uniform int a_exp;
uniform int d_exp;

void main() {
    uint len = m * n;
    uint stride = gl_NumWorkGroups.x * 256u;
    int a_half = a_exp / 2;
    int d_half = d_exp / 2;
    double a_first = ldexp(1.0LF, a_half);
    double a_second = ldexp(1.0LF, a_exp - a_half);
    double d_first = ldexp(1.0LF, d_half);
    double d_second = ldexp(1.0LF, d_exp - d_half);
    for (uint i = gl_GlobalInvocationID.x; i < len; i += stride) {
        double w = d[i % n] * d_first * d_second;
        scaled[i] = (a[i] * a_first * a_second) * w;
    }
}
