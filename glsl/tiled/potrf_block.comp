// Cholesky of one diagonal block (n ≤ NB) in shared memory by one work group of 16 x 16
// invocations: the CUDA course's diagonal-block step, column by column (Algorithm 5's square
// root, normalization and outer-product subtraction), each column's rank-1 update spread over
// the whole group (E x E entries per invocation). The update uses the unscaled column and
// 1/pivot, so one barrier pair per column suffices; columns are scaled at the end. Only the
// lower triangle is read and written. The first pivot that is not positive (or NaN) is
// recorded in the status word with its global column and its value before the square root,
// unless an earlier column already failed.
layout(local_size_x = 16, local_size_y = 16) in;

#define E (NB / 16)

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

uniform uint n;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint column0;

shared float S[NB][NB + 1];
shared float inverse_pivot;

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    // Entries outside the block are the identity's, so the loops need no bounds.
    for (uint e = tid; e < uint(NB * NB); e += 256u) {
        uint i = e / uint(NB);
        uint k = e % uint(NB);
        S[i][k] = (i < n && k <= i) ? c[c_off + i * c_rs + k * c_cs] : (i == k ? 1.0 : 0.0);
    }
    barrier();
    for (uint j = 0u; j < n; j++) {
        if (tid == 0u) {
            float p = S[j][j];
            if (PIVOT_FAILS(p) && failed_column == 0xFFFFFFFFu) {
                failed_column = column0 + j;
                failed_pivot = p;
            }
            S[j][j] = sqrt(p);
            inverse_pivot = 1.0 / p;
        }
        barrier();
        float inv = inverse_pivot;
        for (int a = 0; a < E; a++) {
            uint i = ty + 16u * uint(a);
            float sij = S[i][j] * inv;
            for (int b = 0; b < E; b++) {
                uint k = tx + 16u * uint(b);
                if (k > j && i >= k) S[i][k] -= sij * S[k][j];
            }
        }
        barrier();
    }
    for (uint e = tid; e < uint(NB * NB); e += 256u) {
        uint i = e / uint(NB);
        uint k = e % uint(NB);
        if (i < n && k <= i) c[c_off + i * c_rs + k * c_cs] = k == i ? S[i][i] : S[i][k] / S[k][k];
    }
}
