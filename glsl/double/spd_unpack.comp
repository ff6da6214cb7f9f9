// The copy of C that the SPD solve factors (src/gpu/spd_device.rs), made on the GPU from C's
// stored triangle packed by rows (packed_c.glsl: in f64, or an f32 C's values; row i of the
// lower triangle: entries 0..=i at i(i+1)/2; of the upper: entries i..n-1 at
// i·n − i(i−1)/2): entry (i, j) of the order-n row-major square is 2^e·C(i, j), rounded to f32
// for the tiled Cholesky (or with DOUBLE_OUT in f64, for the f64 one), for j <= i, NaN above
// the diagonal (the factors read the lower triangle only).
layout(local_size_x = 16, local_size_y = 16) in;

#ifdef DOUBLE_OUT
#define OUT_T double
#define OUT_NAN packDouble2x32(uvec2(0u, 0x7ff80000u))
#else
#define OUT_T float
#define OUT_NAN uintBitsToFloat(0x7fc00000u)
#endif

layout(std430, binding = 1) writeonly buffer OutBuf { OUT_T square[]; };

uniform uint n;
uniform int upper;
uniform int exponent;

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= n || j >= n) {
        return;
    }
    OUT_T v = OUT_NAN;
    if (j <= i) {
        // C(i, j) = C(j, i): the lower triangle's row i, or the upper's row j. 2^e in two
        // halves, as least_squares/to_single.comp: ldexp of a double zero is not zero on
        // every driver, and a product keeps ±0.
        uint at = upper != 0 ? j * n - (j * (j - 1u)) / 2u + (i - j) : (i * (i + 1u)) / 2u + j;
        int half_e = exponent / 2;
        v = OUT_T(packed_c(at) * ldexp(1.0LF, half_e) * ldexp(1.0LF, exponent - half_e));
    }
    square[i * n + j] = v;
}
