// The factor-and-invert of one diagonal block (potrf_inv_fn.glsl's function, the same
// interface) two columns per barrier (issue 25: the chained Cholesky's critical path is mostly
// this factor's barriers). Step (j, j + 1) publishes S's columns j and j + 1 (the latter not
// yet updated by column j) and y's rows j and j + 1; after one barrier every invocation forms
// the updated column j + 1, S'(x, j+1) = S(x, j+1) − S(x, j)·S(j+1, j)/p_j, its pivot and
// y's row j + 1 itself (a rank-2 step of the same elimination), then applies both columns'
// updates to its own entries: n/2 barriers instead of n. An odd last column steps alone.
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

// [buffer][column j or j + 1 of the step][entry]: two buffers, so one barrier per step.
shared float col[2][2][NB];
shared float row[2][2][NB];
shared float piv[NB];

// The block's entries are taken from the caller's registers (FACTOR_FROM_REGISTERS: the
// chained Cholesky hands its diagonal tile's sum over without a round trip through memory).
#define FACTOR_FROM_REGISTERS 1

// factor_block on the block whose entry (ty + PY·a, tx + PX·b) is held in sum[a][b] (the
// lower triangle of its first n rows is read); L is written at c_off as by factor_block.
void factor_block_from(float sum[EA][EB], uint n, uint c_off, uint c_rs, uint c_cs,
                       uint column0, uint inv_off) {

    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * uint(PX) + tx;
    // s[a][b] is entry (ty + PY·a, tx + PX·b); outside the block the identity's.
    float s[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            s[a][b] = (i < n && k <= i) ? sum[a][b] : (i == k ? 1.0 : 0.0);
        }
    // y = L̃⁻¹ (L̃ the unit lower factor of the elimination, C = L̃·diag(pivots)·L̃ᵀ), built in the
    // same sweep: step j applies its multipliers to y's rows below j as to S's, so one barrier
    // per column publishes both column j of S and row j of y (final after step j − 1).
    float y[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) y[a][b] = ty + uint(PY) * uint(a) == tx + uint(PX) * uint(b) ? 1.0 : 0.0;
    uint step = 0u;
    for (uint j = 0u; j < n; j += 2u) {
        uint buf = step & 1u;
        step++;
        // A pair, or the odd last column alone (then its second column is not read).
        bool pair = j + 1u < n;
        for (int b = 0; b < EB; b++) {
            uint k = tx + uint(PX) * uint(b);
            if (k == j || k == j + 1u)
                for (int a = 0; a < EA; a++) col[buf][k - j][ty + uint(PY) * uint(a)] = s[a][b];
        }
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            if (i == j || i == j + 1u)
                for (int b = 0; b < EB; b++) row[buf][i - j][tx + uint(PX) * uint(b)] = y[a][b];
        }
        barrier();
        float p0 = col[buf][0][j];
        float ip0 = 1.0 / p0;
        // S(j + 1, j)/p_j: column j's multiplier of row j + 1.
        float g = pair ? col[buf][0][j + 1u] * ip0 : 0.0;
        float p1 = pair ? col[buf][1][j + 1u] - g * col[buf][0][j + 1u] : 1.0;
        float ip1 = 1.0 / p1;
        if (tid == 0u) {
            piv[j] = p0;
            if (pair) piv[j + 1u] = p1;
            if (failed_column == 0xFFFFFFFFu) {
                if (PIVOT_FAILS(p0)) {
                    failed_column = column0 + j;
                    failed_pivot = p0;
                } else if (pair && PIVOT_FAILS(p1)) {
                    failed_column = column0 + j + 1u;
                    failed_pivot = p1;
                }
            }
        }
        // Column j + 1 updated by column j, and y's row j + 1, at this invocation's columns.
        float c1k[EB];
        float r1k[EB];
        for (int b = 0; b < EB; b++) {
            uint k = tx + uint(PX) * uint(b);
            c1k[b] = pair ? col[buf][1][k] - g * col[buf][0][k] : 0.0;
            r1k[b] = pair ? row[buf][1][k] - g * row[buf][0][k] : 0.0;
        }
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            // Rows at or above j are final.
            if (i <= j) continue;
            float f0 = col[buf][0][i] * ip0;
            if (i == j + 1u) {
                // Row j + 1: column j's update only (its pivot is p1; y's row is r1).
                for (int b = 0; b < EB; b++) {
                    uint k = tx + uint(PX) * uint(b);
                    if (k == j + 1u) s[a][b] = p1;
                    if (i < n && k <= j) y[a][b] = r1k[b];
                }
                continue;
            }
            float c1i = pair ? col[buf][1][i] - g * col[buf][0][i] : 0.0;
            float f1 = pair ? c1i * ip1 : 0.0;
            for (int b = 0; b < EB; b++) {
                uint k = tx + uint(PX) * uint(b);
                if (k == j + 1u && pair) s[a][b] = c1i;
                if (k > j + 1u && i >= k) s[a][b] -= f0 * col[buf][0][k] + f1 * c1k[b];
                if (i < n && k <= j + 1u)
                    y[a][b] -= f0 * row[buf][0][k] + f1 * r1k[b];
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

void factor_block(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    float sum[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            sum[a][b] = (i < n && k <= i) ? c[c_off + i * c_rs + k * c_cs] : 0.0;
        }
    factor_block_from(sum, n, c_off, c_rs, c_cs, column0, inv_off);
}
