// Batched SPD solve Cₚ·xₚ = bₚ, one work group per problem (common.glsl): C's lower triangle
// (full storage, N x N per problem) factored in f32, both triangular solves, then REFINE
// steps of iterative refinement with the residual bₚ − Cₚ·xₚ in f64 (from C as given, the
// upper triangle never read) and x kept in f64. Writes x (f64) and LAPACK's INFO; a problem
// that fails has x all NaN.
layout(std430, binding = 2) readonly buffer BBuf { float b[]; };
layout(std430, binding = 3) readonly buffer CBuf { float c[]; };
layout(std430, binding = 4) writeonly buffer XBuf { double x[]; };

shared double X_[P][N];
#define X X_[sub]

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
    // A failed problem runs the solves too (on garbage, its x never written): the group's
    // other problems meet the same barriers.
    int status = factor();
    {
        float x0 = solve(t < uint(N) ? b[problem * uint(N) + t] : 0.0);
        if (t < uint(N)) X[t] = double(x0);
        sync();
        for (int step = 0; step < REFINE; step++) {
            float rt = 0.0;
            if (t < uint(N)) {
                double r = double(b[problem * uint(N) + t]);
                for (uint k = 0u; k < uint(N); k++) {
                    float cik = k <= t ? c[base + t * uint(N) + k] : c[base + k * uint(N) + t];
                    r -= double(cik) * X[k];
                }
                rt = float(r);
            }
            float dx = solve(rt);
            if (t < uint(N)) X[t] += double(dx);
            sync();
        }
        if (status == 0 && t < uint(N) && (isnan(X[t]) || isinf(X[t]))) status = -1;
    }
    // Any invocation that saw a non-finite x marks the problem (shared so all agree).
    if (t < uint(N)) V[t] = status == -1 ? 1.0 : 0.0;
    sync();
    bool overflow = false;
    for (uint i = 0u; i < uint(N); i++) overflow = overflow || V[i] != 0.0;
    if (overflow) status = -1;
    double nan = double(uintBitsToFloat(0x7FC00000u));
    if (occupied && t < uint(N)) x[problem * uint(N) + t] = status != 0 ? nan : X[t];
    if (occupied && t == 0u) info[problem] = status;
}
