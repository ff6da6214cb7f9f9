// Batched assembly as a launch of its own (the plan's AssemblyPass::Separate, issue 28): the
// lower triangle of Ãₚ·diag(dₚ)·Ãₚᵀ for every problem p of the chunk, where Ãₚ is Aₚ (N x K,
// row-major, the batch outer) with, where RHS, bₚᵀ as row N, so one pass forms Cₚ and
// gₚ = Aₚ·diag(dₚ)·bₚ (Algorithm 3's sum). Written per problem to the gram buffer: C's
// N(N+1)/2 entries packed by rows (row i from i(i+1)/2, as common.glsl's lower_index), then
// g's N. Each TB x TB tile of the triangle is summed in registers by KL invocations, lane h
// taking the observations' loads c = h, h + KL, … (W observations each: one vec4 where the
// host defines V4), so a tile's lanes read contiguous bytes of each row; the lanes' parts add
// up through shared memory after the one barrier. No staging: the rows come through the cache.
// With F64 (the plan's Residual::Normal) the sums are f64 of exact products aᵢₖ·dₖ·aⱼₖ, for
// the least squares' refinement to take its residual g − C·x from them.
// With STAGED (tiles of 4, one lane each) a work group takes one problem instead: KS
// observations of all its rows staged in shared memory per step (k-major, a tile's four rows
// one 16- or 32-byte read), so A crosses memory once; for the larger orders, where reading
// the rows through the cache per tile moves gigabytes.
// The host puts `#version`, N, TB, KL, WG (a multiple of KL), RHS, V4, F64 and STAGED in front.
layout(local_size_x = WG) in;

#ifdef V4
// Observations 4c .. 4c + 3 of a row per load (K a multiple of 4, so every row is aligned).
#define VT vec4
#define W 4u
#else
#define VT float
#define W 1u
#endif
layout(std430, binding = 0) readonly buffer ABuf { VT a[]; };
layout(std430, binding = 1) readonly buffer DBuf { VT d[]; };
#ifdef RHS
layout(std430, binding = 2) readonly buffer BBuf { VT b[]; };
#endif
#ifdef F64
#define ACC double
#else
#define ACC float
#endif
layout(std430, binding = 7) writeonly buffer GramBuf { ACC gram[]; };

// The problems in the buffers (count), this launch's first, and the observations K.
uniform uint problem0;
uniform uint count;
uniform uint observations;

#define NP (N * (N + 1) / 2)
#ifdef RHS
#define ROWS (N + 1)
#else
#define ROWS N
#endif
// Tile rows, tiles per problem (the lower triangle of tiles), sums per tile.
#define NB ((ROWS + TB - 1) / TB)
#define TILES (NB * (NB + 1) / 2)
#define TT (TB * TB)

#if KL > 1
shared ACC parts[WG * TT];
#endif

// Observation u of a load.
float component(VT v, int u) {
#ifdef V4
    return v[u];
#else
    return v;
#endif
}

// x·y summed into s, one fused multiply-add per observation.
float fma_dot(VT x, VT y, float s) {
#ifdef V4
    return fma(x.w, y.w, fma(x.z, y.z, fma(x.y, y.y, fma(x.x, y.x, s))));
#else
    return fma(x, y, s);
#endif
}

// The entries of tile (bi, bj) to the gram buffer (rows past N − 1 and the upper triangle
// skipped; row N, where RHS, is g).
void write_tile(uint gbase, uint bi, uint bj, ACC acc[TB][TB]) {
    for (int r = 0; r < TB; r++) {
        for (int s = 0; s < TB; s++) {
            uint i = bi * uint(TB) + uint(r);
            uint j = bj * uint(TB) + uint(s);
            if (j <= i && i < uint(N)) gram[gbase + i * (i + 1u) / 2u + j] = acc[r][s];
#ifdef RHS
            if (i == uint(N) && j < uint(N)) gram[gbase + uint(NP) + j] = acc[r][s];
#endif
        }
    }
}

// Tile t's place (bi, bj), bj ≤ bi, tiles numbered by rows: bi(bi + 1)/2 ≤ t < (bi + 1)(bi + 2)/2.
uvec2 tile_place(uint tile) {
    uint bi = uint((sqrt(8.0 * float(tile) + 1.0) - 1.0) * 0.5);
    while (bi > 0u && bi * (bi + 1u) / 2u > tile) bi--;
    while ((bi + 1u) * (bi + 2u) / 2u <= tile) bi++;
    return uvec2(bi, tile - bi * (bi + 1u) / 2u);
}

#ifdef STAGED
// KS observations of the problem's rows (A's, then b where RHS; 0 past the last row or
// observation), k-major: ROW_QUAD(kk, q) is rows 4q .. 4q + 3 of observation kk; and their
// weights. In f64 as scalars (NVIDIA's compiler takes no indexed component writes of dvec4).
#ifdef F64
#define SV dvec4
shared double Rows[KS][NB * 4];
#define ROW_SET(kk, i, v) Rows[kk][i] = (v)
#define ROW_QUAD(kk, q) \
    dvec4(Rows[kk][4u * (q)], Rows[kk][4u * (q) + 1u], Rows[kk][4u * (q) + 2u], \
          Rows[kk][4u * (q) + 3u])
#else
#define SV vec4
shared vec4 Rows[KS][NB];
#define ROW_SET(kk, i, v) Rows[kk][(i) / 4u][(i) % 4u] = (v)
#define ROW_QUAD(kk, q) Rows[kk][q]
#endif
shared ACC Weights[KS];

