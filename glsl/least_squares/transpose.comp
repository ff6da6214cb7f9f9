#version 430
// a[i·n + col0 + l] = lines[l·m + i]: `count` columns of A (m x n, f64, row-major) that arrived
// as contiguous lines (the caller's observations-by-unknowns X is Aᵀ row by row), put in place
// through a 32 x 32 tile in shared memory so that both the reads and the writes of a work group
// run along memory. The residual kernels then read A as if it had come row-major.
layout(local_size_x = 32, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer LinesBuf { double lines[]; };
layout(std430, binding = 1) writeonly buffer ABuf { double a[]; };

uniform uint m;
uniform uint n;
// The first column of A these lines are, and how many there are.
uniform uint col0;
uniform uint count;

shared double tile[32 * 33];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint i0 = gl_WorkGroupID.x * 32u;
    uint l0 = gl_WorkGroupID.y * 32u;
    for (uint r = ty; r < 32u; r += 8u) {
        uint l = l0 + r;
        uint i = i0 + tx;
        if (l < count && i < m) tile[r * 33u + tx] = lines[l * m + i];
    }
    barrier();
    for (uint r = ty; r < 32u; r += 8u) {
        uint i = i0 + r;
        uint l = l0 + tx;
        if (i < m && l < count) a[i * n + col0 + l] = tile[tx * 33u + r];
    }
}
