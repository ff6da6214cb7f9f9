// The last dispatch of a tournament-pivoted leaf (tournament.comp, then permute.comp moved the
// winners to rows c0 .. c0+w): the leaf's columns c0 .. c0+w of rows c0 .. n become
// L11\U11 (the tournament's last round left it in lu11, row stride 32; group 0 writes it) and
// L21 = A21·U11⁻¹ below, each work group 128 rows of A21 (reading only its own rows of A, so
// no group reads what another writes). A pivot whose magnitude
// is at or below `tol` (or NaN) records its column and value in the status word, once: the
// first singular column.
layout(local_size_x = 128) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) buffer StatusBuf { uint status[]; };
layout(std430, binding = 2) readonly buffer Lu11Buf { float lu11[]; };

uniform uint n;
uniform uint c0;
uniform uint w;
uniform float tol;

const uint NONE = 0xFFFFFFFFu;
const uint STRIDE = 33u;

shared float u[32u * STRIDE];
shared float x[128u * STRIDE];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x;
    for (uint e = t; e < 32u * 32u; e += 128u) {
        uint i = e / 32u;
        uint j = e % 32u;
        u[i * STRIDE + j] = lu11[e];
    }
    uint first = c0 + w + g * 128u;
    for (uint e = t; e < 128u * 32u; e += 128u) {
        uint s = e / 32u;
        uint j = e % 32u;
        uint r = first + s;
        x[s * STRIDE + j] = (r < n && j < w) ? a[r * n + c0 + j] : 0.0;
    }
    barrier();
    if (g == 0u && t == 0u) {
        for (uint k = 0u; k < w; ++k) {
            float piv = u[k * STRIDE + k];
            if (!(abs(piv) > tol)) {
                if (status[0] == NONE) {
                    status[0] = c0 + k;
                    status[1] = floatBitsToUint(piv);
                }
                break;
            }
        }
    }
    // L21 = A21·U11⁻¹, a row per invocation (the same operations as the elimination).
    for (uint k = 0u; k < w; ++k) {
        float l = x[t * STRIDE + k] / u[k * STRIDE + k];
        x[t * STRIDE + k] = l;
        for (uint j = k + 1u; j < w; ++j) {
            x[t * STRIDE + j] -= l * u[k * STRIDE + j];
        }
    }
    barrier();
    if (g == 0u) {
        for (uint e = t; e < 32u * 32u; e += 128u) {
            uint i = e / 32u;
            uint j = e % 32u;
            if (i < w && j < w) a[(c0 + i) * n + c0 + j] = u[i * STRIDE + j];
        }
    }
    for (uint e = t; e < 128u * 32u; e += 128u) {
        uint s = e / 32u;
        uint j = e % 32u;
        uint r = first + s;
        if (r < n && j < w) a[r * n + c0 + j] = x[s * STRIDE + j];
    }
}
