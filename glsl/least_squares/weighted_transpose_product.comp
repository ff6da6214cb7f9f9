#version 430
// y = D²·(Aᵀ·x) in double precision (the inner half of Algorithm 1's residual): one column j
// of A (m x n, row-major) per invocation, so neighbouring invocations read neighbouring
// entries of each row.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) readonly buffer DBuf { double d[]; };
layout(std430, binding = 2) readonly buffer XBuf { double x[]; };
layout(std430, binding = 3) writeonly buffer YBuf { double y[]; };

uniform uint m;
uniform uint n;

void main() {
    uint j = gl_GlobalInvocationID.x;
    if (j >= n) return;
    double sum = 0.0LF;
    for (uint i = 0u; i < m; ++i) {
        sum = fma(a[i * n + j], x[i], sum);
    }
    y[j] = d[j] * sum;
}
