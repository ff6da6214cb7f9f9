// Cholesky of one diagonal block (n ≤ NB) in shared memory by one work group: the CUDA
// course's diagonal-block step, column by column (Algorithm 5's square root, normalization
// and outer-product subtraction). Only the lower triangle is read and written. The first
// pivot that is not positive (or NaN) is recorded in the status word with its global column
// and value before the square root, unless an earlier column already failed.
layout(local_size_x = NB) in;

layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 5) buffer Status { uint failed_column; float failed_pivot; };

uniform uint n;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint column0;

shared float S[NB][NB + 1];

void main() {
    uint t = gl_LocalInvocationID.x;
    if (t < n)
        for (uint j = 0u; j <= t; j++) S[t][j] = c[c_off + t * c_rs + j * c_cs];
    barrier();
    for (uint j = 0u; j < n; j++) {
        if (t == j) {
            float p = S[j][j];
            if (!(p > 0.0) && failed_column == 0xFFFFFFFFu) {
                failed_column = column0 + j;
                failed_pivot = p;
            }
            S[j][j] = sqrt(p);
        }
        barrier();
        if (t > j && t < n) S[t][j] /= S[j][j];
        barrier();
        if (t > j && t < n) {
            float l = S[t][j];
            for (uint k = j + 1u; k <= t; k++) S[t][k] -= l * S[k][j];
        }
        barrier();
    }
    if (t < n)
        for (uint j = 0u; j <= t; j++) c[c_off + t * c_rs + j * c_cs] = S[t][j];
}
