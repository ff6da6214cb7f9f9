// A batch input as the caller's f32 array holds it, brought into what the batched kernels read:
// each problem gathered from its strides into row-major order (GATHER; else in place), divided
// by 2^exponents[p] exactly as the host's f64 product rounded once to f32 would be (SCALE: bit
// operations, so subnormal inputs and results round as on the host, whatever the device does
// with denormals). One invocation per value; launch at most the device's groups, `first` the
// launch's first value.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer DstBuf { uint dst[]; };
#ifdef GATHER
layout(std430, binding = 1) readonly buffer SrcBuf { uint src[]; };
#endif
#ifdef SCALE
layout(std430, binding = 2) readonly buffer ExpBuf { int exponents[]; };
#endif

uniform uint first;
uniform uint total;
uniform uint rows;
uniform uint cols;
#ifdef GATHER
uniform uint problem_stride;
uniform uint row_stride;
uniform uint col_stride;
#endif

// The f32 with bits u times 2^s, rounded to nearest even (subnormal results included); zero,
// infinity and NaN as they are.
uint times_power_of_two(uint u, int s) {
    uint sign = u & 0x80000000u;
    uint mag = u & 0x7fffffffu;
    if (s == 0 || mag == 0u || mag >= 0x7f800000u) return u;
    int e = int(mag >> 23);
    uint m = mag & 0x7fffffu;
    if (e == 0) {
        // Subnormal: normalized, its exponent field below 1.
        int msb = findMSB(m);
        e = msb - 22;
        m = (m << uint(23 - msb)) & 0x7fffffu;
    }
    int scaled = e + s;
    if (scaled >= 255) return sign | 0x7f800000u;
    if (scaled >= 1) return sign | (uint(scaled) << 23) | m;
    int shift = 1 - scaled;
    if (shift > 24) return sign;
    uint full = m | 0x800000u;
    uint q = full >> uint(shift);
    uint rest = full & ((1u << uint(shift)) - 1u);
    uint half_unit = 1u << uint(shift - 1);
    if (rest > half_unit || (rest == half_unit && (q & 1u) == 1u)) q += 1u;
    return sign | q;
}

void main() {
    uint v = first + gl_GlobalInvocationID.x;
    if (v >= total) return;
    uint size = rows * cols;
    uint p = v / size;
    uint r = v - p * size;
    uint i = r / cols;
    uint j = r - i * cols;
#ifdef GATHER
    uint u = src[p * problem_stride + i * row_stride + j * col_stride];
#else
    uint u = dst[v];
#endif
#ifdef SCALE
    u = times_power_of_two(u, -exponents[p]);
#endif
    dst[v] = u;
}
