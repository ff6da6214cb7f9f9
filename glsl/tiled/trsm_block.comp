// Triangular solve against one diagonal block L (n ≤ NB, lower, from the Cholesky factor),
// one row x of the view X (rows x n) per invocation: forward (backward = 0) solves L·yᵀ = xᵀ,
// i.e. X ← X·L⁻ᵀ (the panel solve of the tiled Cholesky, and L·Y = B on the transposed view);
// backward (backward = 1) solves Lᵀ·yᵀ = xᵀ (the solve with Lᵀ). L is padded with the identity
// to NB, so the loops have constant bounds and unroll with the row in registers.
#pragma optionNV(unroll all)
layout(local_size_x = NB) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer LBuf { float l[]; };

uniform uint rows;
uniform uint n;
uniform uint x_off;
uniform uint x_rs;
uniform uint x_cs;
uniform uint l_off;
uniform uint l_rs;
uniform uint l_cs;
uniform int backward;

shared float L[NB][NB + 1];

void main() {
    uint t = gl_LocalInvocationID.x;
    for (uint e = t; e < uint(NB * NB); e += uint(NB)) {
        uint i = e / uint(NB);
        uint j = e % uint(NB);
        L[i][j] = (i < n && j <= i) ? l[l_off + i * l_rs + j * l_cs] : (i == j ? 1.0 : 0.0);
    }
    barrier();
    uint row = gl_WorkGroupID.x * uint(NB) + t;
    if (row >= rows) return;
    uint base = x_off + row * x_rs;
    float y[NB];
    for (int j = 0; j < NB; j++) y[j] = uint(j) < n ? x[base + uint(j) * x_cs] : 0.0;
    if (backward == 0) {
        for (int i = 0; i < NB; i++) {
            float s = y[i];
            for (int k = 0; k < i; k++) s -= L[i][k] * y[k];
            y[i] = s / L[i][i];
        }
    } else {
        for (int i = NB - 1; i >= 0; i--) {
            float s = y[i];
            for (int k = i + 1; k < NB; k++) s -= L[k][i] * y[k];
            y[i] = s / L[i][i];
        }
    }
    for (int j = 0; j < NB; j++)
        if (uint(j) < n) x[base + uint(j) * x_cs] = y[j];
}
