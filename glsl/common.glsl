#version 330 core
// Prepended to every fragment kernel. The paper's texRECT(t, c) reads texel floor(c) of a
// rectangle texture; interpolated coordinates sit on texel centres (.5 offsets) and may be off
// by ~1e-3 texel on some GPUs, so floor() is safe where rounding would not be.
float fetch(sampler2D t, vec2 c) {
    return texelFetch(t, ivec2(floor(c)), 0).r;
}
layout(location = 0) out float result;
