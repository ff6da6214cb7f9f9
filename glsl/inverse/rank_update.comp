// The general inverses' rank-b updates C ← beta·C + alpha·X·Y (src/inverse/rank.rs): C
// (rows x cols), X (rows x depth) and Y (depth x cols), each row-major with its own row
// stride, so every read and write walks rows contiguously (vec4 where VEC4 = 1: offsets,
// strides, cols and depth all multiples of 4). Rows from `split` on take their Y from
// `y_off2` (Gauss-Jordan's rows below the panel, src/inverse/gje.rs), and their tiles start
// at `split`, so no tile straddles it; split = rows: one Y. One BM x BN tile per work group of
// 16 x 16 invocations, each TM x TN outputs in registers (rows ty·TM .., columns in fours 64
// apart, so a warp's accesses to C are contiguous), X's and Y's slices staged in shared memory
// KC deep at a time, each C entry read and written once. beta = 0: C is not read (it may hold
// NaN). Work group rows from `row_base` on (launches of at most the device's y count).
// DEPTH_SLICE: the slices' depth; C_FIRST: C's tile read into registers before the depth loop
// (its latency behind the products) instead of after it; PREFETCH (aligned views): the next
// slice read into registers while the current one is multiplied.
layout(local_size_x = 16, local_size_y = 16) in;

#if VEC4
layout(std430, binding = 0) buffer CBuf { vec4 c[]; };
layout(std430, binding = 1) readonly buffer XBuf { vec4 x[]; };
layout(std430, binding = 2) readonly buffer YBuf { vec4 y[]; };
#else
layout(std430, binding = 0) buffer CBuf { float c[]; };
layout(std430, binding = 1) readonly buffer XBuf { float x[]; };
layout(std430, binding = 2) readonly buffer YBuf { float y[]; };
#endif

uniform uint rows;
uniform uint cols;
uniform uint depth;
uniform uint split;
// Offsets and row strides in floats.
uniform uint c_off;
uniform uint c_ld;
uniform uint x_off;
uniform uint x_ld;
uniform uint y_off;
uniform uint y_off2;
uniform uint y_ld;
uniform float alpha;
uniform float beta;
uniform uint row_base;

const uint BM = 16u * uint(TM);
const uint BN = 16u * uint(TN);
const uint KC = uint(DEPTH_SLICE);
// X's slice k-major (a row of BM values per k, read as vec4 by an invocation's rows), one
// vec4 of padding per k against bank conflicts of the transposing stores; Y's as read.
const uint XS = BM / 4u + 1u;
const uint YS = BN / 4u;
shared vec4 xs[KC * XS];
shared vec4 ys[KC * YS];

#if VEC4
// X's slice is read by KW invocations a row (up to 64 contiguous bytes), so the transposing
// stores fall on 16 banks a warp; Y's as it lies.
const uint KW = KC / 4u < 4u ? KC / 4u : 4u;
const uint X_VECS = BM * (KC / 4u);
const uint Y_VECS = KC * YS;
const uint X_LOADS = (X_VECS + 255u) / 256u;
const uint Y_LOADS = (Y_VECS + 255u) / 256u;
#define FETCH(K0) \
    for (uint l = 0u; l < X_LOADS; ++l) { \
        uint e = t + 256u * l; \
        uint r = (e / KW) % BM; \
        uint k = (K0) + 4u * (e % KW + KW * (e / (KW * BM))); \
        px[l] = vec4(0.0); \
        if (e < X_VECS && r0 + r < rend && k < depth) px[l] = x[(x_off + (r0 + r) * x_ld + k) / 4u]; \
    } \
    for (uint l = 0u; l < Y_LOADS; ++l) { \
        uint e = t + 256u * l; \
        uint k = (K0) + e / YS; \
        uint col = c0 + 4u * (e % YS); \
        py[l] = vec4(0.0); \
        if (e < Y_VECS && k < depth && col < cols) py[l] = y[(yo + k * y_ld + col) / 4u]; \
    }
#endif

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint t = ty * 16u + tx;
    uint gy = row_base + gl_WorkGroupID.y;
    uint top = (split + BM - 1u) / BM;
    uint r0 = gy * BM;
    uint rend = split;
    uint yo = y_off;
    if (gy >= top) {
        r0 = split + (gy - top) * BM;
        rend = rows;
        yo = y_off2;
    }
    uint c0 = gl_WorkGroupID.x * BN;

    vec4 acc[TM][TN / 4];
    for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN / 4; ++j) acc[i][j] = vec4(0.0);
    }

