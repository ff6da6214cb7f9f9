// The observations of a problem with K = `observations` columns of A (N x K, row-major, the
// batch outer), the weights d (the diagonal of D²) and the right side b: staged KC columns at
// a time into shared memory, zero past the last column.
layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer DBuf { float d[]; };

uniform uint observations;

// Per problem slot (common.glsl's P): A's staged block, row-major; with VEC4_STAGE as KC/4
// vec4 per row, so the products read 16 bytes per shared load instead of 4 (the assembly is
// bound by shared-memory load instructions, one load per one or two products otherwise).
// Row i's vec4 c lies at c ^ ((i >> 1) & (KC/4 − 1)), so the 8 consecutive rows a warp's lanes
// read lie in distinct banks without padding (at n = 128 the group's shared memory is within
// a few hundred bytes of 48 KiB).
#ifdef VEC4_STAGE
shared vec4 As4_[P][N][KC / 4];
#define As4 As4_[sub]
#define SWZ(i) ((uint(i) >> 1u) & uint(KC / 4 - 1))
#define AS(i, kk) As4[i][(uint(kk) >> 2u) ^ SWZ(i)][uint(kk) & 3u]
// Row i's vec4 c (columns 4c .. 4c + 3).
#define AS4(i, c) As4[i][uint(c) ^ SWZ(i)]
#elif defined(RESIDENT)
// RESIDENT (the plan's Residual::Resident): all KR columns (the observations rounded up to
// KC, zero past the last) staged once and kept for the whole kernel, so the assembly needs
// one barrier rather than two per block and the residual reads A, d and b from here; the
// assembly's blocks are columns kbase .. kbase + KC of it. Rows padded to KR + 1 floats.
shared float As_[P][N][KR + 1];
uint kbase = 0u;
#define AS(i, kk) As_[sub][i][kbase + uint(kk)]
#else
shared float As_[P][N][KC + 1];
#define AS(i, kk) As_[sub][i][kk]
#endif
#ifdef RESIDENT
shared float Ds_[P][KR];
#define DS(kk) Ds_[sub][kbase + uint(kk)]
#else
shared float Ds_[P][KC];
#define DS(kk) Ds_[sub][kk]
#endif

// The staged weights kk = 4c .. 4c + 3.
vec4 ds4(int c) {
    return vec4(DS(4 * c), DS(4 * c + 1), DS(4 * c + 2), DS(4 * c + 3));
}

// A staged block's values per invocation, fetched into registers all at once (independent
// loads in flight together, not one load's latency after another) before they are stored.
#define SPT ((N * KC + T - 1) / T)
float fetched_a[SPT];
float fetched_d;

// Loads columns k0 .. k0 + KC of the problem's A and d into registers (zero past the last
// column); the loads may still be in flight when this returns.
void fetch(uint k0) {
    uint base = problem * uint(N) * observations;
    for (int s = 0; s < SPT; s++) {
        uint e = t + uint(s * T);
        uint i = e / uint(KC);
        uint k = k0 + e % uint(KC);
        fetched_a[s] = e < uint(N * KC) && k < observations ? a[base + i * observations + k] : 0.0;
    }
    uint k = k0 + t;
    fetched_d = t < uint(KC) && k < observations ? d[problem * observations + k] : 0.0;
}

// Stores the fetched block into As and Ds (then syncs).
void store_fetched() {
    for (int s = 0; s < SPT; s++) {
        uint e = t + uint(s * T);
        if (e < uint(N * KC)) AS(e / uint(KC), e % uint(KC)) = fetched_a[s];
    }
    if (t < uint(KC)) DS(t) = fetched_d;
    sync();
}

#ifdef RESIDENT
// A's values per invocation when all KR columns are staged at once.
#define RPT ((N * KR + T - 1) / T)

// Stages all KR columns of the problem's A and d (zero past the last observation), every
// load issued before the first store; the caller syncs.
void stage_resident() {
    uint base = problem * uint(N) * observations;
    float v[RPT];
    for (int s = 0; s < RPT; s++) {
        uint e = t + uint(s * T);
        uint k = e % uint(KR);
        v[s] = e < uint(N * KR) && k < observations ? a[base + (e / uint(KR)) * observations + k] : 0.0;
    }
    for (uint k = t; k < uint(KR); k += uint(T)) {
        Ds_[sub][k] = k < observations ? d[problem * observations + k] : 0.0;
    }
    for (int s = 0; s < RPT; s++) {
        uint e = t + uint(s * T);
        if (e < uint(N * KR)) As_[sub][e / uint(KR)][e % uint(KR)] = v[s];
    }
}
#endif

// Stages columns k0 .. k0 + KC of the problem's A and d (then syncs).
void stage(uint k0) {
    fetch(k0);
    store_fetched();
}

