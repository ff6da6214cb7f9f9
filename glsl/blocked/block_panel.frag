// The panel solve (Kernel 4 for a block column, the Brook+ normalization step):
// L(I, k..) = A(I, k..)·L_kk⁻ᵀ by forward substitution over the columns up to this texel's,
// reading the factored diagonal block L_kk (lower triangle only) and the block row I.
// T0 = (k+.5, .) names the block column k.
const int KB = 8;
const int NB = 2 * KB;
uniform sampler2D L;
in vec3 T0;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    int k = int(floor(T0.x));
    int cols = 2 * (here.x - k) + 2;
    float l[NB * NB];
    for (int r = 0; r < cols; r += 2) {
        for (int c = 0; c <= r; c += 2) {
            vec4 v = texelFetch(L, ivec2(k + c / 2, k + r / 2), 0);
            l[r * NB + c] = v.x;
            l[r * NB + c + 1] = v.y; // upper entry when c == r: never read
            l[(r + 1) * NB + c] = v.z;
            l[(r + 1) * NB + c + 1] = v.w;
        }
    }
    float x0[NB];
    float x1[NB];
    for (int c = 0; c < cols; c += 2) {
        vec4 v = texelFetch(L, ivec2(k + c / 2, here.y), 0);
        x0[c] = v.x;
        x0[c + 1] = v.y;
        x1[c] = v.z;
        x1[c + 1] = v.w;
    }
    for (int c = 0; c < cols; ++c) {
        float s0 = x0[c];
        float s1 = x1[c];
        for (int t = 0; t < c; ++t) {
            s0 -= x0[t] * l[c * NB + t];
            s1 -= x1[t] * l[c * NB + t];
        }
        x0[c] = s0 / l[c * NB + c];
        x1[c] = s1 / l[c * NB + c];
    }
    result = vec4(x0[cols - 2], x0[cols - 1], x1[cols - 2], x1[cols - 1]);
}
