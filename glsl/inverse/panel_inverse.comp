// The Gauss-Jordan panel's b x b inverses (b <= 64) from the factored block L11\U11 (unit lower
// L11 below the diagonal, U11 on and above; at `off` in `src`, row stride `stride`: the panel
// column's copy), in one work group in shared memory: [L11⁻¹; U11⁻¹·L11⁻¹] stacked into `out`
// (2b x b row-major), and −I written over the block in `src` (so the block's products write
// block row 1 as the other rows: src/inverse/gje.rs). One invocation per column j, no barrier
// after the load: column j of L11⁻¹ by forward substitution on e_j, then column j of
// U11⁻¹·L11⁻¹ by back substitution on it (two partial sums each, to shorten the dependent
// chains). A zero pivot gives infinities; the status word has named it (leaf_finish.comp).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer SrcBuf { float src[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float out_[]; };

uniform uint stride;
uniform uint off;
uniform uint b;

// Unpadded: 32 KiB, the least shared memory GL promises (the invocations take consecutive
// columns of x, and read m's entries all alike).
const uint STRIDE = 64u;

shared float m[64u * STRIDE];
shared float x[64u * STRIDE];

void main() {
    uint t = gl_LocalInvocationID.x;
    for (uint e = t; e < b * b; e += 256u) {
        uint i = e / b;
        m[i * STRIDE + e % b] = src[off + i * stride + e % b];
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
        src[off + i * stride + j] = i == j ? -1.0 : 0.0;
    }
}
