// The trailing update (Kernel 5 with rank K = 2·KB, the Brook+ sub-matrix update):
// L_T(I, J) = L_S(I, J) − Σ_t L(I, k+t)·L(J, k+t)ᵀ over the panel's KB texel columns.
// T0.xy = the texel of block (I, k), T1.yx that of block (J, k), T0.z = ±1 the step from
// block (I, k+t) to (I, k+t+1) (-1 in the packed format's rotated corner). The upper entry
// of a diagonal block (I = J: the two fetched rows coincide) is set to zero.
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
uniform sampler2D L;
in vec3 T0;
in vec2 T1;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 row = texel(T0.xy);
    ivec2 col = texel(T1.yx);
    ivec2 step = ivec2(T0.z < 0.0 ? -1 : 1, 0);
    vec4 sum = texelFetch(L, here, 0);
    for (int t = 0; t < KB; ++t) {
        sum -= times_transpose(texelFetch(L, row + t * step, 0),
                               texelFetch(L, col + t * step, 0));
    }
    if (row.y == col.y) {
        sum.y = 0.0;
    }
    result = sum;
}
