// Before a Gauss-Jordan block's products (src/inverse/gje.rs): copies the panel column
// (columns k0 .. k0+b of all n rows) into `col` (n x b, row-major; the panel's transform reads
// it while it writes A's panel), and moves block row 1 outside the panel (rows k0 .. k0+b,
// columns not in k0 .. k0+b) into `row` (b x n, row-major, the panel's columns unwritten),
// leaving zeros in A, so one product over all rows per side both updates the other rows and
// writes block row 1. One invocation per entry of each part (b·n of them).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) writeonly buffer ColBuf { float col[]; };
layout(std430, binding = 2) writeonly buffer RowBuf { float row[]; };

uniform uint n;
uniform uint k0;
uniform uint b;
uniform uint base;

void main() {
    uint e = (base + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (e >= n * b) return;
    uint ci = e / b;
    uint cj = e % b;
    col[e] = a[ci * n + k0 + cj];
    uint ri = e / n;
    uint rj = e % n;
    if (rj < k0 || rj >= k0 + b) {
        uint at = (k0 + ri) * n + rj;
        row[e] = a[at];
        a[at] = 0.0;
    }
}
