// Before a Gauss-Jordan block's products (src/inverse/gje.rs): copies the panel column
// (columns k0 .. k0+b of all n rows) into `col` (n x b, row-major) and moves block row 1
// outside the panel (rows k0 .. k0+b, columns not in k0 .. k0+b) into `row` (b x n,
// row-major), leaving zeros in A, so one product over all rows per side both updates the other
// rows and writes block row 1; one invocation per entry of each part (b·n of them). With
// `whole` set (b <= 64) the products also write the transformed panel: the panel column of A is
// zeroed too, `row` gets the identity in the panel's columns, and work group 0 forms the
// panel's b x b inverses from L11\U11 (unit lower L11 below the diagonal, U11 on and above)
// in shared memory, [L11⁻¹; U11⁻¹·L11⁻¹] stacked into `out_` (2b x b), with −I for the block's
// rows of `col` (the element groups leave those rows to it). One invocation per column there,
// no barrier after the load: column j of L11⁻¹ by forward substitution on e_j, then of
// U11⁻¹·L11⁻¹ by back substitution on it (two partial sums each, to shorten the dependent
// chains). With `steps` set instead (src/inverse/panel.rs's SplitInverse::Steps) all 256
// invocations work on each substitution step, right-looking (a barrier a step, 2b steps):
// invocation t owns column t % 64 of rows t / 64, t / 64 + 4, ... of x; `steps` 2 (Registers)
// keeps those 16 entries in registers, only the row a step needs published in shared memory
// by its owners (x's first 128 entries, for steps alternately). A zero pivot gives
// infinities; the status word has named it (leaf_finish.comp). With `prefetch` (issue 26's
// latency: src/inverse/panel.rs's PanelSettings::prefetch) work group 0 issues every load of
// L11\U11 before its first store into m (a constant trip count, unrolled: one round trip to
// memory instead of b·b/256 in turn).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) writeonly buffer ColBuf { float col[]; };
layout(std430, binding = 2) writeonly buffer RowBuf { float row[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float out_[]; };

uniform uint n;
uniform uint k0;
uniform uint b;
uniform uint base;
uniform int whole;
uniform int steps;
uniform int prefetch;

// Unpadded: 32 KiB, the least shared memory GL promises (the invocations take consecutive
// columns of x, and read m's entries all alike).
const uint STRIDE = 64u;

shared float m[64u * STRIDE];
shared float x[64u * STRIDE];

// L11\U11 (b x b, b <= 64) into m, every load issued before the first store (`prefetch`).
void load_panel_prefetched() {
    uint t = gl_LocalInvocationID.x;
    float v[16];
    for (uint i = 0u; i < 16u; ++i) {
        uint e = t + i * 256u;
        v[i] = e < b * b ? a[(k0 + e / b) * n + k0 + e % b] : 0.0;
    }
    for (uint i = 0u; i < 16u; ++i) {
        uint e = t + i * 256u;
        if (e < b * b) m[(e / b) * STRIDE + e % b] = v[i];
    }
}

// Work group 0 with `whole`: the panel's inverses.
void inverses() {
    uint t = gl_LocalInvocationID.x;
    if (prefetch != 0) {
        load_panel_prefetched();
    } else {
        for (uint e = t; e < b * b; e += 256u) {
            uint i = e / b;
            m[i * STRIDE + e % b] = a[(k0 + i) * n + k0 + e % b];
        }
    }
    barrier();
    if (t >= b) return;
    uint j = t;
    // x = L11⁻¹·e_j: zero above j, one at j, x_i = −Σ_{j <= k < i} L(i, k)·x_k below.
    for (uint i = 0u; i < j; ++i) x[i * STRIDE + j] = 0.0;
    x[j * STRIDE + j] = 1.0;
    for (uint i = j + 1u; i < b; ++i) {
        float s0 = 0.0;
        float s1 = 0.0;
        uint k = j;
        for (; k + 1u < i; k += 2u) {
            s0 += m[i * STRIDE + k] * x[k * STRIDE + j];
            s1 += m[i * STRIDE + k + 1u] * x[(k + 1u) * STRIDE + j];
        }
        if (k < i) s0 += m[i * STRIDE + k] * x[k * STRIDE + j];
        x[i * STRIDE + j] = -(s0 + s1);
    }
    for (uint i = 0u; i < b; ++i) out_[i * b + j] = x[i * STRIDE + j];
    // x := U11⁻¹·x: x_i = (x_i − Σ_{k > i} U(i, k)·x_k) / U(i, i), bottom up.
    for (uint ii = b; ii > 0u; --ii) {
        uint i = ii - 1u;
        float s0 = x[i * STRIDE + j];
        float s1 = 0.0;
        uint k = i + 1u;
        for (; k + 1u < b; k += 2u) {
            s0 -= m[i * STRIDE + k] * x[k * STRIDE + j];
            s1 += m[i * STRIDE + k + 1u] * x[(k + 1u) * STRIDE + j];
        }
        if (k < b) s0 -= m[i * STRIDE + k] * x[k * STRIDE + j];
        x[i * STRIDE + j] = (s0 - s1) / m[i * STRIDE + i];
    }
    for (uint i = 0u; i < b; ++i) {
        out_[(b + i) * b + j] = x[i * STRIDE + j];
        col[(k0 + i) * b + j] = i == j ? -1.0 : 0.0;
        a[(k0 + i) * n + k0 + j] = 0.0;
    }
}

// Work group 0 with `whole` and `steps`: the panel's inverses by right-looking substitution
// steps over all invocations. Only the owner of an entry of x writes it; step k reads row k,
// which its last write preceded by a barrier.
void inverses_by_steps() {
    uint t = gl_LocalInvocationID.x;
    if (prefetch != 0) load_panel_prefetched();
    for (uint e = t; e < b * b; e += 256u) {
        uint i = e / b;
        uint j = e % b;
        if (prefetch == 0) m[i * STRIDE + j] = a[(k0 + i) * n + k0 + j];
        x[i * STRIDE + j] = i == j ? 1.0 : 0.0;
    }
    barrier();
    uint j = t % 64u;
    uint q = t / 64u;
    // x := L11⁻¹: step k takes x(k, j) final and updates the rows below it (column j of
    // L11⁻¹ is zero above row j, so the steps k < j have nothing to do).
    for (uint k = 0u; k + 1u < b; ++k) {
        if (j < b && j <= k) {
            float xk = x[k * STRIDE + j];
            for (uint i = q; i < b; i += 4u) {
                if (i > k) x[i * STRIDE + j] -= m[i * STRIDE + k] * xk;
            }
        }
        barrier();
    }
    if (j < b) {
        for (uint i = q; i < b; i += 4u) out_[i * b + j] = x[i * STRIDE + j];
    }
    // x := U11⁻¹·x, bottom up: step k divides row k by U(k, k) and updates the rows above.
    for (uint kk = b; kk > 0u; --kk) {
        uint k = kk - 1u;
        if (j < b) {
            float xk = x[k * STRIDE + j] / m[k * STRIDE + k];
            for (uint i = q; i < k; i += 4u) x[i * STRIDE + j] -= m[i * STRIDE + k] * xk;
            if (k % 4u == q) out_[(b + k) * b + j] = xk;
        }
        barrier();
    }
    for (uint e = t; e < b * b; e += 256u) {
        uint i = e / b;
        uint jj = e % b;
        col[(k0 + i) * b + jj] = i == jj ? -1.0 : 0.0;
        a[(k0 + i) * n + k0 + jj] = 0.0;
    }
}

// Entry r of 16 register values (a select over compile-time indices keeps them in registers).
float pick16(float v[16], uint r) {
    float y = 0.0;
    for (uint s = 0u; s < 16u; ++s) {
        if (s == r) y = v[s];
    }
    return y;
}

// inverses_by_steps with each invocation's entries of x in registers: at the end of a step the
// owners of the row the next step needs publish it into x[(step & 1) * 64 + j].
void inverses_in_registers() {
    uint t = gl_LocalInvocationID.x;
    if (prefetch != 0) {
        load_panel_prefetched();
    } else {
        for (uint e = t; e < b * b; e += 256u) {
            uint i = e / b;
            m[i * STRIDE + e % b] = a[(k0 + i) * n + k0 + e % b];
        }
    }
    uint j = t % 64u;
    uint q = t / 64u;
    float xr[16];
    for (uint r = 0u; r < 16u; ++r) xr[r] = q + 4u * r == j ? 1.0 : 0.0;
    if (q == 0u) x[j] = xr[0];
    barrier();
    // x := L11⁻¹ (nothing to do in column j before step j: its rows above j are zero).
    for (uint k = 0u; k + 1u < b; ++k) {
        if (j < b && j <= k) {
            float xk = x[(k & 1u) * 64u + j];
            for (uint r = 0u; r < 16u; ++r) {
                uint i = q + 4u * r;
                if (i > k && i < b) xr[r] -= m[i * STRIDE + k] * xk;
            }
        }
        if (j < b && q == (k + 1u) % 4u) {
            x[((k + 1u) & 1u) * 64u + j] = pick16(xr, (k + 1u) / 4u);
        }
        barrier();
    }
    if (j < b) {
        for (uint r = 0u; r < 16u; ++r) {
            uint i = q + 4u * r;
            if (i < b) out_[i * b + j] = xr[r];
        }
    }
    // x := U11⁻¹·x, bottom up (row b − 1 was published by the last step above).
    for (uint kk = b; kk > 0u; --kk) {
        uint k = kk - 1u;
        if (j < b) {
            float xk = x[(k & 1u) * 64u + j] / m[k * STRIDE + k];
            for (uint r = 0u; r < 16u; ++r) {
                uint i = q + 4u * r;
                if (i < k) xr[r] -= m[i * STRIDE + k] * xk;
            }
            if (k % 4u == q) out_[(b + k) * b + j] = xk;
            if (k > 0u && q == (k - 1u) % 4u) {
                x[((k - 1u) & 1u) * 64u + j] = pick16(xr, (k - 1u) / 4u);
            }
        }
        barrier();
    }
    for (uint e = t; e < b * b; e += 256u) {
        uint i = e / b;
        uint jj = e % b;
        col[(k0 + i) * b + jj] = i == jj ? -1.0 : 0.0;
        a[(k0 + i) * n + k0 + jj] = 0.0;
    }
}

void main() {
    uint g = base + gl_WorkGroupID.x;
    if (whole != 0) {
        if (g == 0u) {
            if (steps == 2) {
                inverses_in_registers();
            } else if (steps != 0) {
                inverses_by_steps();
            } else {
                inverses();
            }
            return;
        }
        g -= 1u;
    }
    uint e = g * 256u + gl_LocalInvocationID.x;
    if (e >= n * b) return;
    uint ci = e / b;
    uint cj = e % b;
    uint from = ci * n + k0 + cj;
    if (whole == 0) {
        col[e] = a[from];
    } else if (ci < k0 || ci >= k0 + b) {
        col[e] = a[from];
        a[from] = 0.0;
    }
    uint ri = e / n;
    uint rj = e % n;
    if (rj < k0 || rj >= k0 + b) {
        uint at = (k0 + ri) * n + rj;
        row[e] = a[at];
        a[at] = 0.0;
    } else if (whole != 0) {
        row[e] = ri == rj - k0 ? 1.0 : 0.0;
    }
}
