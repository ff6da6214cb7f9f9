// The Gauss-Jordan panel's b x b inverses (b <= 64) from the factored block A11 = L11\U11 (unit
// lower L11 below the diagonal, U11 on and above; row stride n, first entry at `off`), in one
// work group in shared memory: L11⁻¹ into `linv` (b x b row-major) and A11 := U11⁻¹·L11⁻¹ in
// place. L11⁻¹ by forward elimination on the identity, a step per column; then the rows scaled
// by U11's diagonal and back substitution with the unit upper D⁻¹·U11, a step per column.
// A zero pivot gives infinities; the status word has named it already (leaf_finish.comp).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) writeonly buffer LinvBuf { float linv[]; };

uniform uint n;
uniform uint off;
uniform uint b;

// Unpadded: 32 KiB, the least shared memory GL promises (consecutive invocations take
// consecutive columns, so rows need no padding).
const uint STRIDE = 64u;

shared float m[64u * STRIDE];
shared float x[64u * STRIDE];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint bb = b * b;
    for (uint e = t; e < bb; e += 256u) {
        uint i = e / b;
        uint j = e % b;
        m[i * STRIDE + j] = a[off + i * n + j];
        x[i * STRIDE + j] = i == j ? 1.0 : 0.0;
    }
    barrier();
    // X := L11⁻¹: at step k, rows below k lose L(i, k) times row k (nonzero in columns <= k).
    for (uint k = 0u; k + 1u < b; ++k) {
        for (uint e = t; e < bb; e += 256u) {
            uint i = e / b;
            uint j = e % b;
            if (i > k && j <= k) x[i * STRIDE + j] -= m[i * STRIDE + k] * x[k * STRIDE + j];
        }
        barrier();
    }
    for (uint e = t; e < bb; e += 256u) {
        uint i = e / b;
        uint j = e % b;
        linv[e] = x[i * STRIDE + j];
        x[i * STRIDE + j] /= m[i * STRIDE + i];
    }
    barrier();
    // X := (D⁻¹·U11)⁻¹·X, rows above k losing U(i, k)/U(i, i) times row k.
    for (uint k = b - 1u; k > 0u; --k) {
        for (uint e = t; e < k * b; e += 256u) {
            uint i = e / b;
            uint j = e % b;
            x[i * STRIDE + j] -= (m[i * STRIDE + k] / m[i * STRIDE + i]) * x[k * STRIDE + j];
        }
        barrier();
    }
    for (uint e = t; e < bb; e += 256u) {
        a[off + (e / b) * n + e % b] = x[(e / b) * STRIDE + e % b];
    }
}
