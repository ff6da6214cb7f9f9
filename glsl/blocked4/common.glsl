#version 330 core
// Prepended to every 4 x 4 blocked kernel (the Brook+ sample's blocks over four render
// targets): the four RGBA32F layers of a matrix hold, at texel (x, y), the four columns of
// the 4 x 4 block of entries (4y..4y+4, 4x..4x+4). GLSL's mat4 is column-major, so the four
// texels are the block as a mat4, B[j][i] = entry (i, j). Interpolated coordinates sit on
// texel centres (.5 offsets); floor() picks the texel, as in common.glsl.
ivec2 texel(vec2 c) {
    return ivec2(floor(c));
}
// A quiet NaN: what a pivot that is not positive becomes, on every driver.
float not_a_number() {
    return uintBitsToFloat(0x7fc00000u);
}
// The ping-pong texture a pass reads (C_S, L_S), its four layers.
uniform sampler2D L0;
uniform sampler2D L1;
uniform sampler2D L2;
uniform sampler2D L3;
// The 4 x 4 block at texel p of the pair's source.
mat4 block(ivec2 p) {
    return mat4(texelFetch(L0, p, 0), texelFetch(L1, p, 0), texelFetch(L2, p, 0),
                texelFetch(L3, p, 0));
}
// The block with its strict upper triangle set to zero: on a diagonal block those entries
// are the matrix's strict upper triangle.
mat4 lower(mat4 b) {
    b[1][0] = 0.0;
    b[2][0] = 0.0;
    b[2][1] = 0.0;
    b[3][0] = 0.0;
    b[3][1] = 0.0;
    b[3][2] = 0.0;
    return b;
}
// Fragment output q draws into layer q: column q of the fragment's block.
layout(location = 0) out vec4 result0;
layout(location = 1) out vec4 result1;
layout(location = 2) out vec4 result2;
layout(location = 3) out vec4 result3;
void put(mat4 b) {
    result0 = b[0];
    result1 = b[1];
    result2 = b[2];
    result3 = b[3];
}
