// Triangular solve against one diagonal block L (n ≤ NB, lower, from the Cholesky factor),
// one row x of the view X (rows x n) per invocation: forward (backward = 0) solves L·yᵀ = xᵀ,
// i.e. X ← X·L⁻ᵀ (the panel solve of the tiled Cholesky, and L·Y = B on the transposed view);
// backward (backward = 1) solves Lᵀ·yᵀ = xᵀ (the solve with Lᵀ).
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
    for (uint e = t; e < n * n; e += NB) {
        uint i = e / n;
        uint j = e % n;
        if (j <= i) L[i][j] = l[l_off + i * l_rs + j * l_cs];
    }
    barrier();
    uint row = gl_WorkGroupID.x * NB + t;
    if (row >= rows) return;
    uint base = x_off + row * x_rs;
    float y[NB];
    for (uint j = 0u; j < n; j++) y[j] = x[base + j * x_cs];
    if (backward == 0) {
        for (uint i = 0u; i < n; i++) {
            float s = y[i];
            for (uint k = 0u; k < i; k++) s -= L[i][k] * y[k];
            y[i] = s / L[i][i];
        }
    } else {
        for (uint i = n; i-- > 0u;) {
            float s = y[i];
            for (uint k = i + 1u; k < n; k++) s -= L[k][i] * y[k];
            y[i] = s / L[i][i];
        }
    }
    for (uint j = 0u; j < n; j++) x[base + j * x_cs] = y[j];
}
