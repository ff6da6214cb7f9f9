#version 330 core
// Prepended to every blocked kernel (after the Brook+ sample's float4 blocks): each RGBA32F
// texel holds the 2x2 block [[x, y], [z, w]] of entries (2y..2y+1, 2x..2x+1). Interpolated
// coordinates sit on texel centres (.5 offsets); floor() picks the texel, as in common.glsl.
ivec2 texel(vec2 c) {
    return ivec2(floor(c));
}
// The 2x2 product a·bᵀ of two blocks stored row by row.
vec4 times_transpose(vec4 a, vec4 b) {
    return a.xxzz * b.xzxz + a.yyww * b.ywyw;
}
// A quiet NaN: what a pivot that is not positive becomes, on every driver.
float not_a_number() {
    return uintBitsToFloat(0x7fc00000u);
}
layout(location = 0) out vec4 result;
