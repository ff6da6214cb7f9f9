// x ← x·L⁻ᵀ for one block column of L (w columns, L's w x w lower triangle; its entries above
// the diagonal not read), R rows of x per work group: each group solves its rows through all
// w columns alone, left-looking in blocks of D (one launch where the inner blocks of
// trsm_inverted take two apiece). Block jb: acc = x_jb − Σ_{kb<jb} x_kb·L_{jb,kb}ᵀ, one stage
// per term (a tile of L and the group's solved x_kb in shared memory), then a stage
// x_jb = acc·L_jb⁻ᵀ with the block's inverse (trtri_blocks.comp: row-major D x D slots, zeros
// above the diagonal), written back to x. The next stage's tile and x block are fetched into
// registers while the current one is multiplied (one stage behind: x_0 comes from the
// registers of the stage that solved it). Invocation (c, g) owns column c of the block and
// rows g + RG·q (q < R/RG) of the group's R. The group reads back the blocks it wrote (coherent
// x, a buffer barrier and a group barrier between).
#pragma optionNV(unroll all)
layout(local_size_x = D, local_size_y = RG) in;

#define RPT (R / RG)
#define THREADS (D * RG)
#define T_LOADS ((D * D) / THREADS)

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

// The next stage's tile (element e = tid + i·THREADS: row e / D, column e % D) and x block.
float pt[T_LOADS];
float px[RPT];

// Tile (jb, kb) of L (kb < jb) or block jb's inverse (kb = jb), b of its rows inside L.
void fetch_tile(uint jb, uint kb, uint b, uint tid) {
    uint j0 = jb * uint(D);
    uint k0 = kb * uint(D);
    uint slot = inv_off + jb * uint(D * D);
    for (int i = 0; i < T_LOADS; i++) {
        uint e = tid + uint(i * THREADS);
        uint cc = e / uint(D);
        uint k = e % uint(D);
        if (kb < jb)
            pt[i] = cc < b ? l[l_off + (j0 + cc) * l_rs + (k0 + k) * l_cs] : 0.0;
        else
            pt[i] = (k <= cc && cc < b) ? inv[slot + cc * uint(D) + k] : 0.0;
    }
}

// Column c of block kb of x on the invocation's rows (0 past x's rows or the block's b).
void fetch_x(uint kb, uint b, uint i0, uint c, uint g) {
    for (int q = 0; q < RPT; q++) {
        uint i = i0 + g + uint(RG * q);
        px[q] = (i < rows && c < b) ? x[x_off + i * x_rs + (kb * uint(D) + c) * x_cs] : 0.0;
    }
}

void main() {
    uint c = gl_LocalInvocationID.x;
    uint g = gl_LocalInvocationID.y;
    uint tid = g * uint(D) + c;
    uint i0 = gl_WorkGroupID.x * uint(R);
    uint blocks = (w + uint(D) - 1u) / uint(D);
    float acc[RPT];
    fetch_x(0u, min(uint(D), w), i0, c, g);
    for (int q = 0; q < RPT; q++) acc[q] = px[q];
    fetch_tile(0u, 0u, min(uint(D), w), tid);
    uint jb = 0u;
    uint kb = 0u;
    while (jb < blocks) {
        uint b = min(uint(D), w - jb * uint(D));
        bool inverse = kb == jb;
        barrier();
        for (int i = 0; i < T_LOADS; i++) {
            uint e = tid + uint(i * THREADS);
            t[e % uint(D)][e / uint(D)] = pt[i];
        }
        for (int q = 0; q < RPT; q++) xs[g + uint(RG * q)][c] = inverse ? acc[q] : px[q];
        barrier();
        uint njb = inverse ? jb + 1u : jb;
        uint nkb = inverse ? 0u : kb + 1u;
        uint nb = njb < blocks ? min(uint(D), w - njb * uint(D)) : 0u;
        if (njb < blocks) {
            fetch_tile(njb, nkb, nb, tid);
            // x_nkb was solved at an earlier stage, but x_0 at this one (then from y below).
            if (nkb < njb && !(inverse && jb == 0u)) fetch_x(nkb, uint(D), i0, c, g);
        }
        if (inverse) {
            float y[RPT];
            for (int q = 0; q < RPT; q++) y[q] = 0.0;
            for (uint k = 0u; k < uint(D); k++) {
                float lv = t[k][c];
                for (int q = 0; q < RPT; q++) y[q] += xs[g + uint(RG * q)][k] * lv;
            }
            for (int q = 0; q < RPT; q++) {
                uint i = i0 + g + uint(RG * q);
                if (i < rows && c < b) x[x_off + i * x_rs + (jb * uint(D) + c) * x_cs] = y[q];
            }
            if (jb == 0u)
                for (int q = 0; q < RPT; q++) px[q] = y[q];
            memoryBarrierBuffer();
            // The next block's right-hand sides (this group's rows: not written yet).
            if (njb < blocks)
                for (int q = 0; q < RPT; q++) {
                    uint i = i0 + g + uint(RG * q);
                    acc[q] = (i < rows && c < nb) ? x[x_off + i * x_rs + (njb * uint(D) + c) * x_cs] : 0.0;
                }
        } else {
            for (uint k = 0u; k < uint(D); k++) {
                float lv = t[k][c];
                for (int q = 0; q < RPT; q++) acc[q] -= xs[g + uint(RG * q)][k] * lv;
            }
        }
        jb = njb;
        kb = nkb;
    }
}