#if C_FIRST
    vec4 c_tile[TM][TN / 4];
    for (int i = 0; i < TM; ++i) {
        uint row = r0 + ty * uint(TM) + uint(i);
        for (int j = 0; j < TN / 4; ++j) {
            uint col = c0 + 4u * tx + 64u * uint(j);
            vec4 v = vec4(0.0);
            if (beta != 0.0 && row < rend && col < cols) {
#if VEC4
                v = c[(c_off + row * c_ld + col) / 4u];
#else
                uint at = c_off + row * c_ld + col;
                for (uint q = 0u; q < 4u && col + q < cols; ++q) v[q] = c[at + q];
#endif
            }
            c_tile[i][j] = v;
        }
    }
#endif

#if VEC4 && PREFETCH
    // A slice's X and Y in registers (px, py), staged in shared memory, then the next
    // slice's read during the current one's products.
    vec4 px[X_LOADS];
    vec4 py[Y_LOADS];
    FETCH(0u)
#endif
    for (uint k0 = 0u; k0 < depth; k0 += KC) {
#if VEC4 && PREFETCH
        for (uint l = 0u; l < X_LOADS; ++l) {
            uint e = t + 256u * l;
            uint r = (e / KW) % BM;
            uint k4 = e % KW + KW * (e / (KW * BM));
            if (e < X_VECS) {
                for (uint q = 0u; q < 4u; ++q) xs[(4u * k4 + q) * XS + r / 4u][r % 4u] = px[l][q];
            }
        }
        for (uint l = 0u; l < Y_LOADS; ++l) {
            uint e = t + 256u * l;
            if (e < Y_VECS) ys[e] = py[l];
        }
        barrier();
        if (k0 + KC < depth) {
            FETCH(k0 + KC)
        }
#elif VEC4
        for (uint e = t; e < X_VECS; e += 256u) {
            uint r = (e / KW) % BM;
            uint k4 = e % KW + KW * (e / (KW * BM));
            uint k = k0 + 4u * k4;
            vec4 v = vec4(0.0);
            if (r0 + r < rend && k < depth) v = x[(x_off + (r0 + r) * x_ld + k) / 4u];
            for (uint q = 0u; q < 4u; ++q) xs[(4u * k4 + q) * XS + r / 4u][r % 4u] = v[q];
        }
        for (uint e = t; e < Y_VECS; e += 256u) {
            uint k = e / YS;
            uint j4 = e % YS;
            uint col = c0 + 4u * j4;
            vec4 v = vec4(0.0);
            if (k0 + k < depth && col < cols) v = y[(yo + (k0 + k) * y_ld + col) / 4u];
            ys[k * YS + j4] = v;
        }
#else
        for (uint e = t; e < BM * KC; e += 256u) {
            uint r = e / KC;
            uint k = e % KC;
            float v = 0.0;
            if (r0 + r < rend && k0 + k < depth) v = x[x_off + (r0 + r) * x_ld + k0 + k];
            xs[k * XS + r / 4u][r % 4u] = v;
        }
        for (uint e = t; e < KC * BN; e += 256u) {
            uint k = e / BN;
            uint j = e % BN;
            float v = 0.0;
            if (k0 + k < depth && c0 + j < cols) v = y[yo + (k0 + k) * y_ld + c0 + j];
            ys[k * YS + j / 4u][j % 4u] = v;
        }
#endif
#if !(VEC4 && PREFETCH)
        barrier();
#endif
        // Past the depth both slices hold zeros: a fixed trip count the compiler can unroll.
        for (uint k = 0u; k < KC; ++k) {
            vec4 xv[TM / 4];
            vec4 yv[TN / 4];
            for (int i = 0; i < TM / 4; ++i) xv[i] = xs[k * XS + ty * uint(TM / 4) + uint(i)];
            for (int j = 0; j < TN / 4; ++j) yv[j] = ys[k * YS + tx + 16u * uint(j)];
            for (int i = 0; i < TM; ++i) {
                float xi = xv[i / 4][i % 4];
                for (int j = 0; j < TN / 4; ++j) acc[i][j] += xi * yv[j];
            }
        }
        barrier();
    }

    for (int i = 0; i < TM; ++i) {
        uint row = r0 + ty * uint(TM) + uint(i);
        if (row >= rend) break;
        for (int j = 0; j < TN / 4; ++j) {
            uint col = c0 + 4u * tx + 64u * uint(j);
            if (col >= cols) break;
#if VEC4
            uint at = (c_off + row * c_ld + col) / 4u;
            vec4 v = alpha * acc[i][j];
#if C_FIRST
            if (beta != 0.0) v += beta * c_tile[i][j];
#else
            if (beta != 0.0) v += beta * c[at];
#endif
            c[at] = v;
#else
            uint at = c_off + row * c_ld + col;
            for (uint q = 0u; q < 4u && col + q < cols; ++q) {
                float v = alpha * acc[i][j][q];
#if C_FIRST
                if (beta != 0.0) v += beta * c_tile[i][j][q];
#else
                if (beta != 0.0) v += beta * c[at + q];
#endif
                c[at + q] = v;
            }
#endif
        }
    }
}
