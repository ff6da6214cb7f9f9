// Batched assembly: the lower triangle of Cₚ = Aₚ·diag(dₚ)·Aₚᵀ for every problem p of the
// launch, one work group per problem (common.glsl, observations.glsl), written to C packed by
// rows (NP per problem, the batch outer; the host unpacks it, zeros above the diagonal).
layout(std430, binding = 3) writeonly buffer CBuf { float c[]; };
#ifdef GRAM
// C's packed lower triangle per problem (NP + N floats apart), formed by the assembly's own
// launch (gram.comp; the plan's AssemblyPass::Separate) before this one.
layout(std430, binding = 7) readonly buffer GramBuf { float gram[]; };
#endif

void main() {
    start();
#ifdef GRAM
    uint gbase = problem * uint(NP + N);
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = gram[gbase + e];
    sync();
#else
    assemble();
#endif
    uint base = problem * uint(NP);
    for (uint e = t; occupied && e < uint(NP); e += uint(T)) c[base + e] = S(e);
}
