// The factor-and-invert of one diagonal block (n ≤ NB) with few barriers: the same function as
// potrf_inv_fn.glsl (same signature, same results up to rounding: C = L̃·diag(pivots)·L̃ᵀ, L
// written over C's lower triangle, L⁻¹ to `inv` as a full NB-strided row-major block), but
// right-looking in panels of PANEL columns (LAPACK's blocked potrf inside one work group)
// instead of one barrier per column. Per panel:
//   1. the owners publish the panel's columns (rows at and below it) and y's rows of the panel
//      (y = L̃⁻¹, built as in potrf_inv_fn.glsl) to shared memory; barrier;
//   2. one subgroup factors the tall panel column by column (Algorithm 5's normalization and
//      outer-product subtraction on the unscaled columns), synchronizing its own invocations
//      only, and builds D = the unit lower inverse of the panel's diagonal sub-block; barrier;
//   3. every invocation: y's rows of the panel ← D·(those rows), published; the trailing
//      block's rank-PANEL update from the factored panel; barrier;
//   4. every invocation: y's rows below the panel ← minus their multipliers times the
//      panel's rows of y (the elimination's row operations, deferred to here).
// Four barriers per panel (three where the panel's columns are double-buffered) instead of
// PANEL. Without subgroups (SUBGROUPS from subgroups.glsl undefined: llvmpipe) step 2 runs on
// the whole work group with a barrier per column: the same arithmetic, more barriers. The first
// pivot that is not positive (or NaN) is recorded in the status word with its global column
// and its value before the square root, unless an earlier column already failed.
#ifndef PX
#define PX 16
#define PY 16
#endif
#ifndef INV_BINDING
#define INV_BINDING 1
#endif
#ifndef PANEL
#define PANEL 16
#endif

// Rows (index a) and columns (index b) of the block per invocation.
#define EA (NB / PY)
#define EB (NB / PX)
// Panel columns double-buffered (one barrier fewer per panel) where shared memory allows it:
// blocks of up to 64 in their own launch (the fused product kernel has its k-slices too).
#if NB <= 64 && !defined(FUSED_DIAG)
#define PANEL_BUFS 2
#else
#define PANEL_BUFS 1
#endif

