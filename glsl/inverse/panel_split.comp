// Before a Gauss-Jordan block's products (src/inverse/gje.rs): copies the panel column
// (columns k0 .. k0+b of all n rows) into `col` (n x b, row-major; the panel's transform reads
// it) and moves block row 1 outside the panel (rows k0 .. k0+b, columns not in k0 .. k0+b)
// into `row` (b x n, row-major), leaving zeros in A, so one product over all rows per side
// both updates the other rows and writes block row 1. With `whole` set, the panel column of A
// is zeroed too and `row` gets the identity in the panel's columns, so the products also write
// the transformed panel (src/inverse/gje.rs); else the panel's columns of `row` are unwritten.
// One invocation per entry of each part (b·n of them).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) writeonly buffer ColBuf { float col[]; };
layout(std430, binding = 2) writeonly buffer RowBuf { float row[]; };

uniform uint n;
uniform uint k0;
uniform uint b;
uniform uint base;
uniform int whole;

void main() {
    uint e = (base + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (e >= n * b) return;
    uint ci = e / b;
    uint cj = e % b;
    uint from = ci * n + k0 + cj;
    col[e] = a[from];
    if (whole != 0) a[from] = 0.0;
    uint ri = e / n;
    uint rj = e % n;
    if (rj < k0 || rj >= k0 + b) {
        uint at = (k0 + ri) * n + rj;
        row[e] = a[at];
        a[at] = 0.0;
    } else if (whole != 0) {
        row[e] = ri == rj - k0 ? 1.0 : 0.0;
    }
}
