#version 430
// out[k] = src[index[k]]: a few scattered entries of a large buffer (a factor's diagonal) read
// back without reading the rest.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer SrcBuf { float src[]; };
layout(std430, binding = 1) readonly buffer IndexBuf { uint index[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float gathered[]; };

uniform uint count;

void main() {
    uint k = gl_GlobalInvocationID.x;
    if (k < count) gathered[k] = src[index[k]];
}
