// sums[out_off + j] = Σ_i |C(i, j)|, added in f64 and rounded to the entries' type once, for
// the symmetric C of order n held as the lower triangle of a row-major square (row stride ld)
// in one buffer of f32 (or with DOUBLE_C, f64): ‖C‖₁ is the largest, read back after the
// factor that overwrites C. One work group per column j: row j before the diagonal
// (contiguous), then column j from the diagonal down. Columns col0 .. col0 +
// gl_NumWorkGroups.x.
#ifdef DOUBLE_C
#define ENTRY double
#else
#define ENTRY float
#endif
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer CBuf { ENTRY c[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { ENTRY sums[]; };

uniform uint n;
uniform uint ld;
uniform uint out_off;
uniform uint col0;

shared double partial[64];

void main() {
    uint j = col0 + gl_WorkGroupID.x;
    uint lane = gl_LocalInvocationID.x;
    double s = 0.0LF;
    if (j < n) {
        for (uint i = lane; i < n; i += 64u) {
            ENTRY v = i < j ? c[j * ld + i] : c[i * ld + j];
            s += double(abs(v));
        }
    }
    partial[lane] = s;
    barrier();
    for (uint half_ = 32u; half_ > 0u; half_ >>= 1u) {
        if (lane < half_) {
            partial[lane] += partial[lane + half_];
        }
        barrier();
    }
    if (lane == 0u && j < n) {
        sums[out_off + j] = ENTRY(partial[0]);
    }
}