#ifndef FUSED_DIAG
layout(std430, binding = 0) buffer CBuf { float c[]; };
#endif
layout(std430, binding = INV_BINDING) writeonly buffer InvBuf { float inv[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

// The panel's columns at and below it (row-indexed, padded: no bank conflicts down a column).
shared float panel_cols[PANEL_BUFS][NB][PANEL + 1];
// y's rows of the panel before and after step 3 (columns left of the panel's end).
shared float panel_rows[PANEL][NB];
shared float final_rows[PANEL][NB];
// D = the unit lower inverse of the panel's diagonal sub-block of L̃.
shared float panel_inv[PANEL][PANEL + 1];
// The pivots and their inverses.
shared float piv[NB];
shared float inv_piv[NB];

// Everything written to shared memory before it is visible to the whole work group.
#define GROUP_SYNC() memoryBarrierShared(); barrier()
#ifdef SUBGROUPS
#define PANEL_SYNC() subgroupMemoryBarrierShared(); subgroupBarrier()
#else
#define PANEL_SYNC() GROUP_SYNC()
#endif

void factor_block(uint n, uint c_off, uint c_rs, uint c_cs, uint column0, uint inv_off) {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * uint(PX) + tx;
    // The invocations that factor the panels: one subgroup, else the whole work group.
#ifdef SUBGROUPS
    bool worker = gl_SubgroupID == 0u;
    uint lane = gl_SubgroupInvocationID;
    // (A work group smaller than a subgroup fills only part of it.)
    uint lanes = min(gl_SubgroupSize, uint(PX * PY));
#else
    bool worker = true;
    uint lane = tid;
    uint lanes = uint(PX * PY);
#endif
    // s[a][b] is entry (ty + PY·a, tx + PX·b); outside the block the identity's. y from I.
    float s[EA][EB];
    float y[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            s[a][b] = (i < n && k <= i) ? c[c_off + i * c_rs + k * c_cs] : (i == k ? 1.0 : 0.0);
            y[a][b] = i == k ? 1.0 : 0.0;
        }
    uint panels = (n + uint(PANEL) - 1u) / uint(PANEL);
    for (uint q = 0u; q < panels; q++) {
        uint p = q * uint(PANEL);
        uint e = p + uint(PANEL);
        uint buf = q % uint(PANEL_BUFS);
        // 1. Publish the panel's columns (rows from p; final but for this panel's own steps)
        //    and y's rows of the panel (columns below e; the identity's from p on).
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint i = ty + uint(PY) * uint(a);
                uint k = tx + uint(PX) * uint(b);
                if (k >= p && k < e && i >= k) panel_cols[buf][i][k - p] = s[a][b];
                if (i >= p && i < e && k < e) panel_rows[i - p][k] = y[a][b];
            }
        for (uint t = tid; t < uint(PANEL * PANEL); t += uint(PX * PY))
            panel_inv[t / uint(PANEL)][t % uint(PANEL)] = t / uint(PANEL) == t % uint(PANEL) ? 1.0 : 0.0;
        GROUP_SYNC();
        // 2. Column j of the panel is final (unscaled) after step j − 1: its multipliers
        //    update the panel's columns right of it in the rows below, and D's rows below j.
        for (uint j = 0u; j < uint(PANEL); j++) {
            if (worker) {
                float d = panel_cols[buf][p + j][j];
                float ip = 1.0 / d;
                if (lane == 0u) {
                    piv[p + j] = d;
                    inv_piv[p + j] = ip;
                    if (p + j < n && PIVOT_FAILS(d) && failed_column == 0xFFFFFFFFu) {
                        failed_column = column0 + p + j;
                        failed_pivot = d;
                    }
                }
                // Column j's entries in the panel's rows, once per step (constant indices once
                // the loops are unrolled: registers); those above j are not used.
                float cj[PANEL];
                for (int k = 0; k < PANEL; k++) cj[k] = panel_cols[buf][p + uint(k)][j];
                for (uint i = p + j + 1u + lane; i < uint(NB); i += lanes) {
                    float f = panel_cols[buf][i][j] * ip;
                    for (int k = 0; k < PANEL; k++)
                        if (uint(k) > j && p + uint(k) <= i) panel_cols[buf][i][k] -= f * cj[k];
                    if (i < e)
                        for (uint k = 0u; k <= j; k++) panel_inv[i - p][k] -= f * panel_inv[j][k];
                }
            }
            PANEL_SYNC();
        }
        GROUP_SYNC();
        // 3. y's rows of the panel final (D times them), published; the panel's columns back
        //    into the registers; the trailing block's update S(i, k) −= Σ_j L̃(i, j)·L̃(k, j)·d_j,
        //    on the unscaled columns: Σ_j col_j(i)·col_j(k)/d_j.
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint i = ty + uint(PY) * uint(a);
                uint k = tx + uint(PX) * uint(b);
                if (i >= p && i < e && k < e) {
                    float v = 0.0;
                    for (uint l = 0u; l <= i - p; l++) v += panel_inv[i - p][l] * panel_rows[l][k];
                    y[a][b] = v;
                    final_rows[i - p][k] = v;
                }
                if (k >= p && k < e && i >= k) s[a][b] = panel_cols[buf][i][k - p];
                if (k >= e && i >= k) {
                    float v = s[a][b];
                    for (uint j = 0u; j < uint(PANEL); j++)
                        v -= panel_cols[buf][i][j] * (panel_cols[buf][k][j] * inv_piv[p + j]);
                    s[a][b] = v;
                }
            }
        GROUP_SYNC();
        // 4. y's rows below the panel: y(i, k) −= Σ_j (col_j(i)/d_j)·y(j, k) over the panel's j.
        for (int a = 0; a < EA; a++)
            for (int b = 0; b < EB; b++) {
                uint i = ty + uint(PY) * uint(a);
                uint k = tx + uint(PX) * uint(b);
                if (i >= e && k < e) {
                    float v = y[a][b];
                    for (uint j = 0u; j < uint(PANEL); j++)
                        v -= panel_cols[buf][i][j] * inv_piv[p + j] * final_rows[j][k];
                    y[a][b] = v;
                }
            }
#if PANEL_BUFS == 1
        // The next panel's columns go where these were read.
        GROUP_SYNC();
#endif
    }
    // Scale: L(i, k) = S(i, k) / sqrt(pivot k), L(i, i) = sqrt(pivot i); write L back.
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            if (i < n && k <= i) c[c_off + i * c_rs + k * c_cs] = k == i ? sqrt(piv[i]) : s[a][b] / sqrt(piv[k]);
        }
    // X = L⁻¹ = diag(pivots)^(-1/2)·y.
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint r = ty + uint(PY) * uint(a);
            uint k = tx + uint(PX) * uint(b);
            if (r < n && k < n) inv[inv_off + r * uint(NB) + k] = k <= r ? y[a][b] / sqrt(piv[r]) : 0.0;
        }
}
