// Busy work that keeps every multiprocessor issuing dependent FMAs: run before a timed stretch
// so the GPU's clocks are at their working speed when it starts (a GPU left nearly idle, by a
// CPU step or by short bursty runs, drops its clocks within seconds and raises them again
// only under load; measured in docs/results.md). Writes nothing in practice.
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Sink { float sink[]; };

uniform uint iterations;

void main() {
    float x = float(gl_GlobalInvocationID.x) * 1e-6;
    float y = 1.0;
    for (uint i = 0u; i < iterations; i++) {
        y = fma(y, 0.999999, x);
        x = fma(x, 0.999, y * 1e-7);
    }
    // Never true for these values; keeps the loop from being removed.
    if (y == 1234.5) sink[0] = x;
}
