// The diagonal block's factor (Kernel 3 for a 2·KB block, as the Brook+ sample's square-root
// step): each fragment of the block's lower triangle factors the leading rows of the block it
// needs, right-looking, reading only the lower triangle, and writes its own 2x2 piece.
// T0 = (k+.5, .) names the block column k. A pivot that is not positive becomes NaN.
const int KB = 8;
const int NB = 2 * KB;
uniform sampler2D L;
in vec3 T0;
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    int k = int(floor(T0.x));
    int ti = here.y - k;
    int tj = here.x - k;
    int rows = 2 * ti + 2;
    int cols = 2 * tj + 2;
    float a[NB * NB];
    for (int r = 0; r < rows; r += 2) {
        for (int c = 0; c <= r; c += 2) {
            vec4 v = texelFetch(L, ivec2(k + c / 2, k + r / 2), 0);
            a[r * NB + c] = v.x;
            a[r * NB + c + 1] = v.y; // upper entry when c == r: never read
            a[(r + 1) * NB + c] = v.z;
            a[(r + 1) * NB + c + 1] = v.w;
        }
    }
    for (int c = 0; c < cols; ++c) {
        float p = a[c * NB + c];
        float d = p > 0.0 ? sqrt(p) : not_a_number();
        a[c * NB + c] = d;
        for (int r = c + 1; r < rows; ++r) {
            a[r * NB + c] /= d;
        }
        for (int c2 = c + 1; c2 < cols; ++c2) {
            float l = a[c2 * NB + c];
            for (int r = c2; r < rows; ++r) {
                a[r * NB + c2] -= a[r * NB + c] * l;
            }
        }
    }
    int r0 = 2 * ti;
    int c0 = 2 * tj;
    result = vec4(a[r0 * NB + c0], ti == tj ? 0.0 : a[r0 * NB + c0 + 1],
                  a[(r0 + 1) * NB + c0], a[(r0 + 1) * NB + c0 + 1]);
}
