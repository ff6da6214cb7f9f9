// One elementwise pass of the scaled Newton iteration for the sign function over an n x n
// row-major matrix, with per-work-group partial sums (summed in f64 on the CPU):
// mode 0 (unscramble): y(i, j) = w(i, perm[j]) (the Gauss-Jordan result (PA)^-1 with its
//   columns put back), partial = (sum y^2, 0, max |y|, 0);
// mode 1 (step): x <- a*x + b*y in place, partial = (sum (x_new - x)^2, sum x_new^2,
//   max |x_new|, 0);
// mode 3: mode 1 with a and b the f32 bits of perm[0], perm[1] (the report newton_report.comp
//   wrote: the scaling found on the device, no read-back before the step);
// mode 2 (the Lyapunov solver's stability test): x read only, partial = (sum (x + I)^2,
//   trace x, 0, 0).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };
layout(std430, binding = 2) readonly buffer PermBuf { uint perm[]; };
layout(std430, binding = 3) writeonly buffer PartialBuf { vec4 partial[]; };
layout(std430, binding = 4) writeonly buffer YBuf { float y[]; };

uniform uint n;
uniform int mode;
uniform float a;
uniform float b;
uniform uint group_base;

// Entries per invocation: a work group covers 256 * PER consecutive entries.
const uint PER = 16u;

shared vec4 sums[256];

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint len = n * n;
    uint group = group_base + gl_WorkGroupID.x;
    uint base = group * 256u * PER;
    vec4 acc = vec4(0.0);
    float ca = mode == 3 ? uintBitsToFloat(perm[0]) : a;
    float cb = mode == 3 ? uintBitsToFloat(perm[1]) : b;
    for (uint k = 0u; k < PER; ++k) {
        uint idx = base + k * 256u + lid;
        if (idx >= len) break;
        if (mode == 0) {
            uint i = idx / n;
            uint j = idx - i * n;
            float v = w[i * n + perm[j]];
            y[idx] = v;
            acc.x += v * v;
            acc.z = max(acc.z, abs(v));
        } else if (mode == 2) {
            uint i = idx / n;
            bool diagonal = idx - i * n == i;
            float v = x[idx] + (diagonal ? 1.0 : 0.0);
            acc.x += v * v;
            if (diagonal) acc.y += x[idx];
        } else {
            float old = x[idx];
            float v = ca * old + cb * w[idx];
            x[idx] = v;
            float d = v - old;
            acc.x += d * d;
            acc.y += v * v;
            acc.z = max(acc.z, abs(v));
        }
    }
    sums[lid] = acc;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (lid < s) {
            vec4 o = sums[lid + s];
            sums[lid] = vec4(sums[lid].xy + o.xy, max(sums[lid].z, o.z), 0.0);
        }
        barrier();
    }
    if (lid == 0u) partial[group] = sums[0];
}
