// Whether a Cholesky pivot fails: not positive, or NaN. Read from the value's bits, because a
// compiler that assumes no NaN may turn !(p > 0.0) into p <= 0.0, which lets a NaN pass
// (NVIDIA's does). Positive means the sign bit clear and the bits above zero, up to +inf.
// Only #defines (prepended to the factor kernels, before any #extension they carry).
#define PIVOT_FAILS(p) (floatBitsToUint(p) - 1u >= 0x7F800000u)
#define PIVOT_FAILS_DOUBLE(p) (unpackDouble2x32(p).y < 0x7FF00000u \
    ? (unpackDouble2x32(p).x | unpackDouble2x32(p).y) == 0u \
    : unpackDouble2x32(p) != uvec2(0u, 0x7FF00000u))
