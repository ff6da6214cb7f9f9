// The panel solve (Kernel 4 for a block column, the Brook+ normalization step) as a product:
// X = A(I, k..)·L_kk⁻ᵀ, Y = L_kk⁻¹ drawn over the diagonal block of the source by
// block_inverse.frag, so X_tj = Σ_{t≤tj} A_t·Y_tjᵀ (Y is lower triangular: its blocks above
// the diagonal, which the source does not hold, are never read). Every fragment is
// independent, with at most KB block products and no divisions. T0 = (origin + .5, ±1) as
// in block_factor.frag: block (k+j, k+t) is texel origin ± (t, j), and block (I, k+t) of the
// fragment's row is texel (origin.x ± t, y) (a block column never straddles the packed fold).
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
uniform sampler2D L;
in vec3 T0;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    int tj = dir * (here.x - o.x);
    vec4 sum = vec4(0.0);
    for (int t = 0; t < KB; ++t) {
        if (t <= tj) {
            sum += times_transpose(texelFetch(L, ivec2(o.x + dir * t, here.y), 0),
                                   texelFetch(L, o + dir * ivec2(t, tj), 0));
        }
    }
    result = sum;
}
