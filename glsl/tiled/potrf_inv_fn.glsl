// The factor-and-invert of one diagonal block as a function (potrf_inv_block.comp's body), so
// that the product kernel can run it too: gemm.comp with FUSED_DIAG factors the block at the
// corner of its output after the work group of that tile has written it (the inner update of
// the blocked Cholesky then also factors the next diagonal block: one dependent dispatch
// fewer per block). There gemm.comp has declared CBuf (float c[]) at binding 0; the work group
// is PX x PY; INV_BINDING is where the inverses go.
#ifndef PX
#define PX 16
#define PY 16
#endif
#ifndef INV_BINDING
#define INV_BINDING 1
#endif

// Rows (index a) and columns (index b) of the block per invocation.
#define EA (NB / PY)
#define EB (NB / PX)

#ifndef FUSED_DIAG
layout(std430, binding = 0) buffer CBuf { float c[]; };
#endif
layout(std430, binding = INV_BINDING) writeonly buffer InvBuf { float inv[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

shared float col[2][NB];
shared float row[2][NB];
shared float piv[NB];

void factor_block(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off) {

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
            if (PIVOT_FAILS(p) && failed_column == 0xFFFFFFFFu) {
                failed_column = column0 + j;
                failed_pivot = p;
            }
        }
        float ip = 1.0 / p;
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            // Both updates touch rows below j only: rows at or above it (whole warps of them
            // as j grows) skip the column.
            if (i <= j) continue;
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
