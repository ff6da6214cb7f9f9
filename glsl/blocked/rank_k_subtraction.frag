// The trailing update (Kernel 5 with rank K = 2·KB, the Brook+ sub-matrix update):
// L_T(I, J) = L_S(I, J) − Σ_t L(I, k+t)·L(J, k+t)ᵀ over the panel's KB texel columns.
// T0 = (k+.5, y) walks the panel's row block I, T1 = (x, k+.5), read .yx, row block J.
// The upper entry of a diagonal block is set to zero.
const int KB = 8;
uniform sampler2D L;
in vec3 T0;
in vec2 T1;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 row = texel(T0.xy);
    ivec2 col = texel(T1.yx);
    vec4 sum = texelFetch(L, here, 0);
    for (int t = 0; t < KB; ++t) {
        sum -= times_transpose(texelFetch(L, row + ivec2(t, 0), 0),
                               texelFetch(L, col + ivec2(t, 0), 0));
    }
    if (here.x == here.y) {
        sum.y = 0.0;
    }
    result = sum;
}
