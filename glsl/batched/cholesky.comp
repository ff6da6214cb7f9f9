// Batched Cholesky: Cₚ = Lₚ·Lₚᵀ for every problem p of the launch, one work group per problem
// (common.glsl). Reads only the lower triangle of C (full storage, N x N per problem, the
// batch outer); writes L in full storage with zeros above the diagonal, and LAPACK's INFO per
// problem. A problem that fails has L all NaN, so no partial factor passes for one.
layout(std430, binding = 3) readonly buffer CBuf { float c[]; };
layout(std430, binding = 4) writeonly buffer LBuf { float l[]; };

void main() {
    start();
    uint base = problem * uint(N * N);
    // C's lower triangle into packed storage (full rows read, so the reads are contiguous).
    for (uint e = t; e < uint(N * N); e += uint(T)) {
        uint i = e / uint(N);
        uint k = e % uint(N);
        if (k <= i) S(lower_index(i, k)) = c[base + e];
    }
    sync();
    int status = factor();
    float nan = uintBitsToFloat(0x7FC00000u);
    for (uint e = t; occupied && e < uint(N * N); e += uint(T)) {
        uint i = e / uint(N);
        uint k = e % uint(N);
        l[base + e] = status != 0 ? nan : (k <= i ? S(lower_index(i, k)) : 0.0);
    }
    if (occupied && t == 0u) info[problem] = status;
}
