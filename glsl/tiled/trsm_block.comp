// Triangular solve against one diagonal block L (n ≤ NB, lower, from the Cholesky factor) for
// NB rows of the view X (rows x n) per work group of 16 x 16 invocations, each holding E x E
// entries of X in registers: forward (backward = 0) solves L·yᵀ = xᵀ for every row, i.e.
// X ← X·L⁻ᵀ (the panel solve of the tiled Cholesky, and L·Y = B on the transposed view);
// backward (backward = 1) solves Lᵀ·yᵀ = xᵀ (the solve with Lᵀ). Column by column: the owners
// of column i divide it by L(i,i) and publish it through shared memory (double-buffered, so
// one barrier per column), then every invocation subtracts its multiple from its entries.
layout(local_size_x = 16, local_size_y = 16) in;

#define E (NB / 16)

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
shared float solved[2][NB];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    for (uint e = tid; e < uint(NB * NB); e += 256u) {
        uint i = e / uint(NB);
        uint j = e % uint(NB);
        L[i][j] = (i < n && j <= i) ? l[l_off + i * l_rs + j * l_cs] : (i == j ? 1.0 : 0.0);
    }
    uint row0 = gl_WorkGroupID.x * uint(NB);
    float xr[E][E];
    for (int a = 0; a < E; a++)
        for (int b = 0; b < E; b++) {
            uint r = row0 + ty + 16u * uint(a);
            uint c = tx + 16u * uint(b);
            xr[a][b] = (r < rows && c < n) ? x[x_off + r * x_rs + c * x_cs] : 0.0;
        }
    barrier();
    for (uint step = 0u; step < n; step++) {
        uint i = backward == 0 ? step : n - 1u - step;
        uint buf = step & 1u;
        float inv = 1.0 / L[i][i];
        for (int b = 0; b < E; b++)
            if (tx + 16u * uint(b) == i)
                for (int a = 0; a < E; a++) {
                    xr[a][b] *= inv;
                    solved[buf][ty + 16u * uint(a)] = xr[a][b];
                }
        barrier();
        for (int a = 0; a < E; a++) {
            float v = solved[buf][ty + 16u * uint(a)];
            for (int b = 0; b < E; b++) {
                uint c = tx + 16u * uint(b);
                if (backward == 0) {
                    if (c > i) xr[a][b] -= v * L[c][i];
                } else {
                    if (c < i) xr[a][b] -= v * L[i][c];
                }
            }
        }
    }
    for (int a = 0; a < E; a++)
        for (int b = 0; b < E; b++) {
            uint r = row0 + ty + 16u * uint(a);
            uint c = tx + 16u * uint(b);
            if (r < rows && c < n) x[x_off + r * x_rs + c * x_cs] = xr[a][b];
        }
}
