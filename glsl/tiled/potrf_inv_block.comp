// Cholesky of one diagonal block (n ≤ NB) AND the inverse of its factor, by one work group of
// PX x PY invocations (16 x 16 unless defined) holding EA x EB entries each in registers (MAGMA's inverted diagonal
// blocks): the panel solve of the blocked Cholesky then becomes one product with L⁻ᵀ instead
// of a chain of substitution kernels. Factor: column by column (Algorithm 5's square root,
// normalization and outer-product subtraction on the unscaled column and 1/pivot); the owners
// of column j publish it through shared memory (double-buffered: one barrier per column).
// Inverse: the elimination's row operations applied to I in the same sweep (one barrier per
// column for both: row j of the running inverse is published beside column j), scaled by the
// pivots' square roots at the end. Only the lower triangle of C is read and written; the
// inverse goes to `inv` as a full NB-strided row-major block (zeros above the diagonal). The
// first pivot that is not positive (or NaN) is recorded in the status word with its global
// column and its value before the square root, unless an earlier column already failed.
#ifndef PX
#define PX 16
#define PY 16
#endif
layout(local_size_x = PX, local_size_y = PY) in;

// Rows (index a) and columns (index b) of the block per invocation.
#define EA (NB / PY)
#define EB (NB / PX)

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 1) writeonly buffer InvBuf { float inv[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

uniform uint n;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint column0;
uniform uint inv_off;

shared float col[2][NB];
shared float row[2][NB];
shared float piv[NB];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * uint(PX) + tx;
    // s[a][b] is entry (ty + PY·a, tx + PX·b); outside the block the identity's.
    float s[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            s[a][b] = (i < n && k <= i) ? c[c_off + i * c_rs + k * c_cs] : (i == k ? 1.0 : 0.0);
        }
    // y = L̃⁻¹ (L̃ the unit lower factor of the elimination, C = L̃·diag(pivots)·L̃ᵀ), built in the
    // same sweep: step j applies its multipliers to y's rows below j as to S's, so one barrier
    // per column publishes both column j of S and row j of y (final after step j − 1).
    float y[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) y[a][b] = ty + uint(PY) * uint(a) == tx + uint(PX) * uint(b) ? 1.0 : 0.0;
    for (uint j = 0u; j < n; j++) {
        uint buf = j & 1u;
        for (int b = 0; b < EB; b++)
            if (tx + uint(PX) * uint(b) == j)
                for (int a = 0; a < EA; a++) col[buf][ty + uint(PY) * uint(a)] = s[a][b];
        for (int a = 0; a < EA; a++)
            if (ty + uint(PY) * uint(a) == j)
                for (int b = 0; b < EB; b++) row[buf][tx + uint(PX) * uint(b)] = y[a][b];
        barrier();
        float p = col[buf][j];
        if (tid == 0u) {
            piv[j] = p;
            if (!(p > 0.0) && failed_column == 0xFFFFFFFFu) {
                failed_column = column0 + j;
                failed_pivot = p;
            }
        }
        float ip = 1.0 / p;
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            float f = col[buf][i] * ip;
            for (int b = 0; b < EB; b++) {
                uint k = tx + uint(PX) * uint(b);
                if (k > j && i >= k) s[a][b] -= f * col[buf][k];
                if (i > j && i < n && k <= j) y[a][b] -= f * row[buf][k];
            }
        }
    }
    barrier();
    // Scale: L(i, k) = S(i, k) / sqrt(pivot k), L(i, i) = sqrt(pivot i); write L back.
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            if (i < n && k <= i) {
                s[a][b] = k == i ? sqrt(piv[i]) : s[a][b] / sqrt(piv[k]);
                c[c_off + i * c_rs + k * c_cs] = s[a][b];
            }
        }
    // X = L⁻¹ = diag(pivots)^(-1/2)·y.
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint r = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            if (r < n && k < n) inv[inv_off + r * uint(NB) + k] = k <= r ? y[a][b] / sqrt(piv[r]) : 0.0;
        }
}
