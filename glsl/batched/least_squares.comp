// Batched weighted least squares min ‖Dₚ(bₚ − Aₚᵀxₚ)‖₂ in one pass, one work group per
// problem (common.glsl, observations.glsl): Cₚ = Aₚ·diag(dₚ)·Aₚᵀ and gₚ = Aₚ·diag(dₚ)·bₚ
// formed on chip (Algorithm 3), factored (Algorithm 5), both triangular solves, then REFINE
// steps of Algorithm 1's refinement: the residual Aₚ·Dₚ²·(bₚ − Aₚᵀxₚ) from A, d and b
// themselves in f64, the correction solved with the f32 factor, x kept in f64. Writes x (f64)
// and LAPACK's INFO (N + 1 where a pivot says C is singular to working precision:
// singular_pivot()); a problem that fails has x all NaN. With RESIDENT (the plan's
// Residual::Resident) A, d and b are staged once and the residual reads them from shared
// memory (no second read of A, two barriers per step rather than two per staged block);
// with DIRECT_RESIDUAL (Residual::Direct) the rows' sums read A from global memory without
// staging it (three barriers per step where the observations are at most T). With GRAM (the
// plan's AssemblyPass::Separate) C and g come from the assembly's own launch (gram.comp)
// instead of being formed here, and with NORMAL_RESIDUAL (Residual::Normal) each step's
// residual is g − C·x from that launch's f64 C and g, without reading A.
layout(std430, binding = 2) readonly buffer BBuf { float b[]; };
layout(std430, binding = 4) writeonly buffer XBuf { double x[]; };
#ifdef GRAM
// C's packed lower triangle and g per problem (NP + N values), formed by the assembly's own
// launch (gram.comp; the plan's AssemblyPass::Separate) before this one; in f64 with
// NORMAL_RESIDUAL (the plan's Residual::Normal), whose refinement reads them instead of A.
#ifdef NORMAL_RESIDUAL
layout(std430, binding = 7) readonly buffer GramBuf { double gram[]; };
#else
layout(std430, binding = 7) readonly buffer GramBuf { float gram[]; };
#endif
#endif

#ifdef DIRECT_RESIDUAL
// A as runs of 4 observations (RUN_VEC4: the observations a multiple of 4, so every run is
// aligned), for the direct residual's row sums.
layout(std430, binding = 0) readonly buffer ABuf4 { vec4 a4[]; };
// Runs of 4 observations per lane of a row in a block of T observations, and the runs
// loaded together before their products.
#define RUNS ((T / 4 + RL - 1) / RL)
#define RUN_BATCH 4
#endif
// Loads of a column issued together in the weighted residuals (at most the rows).
#define RES_BATCH (N < 32 ? N : 32)

#ifdef RESIDENT
// b's KR columns, staged with A's and d's for the whole kernel.
shared float Bs_[P][KR];
#else
shared float Bs_[P][KC];
#endif
#define Bs Bs_[sub]
shared double X_[P][N];
#define X X_[sub]
#ifdef RESIDENT
// The weighted residuals dₖ·(bₖ − (Aᵀx)ₖ) of all KR observations (0 past the last).
shared double Part_[P][KR];
#else
// The weighted residuals dₖ·(bₖ − (Aᵀx)ₖ) of T observations, one per invocation.
shared double Part_[P][T];
#endif
#define Part Part_[sub]

// b's columns k0 .. k0 + KC, fetched beside A's and d's.
float fetched_b;

void fetch_b(uint k0) {
    uint k = k0 + t;
    fetched_b = t < uint(KC) && k < observations ? b[problem * observations + k] : 0.0;
}

