// The factor-and-invert of one diagonal block (potrf_inv_fn.glsl's function, the same
// interface) FACTOR_WIDTH columns per barrier (issue 25; potrf_inv_pairs.glsl is width 2
// written out). Step j publishes S's columns j..j + W − 1 as the earlier steps left them and
// y's rows j..j + W − 1; after one barrier every invocation eliminates the W x W corner itself
// (its pivots and multipliers) and forms the block's columns at its own rows and columns,
// c'_q(x) = S(x, j+q) − Σ_{t<q} c'_t(x)·c'_t(j+q)/p_t, and y's rows the same way, then applies
// the W columns' updates to its own entries (a rank-W step of the same elimination, the same
// pivots): n/W barriers. Every array index is a compile-time constant once the loops over W
// are unrolled, so nothing leaves the registers.
#ifndef FACTOR_WIDTH
#define FACTOR_WIDTH 4
#endif
#define FW FACTOR_WIDTH
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

// [buffer][column j + q of the step][entry]: two buffers, so one barrier per step.
shared float col[2][FW][NB];
shared float row[2][FW][NB];
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
    for (uint j = 0u; j < n; j += uint(FW)) {
        uint buf = step & 1u;
        step++;
        // Columns of this step (the last may be short).
        uint w = min(uint(FW), n - j);
        for (int b = 0; b < EB; b++) {
            uint k = tx + uint(PX) * uint(b);
            if (k >= j && k < j + uint(FW))
                for (int a = 0; a < EA; a++) col[buf][k - j][ty + uint(PY) * uint(a)] = s[a][b];
        }
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            if (i >= j && i < j + uint(FW))
                for (int b = 0; b < EB; b++) row[buf][i - j][tx + uint(PX) * uint(b)] = y[a][b];
        }
        barrier();
        // The corner: cc[q][r] = c'_q(j + r) (r ≥ q), pivots pv (1 past the block's order).
        float cc[FW][FW];
        float pv[FW];
        float ipv[FW];
        for (int q = 0; q < FW; q++) {
            for (int r = 0; r < FW; r++) {
                float v = col[buf][q][j + uint(r)];
                for (int t = 0; t < q; t++) v -= cc[t][r] * ipv[t] * cc[t][q];
                cc[q][r] = (r >= q && uint(q) < w) ? v : 0.0;
            }
            pv[q] = uint(q) < w ? cc[q][q] : 1.0;
            ipv[q] = 1.0 / pv[q];
        }
        if (tid == 0u) {
            bool found = failed_column != 0xFFFFFFFFu;
            for (int q = 0; q < FW; q++) {
                if (uint(q) >= w) break;
                piv[j + uint(q)] = pv[q];
                if (!found && PIVOT_FAILS(pv[q])) {
                    found = true;
                    failed_column = column0 + j + uint(q);
                    failed_pivot = pv[q];
                }
            }
        }
        // The block's columns at this invocation's columns (ck) and y's rows there (rk).
        float ck[EB][FW];
        float rk[EB][FW];
        for (int b = 0; b < EB; b++) {
            uint k = tx + uint(PX) * uint(b);
            for (int q = 0; q < FW; q++) {
                float v = col[buf][q][k];
                float u = row[buf][q][k];
                for (int t = 0; t < q; t++) {
                    v -= ck[b][t] * ipv[t] * cc[t][q];
                    u -= cc[t][q] * ipv[t] * rk[b][t];
                }
                ck[b][q] = uint(q) < w ? v : 0.0;
                rk[b][q] = uint(q) < w ? u : 0.0;
            }
        }
        for (int a = 0; a < EA; a++) {
            uint i = ty + uint(PY) * uint(a);
            // Rows above the block are final.
            if (i < j) continue;
            // The block's columns at row i, and their multipliers.
            float ci[FW];
            float f[FW];
            for (int q = 0; q < FW; q++) {
                float v = col[buf][q][i];
                for (int t = 0; t < q; t++) v -= ci[t] * ipv[t] * cc[t][q];
                ci[q] = uint(q) < w ? v : 0.0;
                f[q] = ci[q] * ipv[q];
            }
            if (i < j + uint(FW)) {
                // Row j + q of the block: its entries left of the diagonal, its pivot, y's row.
                for (int q = 0; q < FW; q++) {
                    if (i != j + uint(q)) continue;
                    for (int b = 0; b < EB; b++) {
                        uint k = tx + uint(PX) * uint(b);
                        for (int t = 0; t < q; t++)
                            if (k == j + uint(t)) s[a][b] = ci[t];
                        if (k == i) s[a][b] = pv[q];
                        if (i < n) y[a][b] = rk[b][q];
                    }
                }
                continue;
            }
            for (int b = 0; b < EB; b++) {
                uint k = tx + uint(PX) * uint(b);
                for (int q = 0; q < FW; q++)
                    if (k == j + uint(q)) s[a][b] = ci[q];
                if (k >= j + uint(FW) && i >= k) {
                    float d = 0.0;
                    for (int q = 0; q < FW; q++) d += f[q] * ck[b][q];
                    s[a][b] -= d;
                }
                if (i < n && k < j + uint(FW)) {
                    float d = 0.0;
                    for (int q = 0; q < FW; q++) d += f[q] * rk[b][q];
                    y[a][b] -= d;
                }
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
