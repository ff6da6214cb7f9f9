#version 430
// out = float(2^e · a): A (in f64 on the device for the residuals) scaled by an exact power of
// two and rounded to single precision for the tiled assembly, so A crosses the bus once. The
// power of two multiplies in two halves (each representable for |e| up to about 2000), as
// times_power_of_two does on the CPU: ldexp of a double zero is not zero on every driver
// (llvmpipe adds e to the zero's exponent field), and a product keeps ±0 exact.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float single_a[]; };

uniform uint len;
uniform int exponent;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    int half_e = exponent / 2;
    double first = ldexp(1.0LF, half_e);
    double second = ldexp(1.0LF, exponent - half_e);
    for (uint i = gl_GlobalInvocationID.x; i < len; i += stride) {
        single_a[i] = float(a[i] * first * second);
    }
}
