// dst ← alpha·f(src) over a rows x cols strided view (entry (i, j) at off + i·rs + j·cs):
// mode 0 copies, 1 writes the identity (src unread), 2 the unit lower triangle of src (zeros
// above, ones on the diagonal), 3 the lower triangle of src with zeros above, 4 the lower
// triangle of src with nothing above written (in RFP a diagonal block's upper triangle holds
// other entries), 5 copies and writes zeros over the source (a move).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer DstBuf { float dst[]; };
layout(std430, binding = 1) buffer SrcBuf { float src[]; };

uniform uint rows;
uniform uint cols;
uniform uint d_off;
uniform uint d_rs;
uniform uint d_cs;
uniform uint s_off;
uniform uint s_rs;
uniform uint s_cs;
uniform int mode;
uniform float alpha;

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= rows || j >= cols || (mode == 4 && j > i)) return;
    float v;
    if (mode == 1 || (mode == 2 && i == j)) {
        v = (i == j) ? 1.0 : 0.0;
    } else if ((mode == 2 || mode == 3) && j > i) {
        v = 0.0;
    } else {
        v = src[s_off + i * s_rs + j * s_cs];
        if (mode == 5) src[s_off + i * s_rs + j * s_cs] = 0.0;
    }
    dst[d_off + i * d_rs + j * d_cs] = alpha * v;
}