void main() {
    uint problem = problem0 + gl_WorkGroupID.x;
    bool live = problem < count;
    if (!live) problem = count - 1u;
    uint me = gl_LocalInvocationID.x;
    // Invocations past the last tile compute tile 0 again and write nothing.
    bool owner = me < uint(TILES);
    uvec2 place = tile_place(owner ? me : 0u);
    uint kn = observations;
    uint abase = problem * uint(N) * kn;
    uint wbase = problem * kn;
    ACC acc[TB][TB];
    for (int r = 0; r < TB; r++) {
        for (int s = 0; s < TB; s++) acc[r][s] = ACC(0.0);
    }
    for (uint k0 = 0u; k0 < kn; k0 += uint(KS)) {
        // Row i's observations k0 .. k0 + KS − 1 read by KS consecutive invocations.
        for (uint e = me; e < uint(NB * 4 * KS); e += uint(WG)) {
            uint i = e / uint(KS);
            uint kk = e % uint(KS);
            uint k = k0 + kk;
            float v = 0.0;
            if (k < kn && i < uint(N)) v = a[abase + i * kn + k];
#ifdef RHS
            if (k < kn && i == uint(N)) v = b[wbase + k];
#endif
            ROW_SET(kk, i, ACC(v));
        }
        for (uint kk = me; kk < uint(KS); kk += uint(WG)) {
            Weights[kk] = k0 + kk < kn ? ACC(d[wbase + k0 + kk]) : ACC(0.0);
        }
        memoryBarrierShared();
        barrier();
        for (int kk = 0; kk < KS; kk++) {
            // x·d exact in f64 (both are floats); the sums rounded in ACC.
            SV x = ROW_QUAD(kk, place.x) * Weights[kk];
            SV y = ROW_QUAD(kk, place.y);
            for (int r = 0; r < TB; r++) {
                for (int s = 0; s < TB; s++) acc[r][s] = fma(x[r], y[s], acc[r][s]);
            }
        }
        barrier();
    }
    if (live && owner) write_tile(problem * uint(NP + N), place.x, place.y, acc);
}
#else
void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint lane = gid % uint(KL);
    uint slot = gid / uint(KL);
    uint problem = problem0 + slot / uint(TILES);
    uint tile = slot % uint(TILES);
    // Past the last problem (the launch's last group): the last problem's reads, no writes;
    // every invocation still meets the barrier.
    bool live = problem < count;
    if (!live) problem = count - 1u;
    uvec2 place = tile_place(tile);
    uint bi = place.x;
    uint bj = place.y;

    uint kw = observations / W;
    uint abase = problem * uint(N) * kw;
    uint wbase = problem * kw;
    // Each tile row's and column's first load: A's rows; row N is b (where RHS); rows past
    // the last read row 0 (their sums are never written). Column N would only meet row N.
    uint xo[TB];
    uint yo[TB];
    for (int r = 0; r < TB; r++) {
        uint i = bi * uint(TB) + uint(r);
        xo[r] = i < uint(N) ? abase + i * kw : (i == uint(N) ? wbase : abase);
        uint j = bj * uint(TB) + uint(r);
        yo[r] = j < uint(N) ? abase + j * kw : abase;
    }
#ifdef RHS
    // The tile row that holds row N (b) reads it from b's buffer.
    uint brow = uint(N) - bi * uint(TB);
#endif
    ACC acc[TB][TB];
    for (int r = 0; r < TB; r++) {
        for (int s = 0; s < TB; s++) acc[r][s] = ACC(0.0);
    }
    for (uint c = lane; c < kw; c += uint(KL)) {
        VT dv = d[wbase + c];
        VT x[TB];
        VT y[TB];
        for (int r = 0; r < TB; r++) {
#ifdef RHS
            x[r] = uint(r) == brow ? b[xo[r] + c] : a[xo[r] + c];
#else
            x[r] = a[xo[r] + c];
#endif
            y[r] = a[yo[r] + c];
        }
#ifdef F64
        // Observation by observation: x·d exact in f64, the sums rounded in f64.
        for (int u = 0; u < int(W); u++) {
            double du = double(component(dv, u));
            double xs[TB];
            double ys[TB];
            for (int r = 0; r < TB; r++) {
                xs[r] = double(component(x[r], u)) * du;
                ys[r] = double(component(y[r], u));
            }
            for (int r = 0; r < TB; r++) {
                for (int s = 0; s < TB; s++) acc[r][s] = fma(xs[r], ys[s], acc[r][s]);
            }
        }
#else
        for (int r = 0; r < TB; r++) x[r] *= dv;
        for (int r = 0; r < TB; r++) {
            for (int s = 0; s < TB; s++) acc[r][s] = fma_dot(x[r], y[s], acc[r][s]);
        }
#endif
    }

    uint gbase = problem * uint(NP + N);
#if KL > 1
    // The tile's KL parts, lane by lane, added in lane order by the lanes of the tile.
    uint me = gl_LocalInvocationID.x;
    for (int r = 0; r < TB; r++) {
        for (int s = 0; s < TB; s++) parts[me * uint(TT) + uint(r * TB + s)] = acc[r][s];
    }
    memoryBarrierShared();
    barrier();
    uint first = me - lane;
    for (uint e = lane; e < uint(TT); e += uint(KL)) {
        ACC sum = ACC(0.0);
        for (uint h = 0u; h < uint(KL); h++) sum += parts[(first + h) * uint(TT) + e];
        uint i = bi * uint(TB) + e / uint(TB);
        uint j = bj * uint(TB) + e % uint(TB);
        if (live && j <= i && i < uint(N)) gram[gbase + i * (i + 1u) / 2u + j] = sum;
#ifdef RHS
        if (live && i == uint(N) && j < uint(N)) gram[gbase + uint(NP) + j] = sum;
#endif
    }
#else
    if (live) write_tile(gbase, bi, bj, acc);
#endif
}
#endif
