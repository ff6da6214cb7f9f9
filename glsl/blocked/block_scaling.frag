// Column scaling by blocks (Kernel 1 two columns at a time): B(I, k) = A(I, k)·diag(d(2k), d(2k+1)).
// T0 = (x, y, .5) interpolated over the whole of B: A at T0.xy, d at T0.xz.
uniform sampler2D A;
uniform sampler2D d;
in vec3 T0;
void main() {
    vec2 dk = texelFetch(d, texel(T0.xz), 0).xy;
    result = texelFetch(A, texel(T0.xy), 0) * dk.xyxy;
}