// Adds the staged block's part of row i of A·diag(d)·Aᵀ, entries k = h, h + G, … ≤ i, into S:
// row i of A·diag(d) held in registers, so each product reads one value from shared memory.
void accumulate_row(uint i, uint h) {
#ifdef VEC4_STAGE
    vec4 ad[KC / 4];
    for (int c = 0; c < KC / 4; c++) ad[c] = AS4(i, c) * ds4(c);
    for (uint k = h; k <= i; k += uint(G)) {
        vec4 sum = vec4(0.0);
        for (int c = 0; c < KC / 4; c++) sum = fma(ad[c], AS4(k, c), sum);
        S(lower_index(i, k)) += (sum.x + sum.y) + (sum.z + sum.w);
    }
#else
    float ad[KC];
    for (int kk = 0; kk < KC; kk++) ad[kk] = AS(i, kk) * DS(kk);
    for (uint k = h; k <= i; k += uint(G)) {
        float sum = 0.0;
        for (int kk = 0; kk < KC; kk++) sum = fma(ad[kk], AS(k, kk), sum);
        S(lower_index(i, k)) += sum;
    }
#endif
}

// The staged block's part of the invocation's pair of rows p < q (common.glsl: equal work for
// all). With PAIR_ROWS (the host's choice; past n = 64 by default, where the triangle in
// shared memory already limits the groups per multiprocessor) both rows of A·diag(d) are held
// in registers, so for k ≤ p one read of A's row k serves two entries, (p, k) and (q, k);
// else one row at a time (fewer registers, so more groups fit).
void accumulate() {
    uint p = pair_p();
    if (p >= uint(PAIRS)) return;
    uint q = uint(N) - 1u - p;
    uint h = pair_h();
#ifndef PAIR_ROWS
    accumulate_row(p, h);
    if (q != p) accumulate_row(q, h);
#else
    if (q == p) {
        accumulate_row(p, h);
        return;
    }
    uint base_p = lower_index(p, 0u);
    uint base_q = lower_index(q, 0u);
    uint k = h;
#ifdef VEC4_STAGE
    vec4 ap[KC / 4];
    vec4 aq[KC / 4];
    for (int c = 0; c < KC / 4; c++) {
        vec4 dc = ds4(c);
        ap[c] = AS4(p, c) * dc;
        aq[c] = AS4(q, c) * dc;
    }
    for (; k <= p; k += uint(G)) {
        vec4 sp = vec4(0.0);
        vec4 sq = vec4(0.0);
        for (int c = 0; c < KC / 4; c++) {
            vec4 akc = AS4(k, c);
            sp = fma(ap[c], akc, sp);
            sq = fma(aq[c], akc, sq);
        }
        S(base_p + k) += (sp.x + sp.y) + (sp.z + sp.w);
        S(base_q + k) += (sq.x + sq.y) + (sq.z + sq.w);
    }
    for (; k <= q; k += uint(G)) {
        vec4 sq = vec4(0.0);
        for (int c = 0; c < KC / 4; c++) sq = fma(aq[c], AS4(k, c), sq);
        S(base_q + k) += (sq.x + sq.y) + (sq.z + sq.w);
    }
#else
    float ap[KC];
    float aq[KC];
    for (int kk = 0; kk < KC; kk++) {
        ap[kk] = AS(p, kk) * DS(kk);
        aq[kk] = AS(q, kk) * DS(kk);
    }
    for (; k <= p; k += uint(G)) {
        float sp = 0.0;
        float sq = 0.0;
        for (int kk = 0; kk < KC; kk++) {
            float akk = AS(k, kk);
            sp = fma(ap[kk], akk, sp);
            sq = fma(aq[kk], akk, sq);
        }
        S(base_p + k) += sp;
        S(base_q + k) += sq;
    }
    for (; k <= q; k += uint(G)) {
        float sq = 0.0;
        for (int kk = 0; kk < KC; kk++) sq = fma(aq[kk], AS(k, kk), sq);
        S(base_q + k) += sq;
    }
#endif
#endif
}

#ifdef ASSEMBLY_TILES
// The register tiles' assembly (tiles.glsl, after this file).
void tiles_start();
void tiles_accumulate();
void tiles_store();
#endif

// Before the first staged block: S zeroed for the rows' assembly (synced by the first
// block's staging), the register tiles' sums zeroed for the tiles'.
void assembly_begin() {
#ifdef ASSEMBLY_TILES
    tiles_start();
#else
    for (uint e = t; e < uint(NP); e += uint(T)) S(e) = 0.0;
#endif
}

// The staged block's part of C: into S by pairs of rows, or into the register tiles.
void assembly_step() {
#ifdef ASSEMBLY_TILES
    tiles_accumulate();
#else
    accumulate();
#endif
}

// After the last staged block (and its barrier): the register tiles into S (then synced).
void assembly_end() {
#ifdef ASSEMBLY_TILES
    tiles_store();
#endif
}

// S ← the lower triangle of A·diag(d)·Aᵀ (Algorithm 3's sum, KC columns per step), by the
// plan's assembly (pairs of rows, or register tiles). The next block's loads are issued
// before this block's products, so they overlap.
void assemble() {
#ifdef RESIDENT
    // All columns staged once: one barrier before the products and one after.
    assembly_begin();
    stage_resident();
    sync();
    for (uint k0 = 0u; k0 < uint(KR); k0 += uint(KC)) {
        kbase = k0;
        assembly_step();
    }
    kbase = 0u;
    sync();
    assembly_end();
#else
    assembly_begin();
    fetch(0u);
    for (uint k0 = 0u; k0 < observations; k0 += uint(KC)) {
        store_fetched();
        fetch(k0 + uint(KC));
        assembly_step();
        sync();
    }
    assembly_end();
#endif
}
