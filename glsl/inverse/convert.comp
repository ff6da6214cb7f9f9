// Moves a rows x cols matrix between f64 and f32 storage over strided views (entry (i, j) of
// the f64 view at d_off + i·d_rs + j·d_cs, of the f32 view at s_off + i·s_rs + j·s_cs): the
// Lyapunov solver's and the sign function's hand-over between the f32 iteration and the f64
// refinement, without a trip through the host. Modes:
//   0 narrow:  single ← float(alpha·double)
//   1 widen:   out ← beta·in + alpha·double(single) (in unread when beta = 0; out may be in),
//              each work group writing Σ out² over its entries to partial[group]
//   2 symmetrize the f64 square in place: (i, j) and (j, i) ← their mean, for i > j.
//   3 the Lyapunov residual of a symmetric Q and X from R = Q − A·X in the f64 square in
//     place: (i, j) and (j, i) ← R(i, j) + R(j, i) − Q(i, j) (Q in `in`, read over the same
//     view) = Q − A·X − X·Aᵀ, since X·Aᵀ = (A·X)ᵀ = Q − Rᵀ; with Σ over the whole square of
//     the result's squares per work group, as mode 1.
//   4 out ← alpha·out + beta·in over the f64 view (in unread when beta = 0; it may be out),
//     with Σ out² per work group, as mode 1.
// The f64 scalars come as their two 32-bit halves (packDouble2x32).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer OutBuf { double dout[]; };
layout(std430, binding = 1) buffer SingleBuf { float single[]; };
layout(std430, binding = 2) readonly buffer InBuf { double din[]; };
layout(std430, binding = 3) writeonly buffer PartialBuf { double partial[]; };

uniform uint rows;
uniform uint cols;
uniform uint d_off;
uniform uint d_rs;
uniform uint d_cs;
uniform uint s_off;
uniform uint s_rs;
uniform uint s_cs;
uniform int mode;
uniform uint alpha_lo;
uniform uint alpha_hi;
uniform uint beta_lo;
uniform uint beta_hi;

shared double sums[256];

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    bool inside = i < rows && j < cols;
    double alpha = packDouble2x32(uvec2(alpha_lo, alpha_hi));
    if (mode == 0) {
        if (inside) {
            single[s_off + i * s_rs + j * s_cs] = float(alpha * dout[d_off + i * d_rs + j * d_cs]);
        }
    } else if (mode == 2) {
        if (inside && i > j) {
            uint p = d_off + i * d_rs + j * d_cs;
            uint q = d_off + j * d_rs + i * d_cs;
            double v = 0.5 * (dout[p] + dout[q]);
            dout[p] = v;
            dout[q] = v;
        }
    } else {
        double beta = packDouble2x32(uvec2(beta_lo, beta_hi));
        double v = 0.0;
        // Entries this invocation adds to Σ: one, or both of a symmetric pair.
        double weight = 1.0;
        if (mode == 3) {
            if (inside && i >= j) {
                uint p = d_off + i * d_rs + j * d_cs;
                uint q = d_off + j * d_rs + i * d_cs;
                v = dout[p] + dout[q] - din[p];
                dout[p] = v;
                if (i != j) {
                    dout[q] = v;
                    weight = 2.0;
                }
            }
        } else if (inside) {
            uint p = d_off + i * d_rs + j * d_cs;
            v = alpha * (mode == 4 ? dout[p] : double(single[s_off + i * s_rs + j * s_cs]));
            if (beta != 0.0) {
                v += beta * din[p];
            }
            dout[p] = v;
        }
        uint t = gl_LocalInvocationIndex;
        sums[t] = weight * v * v;
        barrier();
        for (uint h = 128u; h > 0u; h >>= 1) {
            if (t < h) {
                sums[t] += sums[t + h];
            }
            barrier();
        }
        if (t == 0u) {
            partial[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = sums[0];
        }
    }
}
