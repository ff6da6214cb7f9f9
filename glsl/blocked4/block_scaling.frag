// Column scaling for every column at once (Kernel 1): B = A·diag(d). A and B (one layer
// each) hold texel (x, y) = rows 4x..4x+4 of column y; d holds d(y) at texel (y, 0).
// T0 = (x, y, .5) interpolated over the whole of B: A at T0.xy, d at T0.yz. B has one
// render target: only result0 is drawn.
uniform sampler2D A;
uniform sampler2D d;
in vec3 T0;
void main() {
    result0 = texelFetch(A, texel(T0.xy), 0) * texelFetch(d, texel(T0.yz), 0).x;
}
