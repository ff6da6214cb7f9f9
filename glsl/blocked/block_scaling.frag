// Column scaling by blocks (Kernel 1 two columns at a time): B = A·diag(d), block by block.
// A and B hold texel (x, y) = rows 2x, 2x+1 and columns 2y, 2y+1; d holds d(2y), d(2y+1) at
// texel (y, 0). T0 = (x, y, .5) interpolated over the whole of B: A at T0.xy, d at T0.yz.
uniform sampler2D A;
uniform sampler2D d;
in vec3 T0;
void main() {
    vec2 dk = texelFetch(d, texel(T0.yz), 0).xy;
    result = texelFetch(A, texel(T0.xy), 0) * dk.xyxy;
}
