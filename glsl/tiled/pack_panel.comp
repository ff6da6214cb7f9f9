// Packs an operand of gemm_panel.comp: the rows x depth view of `x` (entry (i, k) at
// off + i·rs + k·cs), each column k scaled by d[k] where use_d is 1 (by √d[k] where 2: the
// caller knows d ≥ 0 and reads this one panel as both operands of a SYRK), goes to `p` in blocks
// of `tile` rows, each block k-major and contiguous: entry (i, k) at
// (i / tile)·block + k·tile + i % tile (block = kp·tile, or more where the blocks are padded
// off power-of-two strides), zeros for rows ≥ `rows` and for depth ≤ k < kp. A
// work group of the product then streams two contiguous ranges (its rows' block and its
// columns' block), reads whole k-rows with vec4 loads, no bounds checks and no strides, and d
// is applied once per entry instead of once per tile that reads it. A 32 x 32 transpose
// through shared memory keeps both the reads (along k, where rows are k-contiguous) and the
// writes (along i) coalesced.
layout(local_size_x = 32, local_size_y = 8) in;

layout(std430, binding = 0) writeonly buffer PanelBuf { float p[]; };
layout(std430, binding = 1) readonly buffer XBuf { float x[]; };
layout(std430, binding = 3) readonly buffer DBuf { float d[]; };

uniform uint rows;
uniform uint depth;
uniform uint tile;
uniform uint kp;
uniform uint block;
uniform uint x_off;
uniform uint x_rs;
uniform uint x_cs;
uniform int use_d;
// First entry of d for this product's depth (products cut along their depth).
uniform uint d_off;

shared float T[32][33];

void main() {
    uint i0 = gl_WorkGroupID.x * 32u;
    uint k0 = gl_WorkGroupID.y * 32u;
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    bool k_contiguous = x_cs == 1u;
    for (uint r = 0u; r < 32u; r += 8u) {
        // Consecutive invocations along the view's contiguous direction.
        uint i = i0 + (k_contiguous ? ty + r : tx);
        uint k = k0 + (k_contiguous ? tx : ty + r);
        float v = 0.0;
        if (i < rows && k < depth) {
            v = x[x_off + i * x_rs + k * x_cs];
            if (use_d == 1) v *= d[d_off + k];
            if (use_d == 2) v *= sqrt(d[d_off + k]);
        }
        if (k_contiguous) T[ty + r][tx] = v; else T[tx][ty + r] = v;
    }
    barrier();
    for (uint r = 0u; r < 32u; r += 8u) {
        uint k = k0 + ty + r;
        uint i = i0 + tx;
        if (k < kp) p[(i / tile) * block + k * tile + i % tile] = T[tx][ty + r];
    }
}
