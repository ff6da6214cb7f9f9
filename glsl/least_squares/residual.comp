#version 430
// r = f − A·y in double precision (Algorithm 1's residual rᵏ = AD²b − AD²Aᵀxᵏ with
// y = D²Aᵀxᵏ): one work group per row of A (m x n, row-major), its invocations summing
// strided parts of the row, then a tree reduction in shared memory.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) readonly buffer FBuf { double f[]; };
layout(std430, binding = 2) readonly buffer YBuf { double y[]; };
layout(std430, binding = 3) writeonly buffer RBuf { double r[]; };

uniform uint m;
uniform uint n;
// Columns col0 .. col1 of A in this launch (the host cuts n so that no invocation loops past
// the software renderers' iteration limit); later launches read f = r.
uniform uint col0;
uniform uint col1;

shared double partial[64];

void main() {
    uint t = gl_LocalInvocationID.x;
    // Rows are spread over the groups dispatched, however many there are.
    for (uint i = gl_WorkGroupID.x; i < m; i += gl_NumWorkGroups.x) {
        double sum = 0.0LF;
        for (uint j = col0 + t; j < col1; j += 64u) {
            sum = fma(a[i * n + j], y[j], sum);
        }
        partial[t] = sum;
        barrier();
        for (uint s = 32u; s > 0u; s >>= 1) {
            if (t < s) partial[t] += partial[t + s];
            barrier();
        }
        if (t == 0u) r[i] = f[i] - partial[0];
        barrier();
    }
}
