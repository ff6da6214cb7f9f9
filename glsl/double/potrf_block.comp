// One diagonal block of the blocked f64 Cholesky (src/double/cholesky.rs), in one work group:
// the lower triangle of the kb x kb block at (k0, k0) of A (row stride n) is factored in
// shared memory (right-looking, column by column), L written back over it (zeros above the
// block's diagonal), and inv(L)ᵀ written row-major at inv_off (row stride inv_rs) for the
// panel's product and the triangular inverse. A pivot that is not positive (or not a number)
// records its column + 1 and its value in the status words and ends the factorization: every
// later block returns at once. NB (at most 64) is the largest kb, set by the caller.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { double a[]; };
layout(std430, binding = 1) buffer InvBuf { double inv[]; };
layout(std430, binding = 2) buffer StatusBuf { uint status[]; };

uniform uint n;
uniform uint k0;
uniform uint kb;
uniform uint inv_off;
uniform uint inv_rs;

// L in the lower triangle; inv(L)'s column c (below its diagonal) in row c's upper part.
shared double s[NB * (NB + 1u)];

#define S(i, j) s[(i) * (NB + 1u) + (j)]

void main() {
    uint t = gl_LocalInvocationIndex;
    if (status[0] != 0u) {
        return;
    }
    for (uint e = t; e < kb * kb; e += 256u) {
        uint i = e / kb;
        uint j = e % kb;
        if (j <= i) {
            S(i, j) = a[(k0 + i) * n + k0 + j];
        }
    }
    barrier();
    // Square-root free, one barrier a column: column j is left unscaled (d_j·L(i, j) with
    // d_j = L(j, j)²) while the trailing triangle takes S(i, j)·S(c, j)/d_j, 16 x 16
    // invocations over its rows and columns, and every column is scaled once at the end.
    // Every invocation reads the pivot itself, so all return together on a failure.
    uint ti = t / 16u;
    uint tj = t % 16u;
    for (uint j = 0u; j < kb; j++) {
        double d = S(j, j);
        if (!(d > 0.0)) {
            if (t == 0u) {
                uvec2 bits = unpackDouble2x32(d);
                status[1] = bits.x;
                status[2] = bits.y;
                status[0] = k0 + j + 1u;
            }
            return;
        }
        double r = 1.0 / d;
        for (uint i = j + 1u + ti; i < kb; i += 16u) {
            double lij = S(i, j) * r;
            for (uint c = j + 1u + tj; c <= i; c += 16u) {
                S(i, c) -= lij * S(c, j);
            }
        }
        barrier();
    }
    for (uint i = ti; i < kb; i += 16u) {
        for (uint j = tj; j < i; j += 16u) {
            S(i, j) /= sqrt(S(j, j));
        }
    }
    barrier();
    for (uint j = t; j < kb; j += 256u) {
        S(j, j) = sqrt(S(j, j));
    }
    barrier();
    for (uint e = t; e < kb * kb; e += 256u) {
        uint i = e / kb;
        uint j = e % kb;
        a[(k0 + i) * n + k0 + j] = j <= i ? S(i, j) : 0.0;
    }
    barrier();
    // inv(L) by columns, one invocation each: X(c, c) = 1/L(c, c) and, below it,
    // X(i, c) = −(Σ_{c ≤ k < i} L(i, k)·X(k, c))/L(i, i), X(i, c) kept at S(c, i).
    if (t < kb) {
        uint c = t;
        double xcc = 1.0 / S(c, c);
        for (uint i = c + 1u; i < kb; i++) {
            double acc = S(i, c) * xcc;
            for (uint k = c + 1u; k < i; k++) {
                acc += S(i, k) * S(c, k);
            }
            S(c, i) = -acc / S(i, i);
        }
        uint row = inv_off + c * inv_rs;
        for (uint i = 0u; i < kb; i++) {
            inv[row + i] = i < c ? 0.0 : (i == c ? xcc : S(c, i));
        }
    }
}