void main() {
    start();
#ifdef GRAM
    // C and g read from the assembly's launch: no staging, one barrier.
    uint gbase = problem * uint(NP + N);
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = float(gram[gbase + e]);
    float g = t < uint(N) ? float(gram[gbase + uint(NP) + t]) : 0.0;
    sync();
#elif defined(RESIDENT)
    // A, d and b staged once (one barrier), then C and g block by block with no barrier
    // between blocks (each invocation adds into its own entries), one barrier after.
    assembly_begin();
    stage_resident();
    for (uint k = t; k < uint(KR); k += uint(T)) {
        Bs[k] = k < observations ? b[problem * observations + k] : 0.0;
    }
    sync();
    float g = 0.0;
    for (uint k0 = 0u; k0 < uint(KR); k0 += uint(KC)) {
        kbase = k0;
        assembly_step();
        if (t < uint(N)) {
            for (int kk = 0; kk < KC; kk++) g = fma(AS(t, kk) * DS(kk), Bs[k0 + uint(kk)], g);
        }
    }
    kbase = 0u;
    sync();
    assembly_end();
#else
    // C and g together, one staging of each column block.
    assembly_begin();
    float g = 0.0;
    fetch(0u);
    fetch_b(0u);
    for (uint k0 = 0u; k0 < observations; k0 += uint(KC)) {
        if (t < uint(KC)) Bs[t] = fetched_b;
        store_fetched();
        // The next block's loads in flight during this block's products.
        fetch(k0 + uint(KC));
        fetch_b(k0 + uint(KC));
        assembly_step();
        if (t < uint(N)) {
            for (int kk = 0; kk < KC; kk++) g = fma(AS(t, kk) * DS(kk), Bs[kk], g);
        }
        sync();
    }
    assembly_end();
#endif
    // A failed problem runs the solves too (on garbage, its x never written): the group's
    // other problems meet the same barriers.
    // C's diagonal, for the pivot test after the factor; read by all before the factor's
    // first writes.
    float diag = t < uint(N) ? S(lower_index(t, t)) : 0.0;
    sync();
    int status = factor();
    bool singular = singular_pivot(diag);
    {
        float x0 = solve(g);
        if (t < uint(N)) X[t] = double(x0);
        sync();
        for (int step = 0; step < REFINE; step++) {
            // r = A·D²·(b − Aᵀx) in f64, T observations at a time: invocation t forms
            // observation k0 + t's weighted residual from A's column in global memory (the
            // group's reads contiguous), then the rows sum them over staged column blocks.
            double r = 0.0LF;
#if defined(NORMAL_RESIDUAL)
            // r = g − C·x in f64 from the separate assembly's f64 C and g (each an f64 sum of
            // exact products): no read of A, no barrier. Row t: its stored entries, then
            // column t below the diagonal, eight loads issued together.
            if (t < uint(N)) {
                r = gram[gbase + uint(NP) + t];
                uint row = gbase + t * (t + 1u) / 2u;
                for (uint j0 = 0u; j0 < uint(N); j0 += 8u) {
                    double c[8];
                    for (uint u = 0u; u < 8u; u++) {
                        uint j = min(j0 + u, uint(N) - 1u);
                        c[u] = gram[j <= t ? row + j : gbase + j * (j + 1u) / 2u + t];
                    }
                    for (uint u = 0u; u < 8u && j0 + u < uint(N); u++) r -= c[u] * X[j0 + u];
                }
            }
#elif defined(RESIDENT)
            // From the staged A, d and b (no global reads): the weighted residuals of the
            // observations (invocation t takes t, t + T, …), one barrier, then row t's sum.
            for (uint k = t; k < uint(KR); k += uint(T)) {
                double s = 0.0LF;
                if (k < observations) {
                    s = double(Bs[k]);
                    for (uint i = 0u; i < uint(N); i++) s -= double(As_[sub][i][k]) * X[i];
                    s *= double(Ds_[sub][k]);
                }
                Part[k] = s;
            }
            sync();
            if (t < uint(N)) {
                for (uint k = 0u; k < uint(KR); k++) r += double(As_[sub][t][k]) * Part[k];
            }
#else
            uint a_base = problem * uint(N) * observations;
            for (uint k0 = 0u; k0 < observations; k0 += uint(T)) {
                {
                    uint k = k0 + t;
                    double s = 0.0LF;
                    if (k < observations) {
                        s = double(b[problem * observations + k]);
                        // RES_BATCH loads of the column issued together, then their
                        // products.
                        for (uint i0 = 0u; i0 < uint(N); i0 += uint(RES_BATCH)) {
                            float col[RES_BATCH];
                            for (uint u = 0u; u < uint(RES_BATCH); u++) {
                                uint i = min(i0 + u, uint(N) - 1u);
                                col[u] = a[a_base + i * observations + k];
                            }
                            for (uint u = 0u; u < uint(RES_BATCH) && i0 + u < uint(N); u++) {
                                s -= double(col[u]) * X[i0 + u];
                            }
                        }
                        s *= double(d[problem * observations + k]);
                    }
                    Part[t] = s;
                }
                sync();
#ifdef DIRECT_RESIDUAL
                // Row i = t / RL's part of the sum read straight from global memory, no
                // staging: lane h takes the block's runs of 4 observations h, h + RL, …
                // (a row's RL lanes read 16·RL contiguous bytes together); the lanes' parts
                // add up after the last block.
                // RUN_BATCH runs are loaded together before their products (16-byte loads
                // where the observations are a multiple of 4: RUN_VEC4).
                if (t < uint(N * RL)) {
                    uint i = t / uint(RL);
                    uint row = a_base + i * observations;
                    uint lane = t % uint(RL);
                    for (uint c0 = 0u; c0 < uint(RUNS); c0 += uint(RUN_BATCH)) {
                        vec4 v[RUN_BATCH];
                        for (uint u = 0u; u < uint(RUN_BATCH); u++) {
                            uint c = lane + (c0 + u) * uint(RL);
                            uint k = k0 + 4u * c;
#ifdef RUN_VEC4
                            v[u] = 4u * c < uint(T) && k < observations ? a4[(row + k) / 4u]
                                                                        : vec4(0.0);
#else
                            for (uint w = 0u; w < 4u; w++) {
                                v[u][w] = 4u * c + w < uint(T) && k + w < observations
                                    ? a[row + k + w]
                                    : 0.0;
                            }
#endif
                        }
                        for (uint u = 0u; u < uint(RUN_BATCH); u++) {
                            uint c = lane + (c0 + u) * uint(RL);
                            if (4u * c < uint(T)) {
                                for (uint w = 0u; w < 4u; w++) {
                                    r += double(v[u][w]) * Part[4u * c + w];
                                }
                            }
                        }
                    }
                }
                // Every read of Part done before the next block (or the parts) writes it.
                sync();
#else
                fetch(k0);
                for (uint kb = 0u; kb < uint(T) && k0 + kb < observations; kb += uint(KC)) {
                    store_fetched();
                    fetch(k0 + kb + uint(KC));
                    if (t < uint(N)) {
                        for (int kk = 0; kk < KC; kk++) {
                            r += double(AS(t, kk)) * Part[kb + uint(kk)];
                        }
                    }
                    sync();
                }
#endif
            }
#ifdef DIRECT_RESIDUAL
            // Row t's RL parts summed (in lane order).
            Part[t] = r;
            sync();
            r = 0.0LF;
            if (t < uint(N)) {
                for (uint h = 0u; h < uint(RL); h++) r += Part[t * uint(RL) + h];
            }
#endif
#endif
            float dx = solve(float(r));
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
