// One diagonal block of the blocked f64 Cholesky (src/double/cholesky.rs) and the panel below
// it, in one launch: every work group factors the lower triangle of the kb x kb block at
// (k0, k0) of A (row stride n) in shared memory (right-looking, column by column) and inverts
// its factor, the same operations in each, then forms 16 rows of the panel L21 = A21·inv(L)ᵀ
// in place (of the n − k0 − kb rows below the block, those from 16·group). Work group 0 also writes inv(L)ᵀ row-major at k0·nb of Inv (row stride nb) and
// L itself (zeros above its diagonal): over the block in A where no panel follows (the other
// work groups read the block's A), else at k0·nb of Held, moved into A by the next block's
// launch (work group 0, before anything else; nothing of that launch reads there). A pivot
// that is not positive (or not a number) records its column + 1 and its value in the status
// words and ends the factorization: every later launch returns at once. NB (at most 64) is
// the largest kb, set by the caller.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { double a[]; };
layout(std430, binding = 1) buffer InvBuf { double inv[]; };
layout(std430, binding = 2) buffer StatusBuf { uint status[]; };
layout(std430, binding = 3) buffer HeldBuf { double held[]; };

uniform uint n;
uniform uint k0;
uniform uint kb;
uniform uint nb;

// L in the lower triangle; inv(L)'s column c (below its diagonal) in row c's upper part,
// then inv(L)ᵀ in the upper triangle with its diagonal for the panel.
shared double s[NB * (NB + 1u)];

#define S(i, j) s[(i) * (NB + 1u) + (j)]

void main() {
    uint t = gl_LocalInvocationIndex;
    bool first = gl_WorkGroupID.x == 0u;
    uint rows = n - k0 - kb;
    if (status[0] != 0u) {
        return;
    }
    // The block before's L (a full nb x nb block wherever one precedes), held by its launch.
    if (first && k0 > 0u) {
        uint p0 = k0 - nb;
        for (uint e = t; e < nb * nb; e += 256u) {
            uint i = e / nb;
            uint j = e % nb;
            a[(p0 + i) * n + p0 + j] = held[(p0 + i) * nb + j];
        }
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
        if (PIVOT_FAILS_DOUBLE(d)) {
            if (first && t == 0u) {
                uvec2 bits = unpackDouble2x32(d);
                status[1] = bits.x;
                status[2] = bits.y;
                status[0] = k0 + j + 1u;
            }
            return;
        }
        double r = reciprocal(d);
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
            S(i, j) *= reciprocal(sqrt(S(j, j)));
        }
    }
    barrier();
    for (uint j = t; j < kb; j += 256u) {
        S(j, j) = sqrt(S(j, j));
    }
    barrier();
    if (first) {
        for (uint e = t; e < kb * kb; e += 256u) {
            uint i = e / kb;
            uint j = e % kb;
            double l = j <= i ? S(i, j) : 0.0;
            if (rows == 0u) {
                a[(k0 + i) * n + k0 + j] = l;
            } else {
                held[(k0 + i) * nb + j] = l;
            }
        }
    }
    barrier();
    // inv(L) by columns, one invocation each: X(c, c) = 1/L(c, c) and, below it,
    // X(i, c) = −(Σ_{c ≤ k < i} L(i, k)·X(k, c))/L(i, i), X(i, c) kept at S(c, i).
    double xcc = 0.0;
    if (t < kb) {
        uint c = t;
        xcc = reciprocal(S(c, c));
        for (uint i = c + 1u; i < kb; i++) {
            double acc = S(i, c) * xcc;
            for (uint k = c + 1u; k < i; k++) {
                acc += S(i, k) * S(c, k);
            }
            S(c, i) = -acc * reciprocal(S(i, i));
        }
        if (first) {
            uint row = (k0 + c) * nb;
            for (uint i = 0u; i < kb; i++) {
                inv[row + i] = i < c ? 0.0 : (i == c ? xcc : S(c, i));
            }
        }
    }
    if (rows == 0u) {
        return;
    }
    barrier();
    if (t < kb) {
        S(t, t) = xcc;
    }
    barrier();
    // Row p = 16·group + ti of the panel, columns tj + 16·v: inv(L)ᵀ(k, j) is S(k, j) for
    // k ≤ j, else 0, every k summed in order (as an f64 product of the two would). Only this
    // work group touches its rows: all its reads come before the barrier, its writes after.
    uint p = gl_WorkGroupID.x * 16u + ti;
    uint row = (k0 + kb + p) * n + k0;
    double acc[(NB + 15u) / 16u];
    for (uint v = 0u; v < (NB + 15u) / 16u; v++) {
        acc[v] = 0.0;
    }
    if (p < rows) {
        for (uint k = 0u; k < kb; k++) {
            double x = a[row + k];
            for (uint v = 0u; v < (NB + 15u) / 16u; v++) {
                uint j = tj + 16u * v;
                acc[v] = fma(x, k <= j && j < kb ? S(k, j) : 0.0, acc[v]);
            }
        }
    }
    memoryBarrierBuffer();
    barrier();
    if (p < rows) {
        for (uint v = 0u; v < (NB + 15u) / 16u; v++) {
            uint j = tj + 16u * v;
            if (j < kb) {
                a[row + j] = acc[v];
            }
        }
    }
}
