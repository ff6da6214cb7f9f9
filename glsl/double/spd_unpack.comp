// The f32 copy of C that the tiled Cholesky factors (src/gpu/spd_device.rs), made on the GPU
// from C's stored triangle packed by rows (packed_c.glsl: in f64, or an f32 C's values; row i
// of the lower triangle: entries 0..=i at i(i+1)/2; of the upper: entries i..n-1 at
// i·n − i(i−1)/2): entry (i, j) of the order-n row-major square is 2^e·C(i, j) rounded to f32
// for j <= i, NaN above the diagonal (the factor reads the lower triangle only).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 1) writeonly buffer SingleBuf { float single[]; };

uniform uint n;
uniform int upper;
uniform int exponent;

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= n || j >= n) {
        return;
    }
    float v = uintBitsToFloat(0x7fc00000u);
    if (j <= i) {
        // C(i, j) = C(j, i): the lower triangle's row i, or the upper's row j.
        uint at = upper != 0 ? j * n - (j * (j - 1u)) / 2u + (i - j) : (i * (i + 1u)) / 2u + j;
        v = float(ldexp(packed_c(at), exponent));
    }
    single[i * n + j] = v;
}
