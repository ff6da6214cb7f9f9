// The observations of a problem with K = `observations` columns of A (N x K, row-major, the
// batch outer), the weights d (the diagonal of D²) and the right side b: staged KC columns at
// a time into shared memory, zero past the last column.
layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer DBuf { float d[]; };

uniform uint observations;

shared float As[N][KC + 1];
shared float Ds[KC];

// Stages columns k0 .. k0 + KC of the problem's A and d (then syncs).
void stage(uint k0) {
    uint base = problem * uint(N) * observations;
    for (uint e = t; e < uint(N * KC); e += uint(T)) {
        uint i = e / uint(KC);
        uint kk = e % uint(KC);
        uint k = k0 + kk;
        As[i][kk] = k < observations ? a[base + i * observations + k] : 0.0;
    }
    if (t < uint(KC)) {
        uint k = k0 + t;
        Ds[t] = k < observations ? d[problem * observations + k] : 0.0;
    }
    sync();
}

// S ← the lower triangle of A·diag(d)·Aᵀ (Algorithm 3's sum, KC columns per step), every
// invocation adding into the entries it owns.
void assemble() {
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = 0.0;
    for (uint k0 = 0u; k0 < observations; k0 += uint(KC)) {
        stage(k0);
        for (uint e = t; e < uint(NP); e += uint(T)) {
            uvec2 ik = triangle_entry(e);
            float sum = 0.0;
            for (int kk = 0; kk < KC; kk++) sum = fma(As[ik.x][kk] * Ds[kk], As[ik.y][kk], sum);
            S(e) += sum;
        }
        sync();
    }
}
