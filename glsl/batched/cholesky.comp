// Batched Cholesky: Cₚ = Lₚ·Lₚᵀ for every problem p of the launch, one work group per problem
// (common.glsl). Reads C's lower triangle packed by rows (NP per problem, the batch outer: the
// host sends only the triangle); writes L's the same way (the host unpacks it), and LAPACK's
// INFO per problem. A problem that fails has L all NaN, so no partial factor passes for one.
layout(std430, binding = 3) readonly buffer CBuf { float c[]; };
layout(std430, binding = 4) writeonly buffer LBuf { float l[]; };

void main() {
    start();
    uint base = problem * uint(NP);
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = c[base + e];
    sync();
    int status = factor();
    float nan = uintBitsToFloat(0x7FC00000u);
    for (uint e = t; occupied && e < uint(NP); e += uint(T)) {
        l[base + e] = status != 0 ? nan : S(e);
    }
    if (occupied && t == 0u) info[problem] = status;
}
