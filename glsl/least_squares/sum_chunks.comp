#version 430
// y = D²·(Aᵀ·x): the row chunks' partial sums of weighted_transpose_product.comp added in
// chunk order (a fixed order: the same x gives the same y), then weighted by d.
layout(local_size_x = 64) in;

layout(std430, binding = 1) readonly buffer DBuf { double d[]; };
layout(std430, binding = 2) readonly buffer PartialBuf { double partial[]; };
layout(std430, binding = 3) writeonly buffer YBuf { double y[]; };

uniform uint n;
// First column of this launch (launches of at most GL's work-group count).
uniform uint col_base;
uniform uint chunks;

void main() {
    uint j = col_base + gl_GlobalInvocationID.x;
    if (j >= n) return;
    double sum = 0.0LF;
    for (uint c = 0u; c < chunks; ++c) {
        sum += partial[c * n + j];
    }
    y[j] = d[j] * sum;
}
