// The double-precision product of the sign and Lyapunov iterations' checks and polish:
// C = alpha·A·B + beta·D + gamma·I over strided views (entry (i, k) of A at
// a_off + i·a_rs + k·a_cs, likewise B, C, D), for k in k0 .. k1 of this launch (the host cuts
// the depth so no invocation loops past the software renderers' limit; later launches pass
// D = C, beta = 1, gamma = 0). 64 x 64 tiles of C per work group of 16 x 16 invocations, each
// holding 4 x 4 entries in registers, depth slices of 16 through shared memory. With
// `sums`, each work group also writes Σ C² over its tile to partial[group] (a Frobenius norm
// without reading C back). The scalars come as
// their two 32-bit halves (packDouble2x32).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer CBuf { double c[]; };
layout(std430, binding = 1) readonly buffer ABuf { double a[]; };
layout(std430, binding = 2) readonly buffer BBuf { double b[]; };
layout(std430, binding = 3) readonly buffer DBuf { double d[]; };
layout(std430, binding = 4) writeonly buffer PartialBuf { double partial[]; };

uniform uint rows;
uniform uint cols;
uniform uint k0;
uniform uint k1;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint a_off;
uniform uint a_rs;
uniform uint a_cs;
uniform uint b_off;
uniform uint b_rs;
uniform uint b_cs;
uniform uint d_off;
uniform uint d_rs;
uniform uint d_cs;
uniform uint alpha_lo;
uniform uint alpha_hi;
uniform uint beta_lo;
uniform uint beta_hi;
uniform uint gamma_lo;
uniform uint gamma_hi;
uniform int sums;

shared double As[16][65];
shared double Bs[16][65];
shared double tile_sum[256];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint t = ty * 16u + tx;
    uint i0 = gl_WorkGroupID.y * 64u;
    uint j0 = gl_WorkGroupID.x * 64u;
    double acc[4][4];
    for (uint u = 0u; u < 4u; ++u)
        for (uint v = 0u; v < 4u; ++v) acc[u][v] = 0.0LF;
    for (uint ks = k0; ks < k1; ks += 16u) {
        // 64 x 16 of A and 16 x 64 of B, four entries each per invocation.
        for (uint q = 0u; q < 4u; ++q) {
            uint e = t + 256u * q;
            uint r = e / 16u;
            uint kk = e % 16u;
            uint gi = i0 + r;
            uint gk = ks + kk;
            As[kk][r] = (gi < rows && gk < k1) ? a[a_off + gi * a_rs + gk * a_cs] : 0.0LF;
            uint cj = e % 64u;
            uint kb = e / 64u;
            uint gj = j0 + cj;
            uint gkb = ks + kb;
            Bs[kb][cj] = (gj < cols && gkb < k1) ? b[b_off + gkb * b_rs + gj * b_cs] : 0.0LF;
        }
        barrier();
        for (uint kk = 0u; kk < 16u; ++kk) {
            double x[4];
            double y[4];
            for (uint u = 0u; u < 4u; ++u) {
                x[u] = As[kk][ty + 16u * u];
                y[u] = Bs[kk][tx + 16u * u];
            }
            for (uint u = 0u; u < 4u; ++u)
                for (uint v = 0u; v < 4u; ++v) acc[u][v] = fma(x[u], y[v], acc[u][v]);
        }
        barrier();
    }
    double al = packDouble2x32(uvec2(alpha_lo, alpha_hi));
    double be = packDouble2x32(uvec2(beta_lo, beta_hi));
    double ga = packDouble2x32(uvec2(gamma_lo, gamma_hi));
    double s = 0.0LF;
    for (uint u = 0u; u < 4u; ++u) {
        for (uint v = 0u; v < 4u; ++v) {
            uint i = i0 + ty + 16u * u;
            uint j = j0 + tx + 16u * v;
            if (i >= rows || j >= cols) continue;
            double val = al * acc[u][v];
            if (be != 0.0LF) val += be * d[d_off + i * d_rs + j * d_cs];
            if (i == j) val += ga;
            c[c_off + i * c_rs + j * c_cs] = val;
            s += val * val;
        }
    }
    if (sums == 0) return;
    tile_sum[t] = s;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
        if (t < h) tile_sum[t] += tile_sum[t + h];
        barrier();
    }
    if (t == 0u) partial[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = tile_sum[0];
}
