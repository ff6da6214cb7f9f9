// One elimination step on the panel (columns k0 .. k0+b) of an n x n row-major matrix, after
// pivot.comp saved column p and row p's panel part. lu = 0: the Gauss-Jordan step of in-place
// inversion (Benner et al. Fig 3 left, kernel GJE): a(p,p) = 1/piv, row p /= piv, other rows
// -= a(i,p)·row p with a(i,p) = -a(i,p)/piv. lu = 1: the LU step below row p: l = a(i,p)/piv
// stored, a(i,j) -= l·a(p,j) for panel columns j > p.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer SavedBuf { float saved[]; };

uniform uint n;
uniform uint p;
uniform uint k0;
uniform uint b;
uniform int lu;

void main() {
    uint jj = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (jj >= b || i >= n) return;
    uint j = k0 + jj;
    float piv = saved[p];
    float f = saved[i];
    float g = saved[n + jj];
    if (lu == 0) {
        float v;
        if (i == p) {
            v = (j == p) ? 1.0 / piv : g / piv;
        } else if (j == p) {
            v = -f / piv;
        } else {
            v = a[i * n + j] - f * (g / piv);
        }
        a[i * n + j] = v;
    } else {
        if (i <= p || j < p) return;
        float l = f / piv;
        if (j == p) {
            a[i * n + j] = l;
        } else {
            a[i * n + j] -= l * g;
        }
    }
}
