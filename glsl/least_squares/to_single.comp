#version 430
// out = float(2^e · a): A (in f64 on the device for the residuals) scaled by an exact power of
// two and rounded to single precision for the tiled assembly, so A crosses the bus once.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer ABuf { double a[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float single_a[]; };

uniform uint len;
uniform int exponent;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < len; i += stride) {
        single_a[i] = float(ldexp(a[i], exponent));
    }
}
