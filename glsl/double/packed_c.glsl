// The SPD solve's C as its stored triangle packed by rows (src/gpu/spd_device.rs): in f64, or
// with SINGLE_C an f32 C's own values, read as bits and widened exactly (subnormals too, where
// a device flushes them in float arithmetic). Binding 0.
#ifdef SINGLE_C
layout(std430, binding = 0) readonly buffer PackedBuf { uint tri[]; };

double packed_c(uint at) {
    uint u = tri[at];
    uint e = (u >> 23) & 0xffu;
    uint f = u & 0x7fffffu;
    double v;
    if (e == 0u) {
        // A zero stays zero (ldexp of a double zero is not zero on every driver).
        v = f == 0u ? 0.0LF : ldexp(double(f), -149);
    } else if (e == 255u) {
        v = f == 0u ? 1.0 / 0.0 : 0.0 / 0.0;
    } else {
        v = ldexp(double(f | 0x800000u), int(e) - 150);
    }
    return (u >> 31) != 0u ? -v : v;
}
#else
layout(std430, binding = 0) readonly buffer PackedBuf { double tri[]; };

double packed_c(uint at) {
    return tri[at];
}
#endif
