// Packs an operand of gemm_texel.comp for reads in fours along k (software renderers): the
// rows x cols view of `src` (entry (i, k) at off + i·rs + k·cs, read through a buffer texture)
// goes to the start of `dst` as rows of ld consecutive floats, zeros after column cols. Column-
// major views (LAPACK's RFP) and rows off 4-float boundaries (orders that are not multiples of
// 4) then run the product at the aligned speed; the zeros (both operands padded alike) leave
// every sum as it was.
layout(local_size_x = 16, local_size_y = 4) in;

layout(std430, binding = 0) writeonly buffer DstBuf { float dst[]; };

uniform samplerBuffer src;
uniform uint rows;
uniform uint cols;
uniform uint ld;
uniform uint s_off;
uniform uint s_rs;
uniform uint s_cs;

void main() {
    uint k = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= rows || k >= ld) return;
    dst[i * ld + k] = k < cols ? texelFetch(src, int(s_off + i * s_rs + k * s_cs)).x : 0.0;
}
