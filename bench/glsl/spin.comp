// Busy work for bench/src/bin/overlap_probe.rs: each invocation runs `iters` dependent
// multiply-adds on its entry of x.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };

uniform uint iters;

void main() {
    uint i = gl_GlobalInvocationID.x;
    float v = x[i];
    for (uint k = 0u; k < iters; k++) v = v * 0.9999 + 0.0001;
    x[i] = v;
}
