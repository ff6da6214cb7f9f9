#version 430
// partial[c·n + j] = Σ_{i in chunk c} A(i,j)·x(i) in double precision (the inner half of
// Algorithm 1's residual, Aᵀ·x, before the weights): one column j of A (m x n, row-major) per
// invocation, so neighbouring invocations read neighbouring entries of each row; the rows are
// cut into gl_NumWorkGroups.y chunks so that enough invocations run to hide memory latency
// (one invocation per column alone left most of an H200 idle). sum_chunks.comp adds the
// chunks and applies D².
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 2) readonly buffer XBuf { double x[]; };
layout(std430, binding = 3) writeonly buffer PartialBuf { double partial[]; };

uniform uint m;
uniform uint n;
// First column of this launch (launches of at most GL's work-group count).
uniform uint col_base;
uniform uint rows_per_chunk;

void main() {
    uint j = col_base + gl_GlobalInvocationID.x;
    if (j >= n) return;
    uint c = gl_WorkGroupID.y;
    uint first = c * rows_per_chunk;
    uint last = min(m, first + rows_per_chunk);
    double sum = 0.0LF;
    for (uint i = first; i < last; ++i) {
        sum = fma(a[i * n + j], x[i], sum);
    }
    partial[c * n + j] = sum;
}
