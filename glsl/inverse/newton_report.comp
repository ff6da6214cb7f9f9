// The scaled Newton iteration's bookkeeping on the device, in one work group, so that a step
// needs one read-back, of the report, instead of three (src/inverse/newton.rs,
// NewtonSync::Once). Report words: 0, 1 the step's coefficients (0.5·mu, 0.5/mu) as f32 bits;
// 2-3 mu, 4-5 sum y^2, 8-9 sum d^2, 10-11 sum x^2, 12-13 max |x| (f64, low word first);
// 6, 7 the status word (first failing column, its pivot's bits).
// mode 0 (order): perm = the column order putting (PA)^-1 back from the pivots piv (row p
//   swapped with piv[p] at step p): the identity with the swaps applied in reverse, in shared
//   memory (newton::column_order on the CPU), for count = n <= MAX_WORDS / 2.
// mode 1 (scale): the status word and sum y^2 of the unscramble pass's count partials, summed
//   in f64 in group order as the CPU sums them; mu = (sqrt(sum y^2) / norm)^(1/2) (Higham's
//   Frobenius-norm scaling, Benner et al. eq. 1), or 1 where scale == 0, and its coefficients.
// mode 2 (sums): the step pass's count partials summed (f64, group order; max of the third).
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer PivBuf { uint piv[]; };
layout(std430, binding = 1) buffer ReportBuf { uint report[]; };
layout(std430, binding = 2) readonly buffer PartialBuf { vec4 partial[]; };
layout(std430, binding = 3) readonly buffer StatusBuf { uint status[]; };
layout(std430, binding = 4) writeonly buffer PermBuf { uint perm[]; };

uniform int mode;
uniform uint count;
uniform uint scale;
// ‖X_k‖_F's f64 bits (low, high).
uniform uint norm_lo;
uniform uint norm_hi;

// Shared words: the order and the pivots (2n <= MAX_WORDS), or a chunk of the partials, so
// that the one invocation doing the serial work reads shared memory, not global memory.
#ifndef MAX_WORDS
#define MAX_WORDS 8192u
#endif

shared uint words[MAX_WORDS];

void put(uint at, double v) {
    uvec2 w = unpackDouble2x32(v);
    report[at] = w.x;
    report[at + 1u] = w.y;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    if (mode == 0) {
        for (uint i = lid; i < count; i += 256u) {
            words[i] = i;
            words[count + i] = piv[i];
        }
        barrier();
        if (lid == 0u) {
            for (uint p = count; p > 0u; --p) {
                uint q = words[count + p - 1u];
                uint t = words[p - 1u];
                words[p - 1u] = words[q];
                words[q] = t;
            }
        }
        barrier();
        for (uint i = lid; i < count; i += 256u) perm[i] = words[i];
        return;
    }
    // The partials in chunks through shared memory, summed by invocation 0 in group order.
    uint fields = mode == 1 ? 1u : 3u;
    uint chunk = MAX_WORDS / fields;
    double s = 0.0LF;
    double t = 0.0LF;
    double m = 0.0LF;
    for (uint c0 = 0u; c0 < count; c0 += chunk) {
        uint len = min(chunk, count - c0);
        for (uint i = lid; i < len; i += 256u) {
            vec4 v = partial[c0 + i];
            words[i * fields] = floatBitsToUint(v.x);
            if (fields == 3u) {
                words[i * 3u + 1u] = floatBitsToUint(v.y);
                words[i * 3u + 2u] = floatBitsToUint(v.z);
            }
        }
        barrier();
        if (lid == 0u) {
            for (uint i = 0u; i < len; ++i) {
                s += double(uintBitsToFloat(words[i * fields]));
                if (fields == 3u) {
                    t += double(uintBitsToFloat(words[i * 3u + 1u]));
                    // As f64::max: a NaN partial does not replace the maximum.
                    double z = double(uintBitsToFloat(words[i * 3u + 2u]));
                    if (z > m) m = z;
                }
            }
        }
        barrier();
    }
    if (lid != 0u) return;
    if (mode == 1) {
        double norm = packDouble2x32(uvec2(norm_lo, norm_hi));
        double mu = scale != 0u ? sqrt(sqrt(s) / norm) : 1.0LF;
        report[0] = floatBitsToUint(float(0.5LF * mu));
        report[1] = floatBitsToUint(float(0.5LF / mu));
        put(2u, mu);
        put(4u, s);
        report[6] = status[0];
        report[7] = status[1];
    } else {
        put(8u, s);
        put(10u, t);
        put(12u, m);
    }
}
