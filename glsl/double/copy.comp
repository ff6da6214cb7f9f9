// f64 entries between strided views (entry (i, j) of the destination at d_off + i·d_rs +
// j·d_cs, of the source at s_off + i·s_rs + j·s_cs; a transpose is a choice of strides):
// mode 0 copies, mode 1 writes zeros (the source unread).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer DstBuf { double dst[]; };
layout(std430, binding = 1) readonly buffer SrcBuf { double src[]; };

uniform uint rows;
uniform uint cols;
uniform uint d_off;
uniform uint d_rs;
uniform uint d_cs;
uniform uint s_off;
uniform uint s_rs;
uniform uint s_cs;
uniform int mode;

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= rows || j >= cols) {
        return;
    }
    dst[d_off + i * d_rs + j * d_cs] = mode == 1 ? 0.0 : src[s_off + i * s_rs + j * s_cs];
}
