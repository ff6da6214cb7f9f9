// W ← 2^e·T·V or 2^e·Tᵀ·V in f64 for the lower triangle T of the order-n row-major square `t`
// (entries above its diagonal never read) and up to four right sides: V and W hold k vectors
// of n entries one after another, from v_off and w_off. One work group per entry of W's
// vectors (rows row0 .. row0 + gl_NumWorkGroups.x), its invocations over the sum, the k partial
// sums added in shared memory: each entry of T read once for all k sides. T·V reads T's row o
// (entries j <= o, contiguous); Tᵀ·V its column o (entries i >= o).
layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer TBuf { double t[]; };
layout(std430, binding = 1) readonly buffer VBuf { double v[]; };
layout(std430, binding = 2) writeonly buffer WBuf { double w[]; };

uniform uint n;
uniform uint k;
uniform int transposed;
uniform int exponent;
uniform uint v_off;
uniform uint w_off;
uniform uint row0;

shared dvec4 sums[128];

void main() {
    uint o = row0 + gl_WorkGroupID.x;
    uint lane = gl_LocalInvocationID.x;
    // The k partial sums in four scalars (no indexed private array).
    dvec4 s = dvec4(0.0LF);
    if (o < n) {
        uint first = transposed != 0 ? o : 0u;
        uint last = transposed != 0 ? n : o + 1u;
        for (uint j = first + lane; j < last; j += 128u) {
            double entry = transposed != 0 ? t[j * n + o] : t[o * n + j];
            uint at = v_off + j;
            s.x += entry * v[at];
            if (k > 1u) {
                s.y += entry * v[at + n];
            }
            if (k > 2u) {
                s.z += entry * v[at + 2u * n];
            }
            if (k > 3u) {
                s.w += entry * v[at + 3u * n];
            }
        }
    }
    sums[lane] = s;
    barrier();
    for (uint half_ = 64u; half_ > 0u; half_ >>= 1u) {
        if (lane < half_) {
            sums[lane] += sums[lane + half_];
        }
        barrier();
    }
    if (lane == 0u && o < n) {
        // 2^e in two halves, as least_squares/to_single.comp: ldexp of a double zero is not
        // zero on every driver, and a product keeps ±0.
        int half_e = exponent / 2;
        dvec4 total = sums[0] * ldexp(1.0LF, half_e) * ldexp(1.0LF, exponent - half_e);
        for (uint c = 0u; c < k; c++) {
            w[w_off + c * n + o] = total[c];
        }
    }
}
