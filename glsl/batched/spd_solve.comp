// Batched SPD solve Cₚ·xₚ = bₚ, one work group per problem (common.glsl): C's lower triangle
// (packed by rows, NP per problem, the batch outer: the host sends only the triangle) factored
// in f32, both triangular solves, then REFINE steps of iterative refinement with the residual
// bₚ − Cₚ·xₚ in f64 (from C's triangle as given) and x kept in f64. Writes x (f64) and LAPACK's INFO (N + 1 where
// a pivot says C is singular to working precision: singular_pivot()); a problem that fails
// has x all NaN.
layout(std430, binding = 2) readonly buffer BBuf { float b[]; };
layout(std430, binding = 3) readonly buffer CBuf { float c[]; };
layout(std430, binding = 4) writeonly buffer XBuf { double x[]; };

shared double X_[P][N];
#define X X_[sub]

void main() {
    start();
    uint base = problem * uint(NP);
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = c[base + e];
    sync();
    // C's diagonal, for the pivot test after the factor: from C's buffer, which nobody
    // writes (S's diagonal may already be updated by the factor's other invocations).
    float diag = t < uint(N) ? c[base + lower_index(t, t)] : 0.0;
    // A failed problem runs the solves too (on garbage, its x never written): the group's
    // other problems meet the same barriers.
    int status = factor();
    bool singular = singular_pivot(diag);
    {
        float x0 = solve(t < uint(N) ? b[problem * uint(N) + t] : 0.0);
        if (t < uint(N)) X[t] = double(x0);
        sync();
        for (int step = 0; step < REFINE; step++) {
            float rt = 0.0;
            if (t < uint(N)) {
                double r = double(b[problem * uint(N) + t]);
                for (uint k = 0u; k < uint(N); k++) {
                    float cik = c[base + (k <= t ? lower_index(t, k) : lower_index(k, t))];
                    r -= double(cik) * X[k];
                }
                rt = float(r);
            }
            float dx = solve(rt);
            if (t < uint(N)) X[t] += double(dx);
            sync();
        }
    }
    // Any invocation that saw a non-finite x, or a pivot that says C is singular to working
    // precision, marks the problem (shared so all agree): INFO −1 or N + 1 where the factor
    // passed, N + 1 first (x of a singular C is noise, whatever its size).
    bool bad_x = t < uint(N) && (isnan(X[t]) || isinf(X[t]));
    if (t < uint(N)) V[t] = (bad_x ? 1.0 : 0.0) + (singular ? 2.0 : 0.0);
    sync();
    bool overflow = false;
    bool flagged = false;
    for (uint i = 0u; i < uint(N); i++) {
        overflow = overflow || V[i] == 1.0 || V[i] == 3.0;
        flagged = flagged || V[i] >= 2.0;
    }
    if (status == 0 && flagged) status = N + 1;
    if (status == 0 && overflow) status = -1;
    double nan = double(uintBitsToFloat(0x7FC00000u));
    if (occupied && t < uint(N)) x[problem * uint(N) + t] = status != 0 ? nan : X[t];
    if (occupied && t == 0u) info[problem] = status;
}
