// x ← x·L⁻ᵀ for one block column of L (w columns, L's w x w lower triangle; its entries above
// the diagonal not read), R rows of x per work group: each group solves its rows through all
// w columns alone, left-looking in blocks of D (one launch where the inner blocks of
// trsm_inverted take two apiece). Per block jb: acc = x_jb − Σ_{kb<jb} x_kb·L_{jb,kb}ᵀ, each
// term from a tile of L and the group's solved x_kb staged in shared memory, then
// x_jb = acc·L_jb⁻ᵀ with the block's inverse (trtri_blocks.comp: row-major D x D slots, zeros
// above the diagonal) staged the same way, written back to x. Invocation (c, g) owns column c
// of the block and rows g·RPT .. g·RPT + RPT − 1 of the group's R. The group reads back the
// blocks it wrote (coherent x, a buffer barrier and a group barrier between).
layout(local_size_x = D, local_size_y = RG) in;

#define RPT (R / RG)
#define THREADS (D * RG)

layout(std430, binding = 0) coherent buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer LBuf { float l[]; };
layout(std430, binding = 2) readonly buffer InvBuf { float inv[]; };

uniform uint rows;
uniform uint w;
uniform uint x_off;
uniform uint x_rs;
uniform uint x_cs;
uniform uint l_off;
uniform uint l_rs;
uniform uint l_cs;
uniform uint inv_off;

// A tile of L or of an inverse, transposed (t[k][c] = L(c, k)), padded against bank conflicts.
shared float t[D][D + 1];
// The group's rows of a solved block (or of acc, before its inverse).
shared float xs[R][D];

void main() {
    uint c = gl_LocalInvocationID.x;
    uint g = gl_LocalInvocationID.y;
    uint tid = g * uint(D) + c;
    uint i0 = gl_WorkGroupID.x * uint(R);
    uint blocks = (w + uint(D) - 1u) / uint(D);
    for (uint jb = 0u; jb < blocks; jb++) {
        uint j0 = jb * uint(D);
        uint b = min(uint(D), w - j0);
        float acc[RPT];
        for (int q = 0; q < RPT; q++) {
            uint i = i0 + g * uint(RPT) + uint(q);
            acc[q] = (i < rows && c < b) ? x[x_off + i * x_rs + (j0 + c) * x_cs] : 0.0;
        }
        for (uint kb = 0u; kb < jb; kb++) {
            uint k0 = kb * uint(D);
            barrier();
            for (uint e = tid; e < uint(D * D); e += uint(THREADS)) {
                uint cc = e / uint(D);
                uint k = e % uint(D);
                t[k][cc] = cc < b ? l[l_off + (j0 + cc) * l_rs + (k0 + k) * l_cs] : 0.0;
            }
            for (uint e = tid; e < uint(R * D); e += uint(THREADS)) {
                uint r = e / uint(D);
                uint k = e % uint(D);
                uint i = i0 + r;
                xs[r][k] = i < rows ? x[x_off + i * x_rs + (k0 + k) * x_cs] : 0.0;
            }
            barrier();
            for (uint k = 0u; k < uint(D); k++) {
                float lv = t[k][c];
                for (int q = 0; q < RPT; q++) acc[q] -= xs[g * uint(RPT) + uint(q)][k] * lv;
            }
        }
        barrier();
        uint slot = inv_off + jb * uint(D * D);
        for (uint e = tid; e < uint(D * D); e += uint(THREADS)) {
            uint cc = e / uint(D);
            uint k = e % uint(D);
            t[k][cc] = (k <= cc && cc < b) ? inv[slot + cc * uint(D) + k] : 0.0;
        }
        for (int q = 0; q < RPT; q++) xs[g * uint(RPT) + uint(q)][c] = acc[q];
        barrier();
        float y[RPT];
        for (int q = 0; q < RPT; q++) y[q] = 0.0;
        for (uint k = 0u; k < uint(D); k++) {
            float lv = t[k][c];
            for (int q = 0; q < RPT; q++) y[q] += xs[g * uint(RPT) + uint(q)][k] * lv;
        }
        for (int q = 0; q < RPT; q++) {
            uint i = i0 + g * uint(RPT) + uint(q);
            if (i < rows && c < b) x[x_off + i * x_rs + (j0 + c) * x_cs] = y[q];
        }
        memoryBarrierBuffer();
    }
}
