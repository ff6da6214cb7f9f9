// Tournament pivoting of a leaf panel (CALU: Grigori, Demmel & Xiang 2011, "CALU: a
// communication optimal LU factorization algorithm"): the leaf's columns c0 .. c0+w (w <= 32)
// over rows c0 .. n of an n x n row-major matrix, nothing written to the matrix. Each work group
// takes at most ROWS rows (256, or 128 where shared memory
// is 32 KiB; defined by the host) into shared memory and runs LU with partial pivoting on their w
// columns (the largest |value|, the smaller original row on ties, NaN as the largest), writing
// the original rows it chose, in its pivot order, as its candidate set (32 slots, NONE past the
// rows it had): mode 0 takes `chunk` consecutive rows from c0 on, mode 1 the rows of `fan`
// candidate sets of the previous round (`sets` of them in cand_in). The round with one group
// left chooses the leaf's pivots; with one group over all rows that is partial pivoting itself.
// That round (`last`) also writes the winners' packed LU rows, L11\U11 (w x w, row stride 32),
// into lu11 (the eliminated row chosen at step k holds row k of U11 with step k's multipliers
// to its left), and the leaf columns of the rows the interchanges will touch into `stash` (32
// a row; slot s < w: row c0+s, slot w+k: the k-th winner), for leaf_finish.comp. A zero pivot
// inside a round multiplies by 0 (leaf_finish.comp judges the last round's). With `pend` > 0 the
// previous leaf's product A22 −= L21·U12 on these columns was left out (leaf_finish.comp wrote
// U12): every row read here has it applied first.
// Where the driver has GL_KHR_shader_subgroup (the H200's does), each column's pivot is found
// by subgroup reductions and one barrier; elsewhere by shared-memory partial maxima and two.
// `step` (src/inverse/panel.rs's ColumnStep) picks the column step: 0 rows in shared memory;
// 1 each invocation's row in registers (32 entries, indices known at compile time), only the
// pivot row read from shared memory (published by its subgroup's winner before the barrier,
// or by its owner after a third barrier without subgroups); 2 as 1 with the subgroups' bests
// combined by subgroup reductions instead of a serial loop; 3 as 2 with each subgroup's best
// row published as vec4s (8 broadcast reads of the pivot row a column, where at most 8
// subgroups). With `fuse` set on a round of
// 2 .. ROWS / 32 groups, the last group to finish (a counter in `tally`, reset by it) merges
// all the round's sets itself as a one-group last round would, in the same launch: its
// winners go to set 0 of cand_out.
// Issue 26's latency (one group's launch is bound by dependent memory round trips): with
// `prefetch` set every load of a pass into shared memory is issued before the first store
// (constant trip counts, unrolled: one round trip instead of 32 in turn), the pending
// product's entries are read 16 at a time (two round trips a row instead of 32), and the
// last round's stash is formed from one coalesced pass of its 64 rows x (pend + w) columns
// into shared memory (v, free by then) instead of entry()'s serial reads.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#if defined(GL_KHR_shader_subgroup_arithmetic) && !defined(NO_SUBGROUPS)
#define SUBGROUPS 1
#endif
layout(local_size_x = ROWS) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer CandIn { uint cand_in[]; };
layout(std430, binding = 2) coherent buffer CandOut { uint cand_out[]; };
layout(std430, binding = 3) writeonly buffer Lu11Buf { float lu11[]; };
layout(std430, binding = 4) writeonly buffer StashBuf { float stash[]; };
layout(std430, binding = 5) coherent buffer TallyBuf { uint tally[]; };

uniform uint n;
uniform uint c0;
uniform uint w;
uniform int mode;
uniform uint chunk;
uniform uint sets;
uniform uint fan;
uniform int last;
uniform uint pend;
uniform int step;
uniform int fuse;
uniform int prefetch;

const uint NONE = 0xFFFFFFFFu;
// Partial maxima: ROWS / 16 invocations scan 16 candidates each.
const uint PARTS = ROWS / 16u;
const uint STRIDE = 33u;

// The rows' leaf columns (padded rows: no bank conflicts along a column), their original rows.
shared float v[ROWS * STRIDE];
shared uint row_of[ROWS];
shared float best_v[ROWS];
shared uint best_s[ROWS];
shared float part_v[PARTS];
shared uint part_s[PARTS];
shared uint won[32];
// Whether this group merges the first round's sets (`fuse`).
shared bool merging;
#ifdef SUBGROUPS
// Each subgroup's best candidate of a column (magnitude, slot), for columns alternately.
shared float sub_v[2][ROWS];
shared uint sub_s[2][ROWS];
// `step` 3: each subgroup's best row as vec4s (at most 8 subgroups), for columns alternately.
shared vec4 sub_row[2][8][8];
#endif
// The previous leaf's U12 (pend x w: rows c0−pend .. c0, this leaf's columns) where its
// product A22 −= L21·U12 is still pending: applied to every row as it is loaded.
shared float u12[32u * STRIDE];

// Row r's entry in this leaf's column c0 + j, with the pending product applied.
float entry(uint r, uint j) {
    float x = a[r * n + c0 + j];
    for (uint k = 0u; k < pend; ++k) x -= a[r * n + c0 - pend + k] * u12[k * STRIDE + j];
    return x;
}

// Entries k0 .. k0+16 of row r's previous-leaf columns (zero at pend and past), every load
// issued before any is used (`prefetch`); k0 is 0 or 16.
void pending16(uint r, uint k0, out vec4 l0, out vec4 l1, out vec4 l2, out vec4 l3) {
    uint base = r * n + c0 - pend + k0;
    float x[16];
    for (uint i = 0u; i < 16u; ++i) x[i] = k0 + i < pend ? a[base + i] : 0.0;
    l0 = vec4(x[0], x[1], x[2], x[3]);
    l1 = vec4(x[4], x[5], x[6], x[7]);
    l2 = vec4(x[8], x[9], x[10], x[11]);
    l3 = vec4(x[12], x[13], x[14], x[15]);
}

// The product of pending16's entries with column j of u12's rows k0 .. k0+16.
float times_u12(vec4 l0, vec4 l1, vec4 l2, vec4 l3, uint k0, uint j) {
    uint e = k0 * STRIDE + j;
    const uint S = STRIDE;
    return dot(l0, vec4(u12[e], u12[e + S], u12[e + 2u * S], u12[e + 3u * S]))
        + dot(l1, vec4(u12[e + 4u * S], u12[e + 5u * S], u12[e + 6u * S], u12[e + 7u * S]))
        + dot(l2, vec4(u12[e + 8u * S], u12[e + 9u * S], u12[e + 10u * S], u12[e + 11u * S]))
        + dot(l3, vec4(u12[e + 12u * S], u12[e + 13u * S], u12[e + 14u * S], u12[e + 15u * S]));
}

// Row r's pending product applied to its leaf entries in v (slot t), 16 loads at a time.
void pending_prefetched(uint t, uint r) {
    for (uint k0 = 0u; k0 < pend; k0 += 16u) {
        vec4 l0, l1, l2, l3;
        pending16(r, k0, l0, l1, l2, l3);
        for (uint j = 0u; j < w; ++j) v[t * STRIDE + j] -= times_u12(l0, l1, l2, l3, k0, j);
    }
}

// Row t's elimination by pivot row p at column k (multiplier l), its columns k+1 .. w.
void eliminate_row(uint t, uint p, uint k, float l) {
    for (uint j = k + 1u; j < w; ++j) v[t * STRIDE + j] -= l * v[p * STRIDE + j];
}

float magnitude(float x) {
    return isnan(x) ? 3.0e38 : abs(x);
}

// Whether slot s (value x) beats slot bs (value bx): larger, or equal from a smaller row.
bool beats(float x, uint s, float bx, uint bs) {
    if (s == NONE) return false;
    if (bs == NONE) return true;
    return x > bx || (x == bx && row_of[s] < row_of[bs]);
}

// Entry k of a register row: a select over compile-time indices keeps `row` in registers.
float pick(float row[32], uint k) {
    float x = 0.0;
    for (uint j = 0u; j < 32u; ++j) {
        if (j == k) x = row[j];
    }
    return x;
}

// The leaf's column steps with each invocation's row in registers (`step` 1 and 2); the
// winners' rows are left in v (each published there when it won).
void steps_in_registers(uint g, bool live) {
    uint t = gl_LocalInvocationID.x;
    float row[32];
    for (uint j = 0u; j < 32u; ++j) row[j] = v[t * STRIDE + j];
    if (pend > 0u && live && prefetch != 0) {
        uint r = row_of[t];
        for (uint k0 = 0u; k0 < pend; k0 += 16u) {
            vec4 l0, l1, l2, l3;
            pending16(r, k0, l0, l1, l2, l3);
            for (uint j = 0u; j < 32u; ++j) row[j] -= times_u12(l0, l1, l2, l3, k0, j);
        }
    } else if (pend > 0u && live) {
        uint r = row_of[t];
        for (uint k = 0u; k < pend; ++k) {
            float l = a[r * n + c0 - pend + k];
            for (uint j = 0u; j < 32u; ++j) row[j] -= l * u12[k * STRIDE + j];
        }
    }
    float cand = live ? magnitude(row[0]) : -1.0;
    bool vec_rows = false;
#ifdef SUBGROUPS
    vec_rows = step == 3 && gl_NumSubgroups <= 8u;
#endif
    for (uint k = 0u; k < w; ++k) {
        uint p = NONE;
        // The winner's subgroup (vec_rows).
        uint pq = 0u;
#ifdef SUBGROUPS
        uint mine = live ? row_of[t] : NONE;
        float m = subgroupMax(cand);
        uint r = subgroupMin(cand == m ? mine : NONE);
        uint sl = subgroupMin((cand == m && mine == r && r != NONE) ? t : NONE);
        // The subgroup's best publishes its row (no one reads a live row's slot meanwhile).
        if (t == sl && vec_rows) {
            for (uint c = 0u; c < 8u; ++c) {
                sub_row[k & 1u][gl_SubgroupID][c] =
                    vec4(row[4u * c], row[4u * c + 1u], row[4u * c + 2u], row[4u * c + 3u]);
            }
        } else if (t == sl) {
            for (uint j = 0u; j < 32u; ++j) v[t * STRIDE + j] = row[j];
        }
        if (subgroupElect()) {
            sub_v[k & 1u][gl_SubgroupID] = sl == NONE ? -1.0 : m;
            sub_s[k & 1u][gl_SubgroupID] = sl;
        }
        barrier();
        if (step >= 2 && gl_NumSubgroups <= gl_SubgroupSize) {
            uint q = gl_SubgroupInvocationID;
            uint qs = q < gl_NumSubgroups ? sub_s[k & 1u][q] : NONE;
            float qv = qs != NONE ? sub_v[k & 1u][q] : -1.0;
            float best = subgroupMax(qv);
            uint qr = (qs != NONE && qv == best) ? row_of[qs] : NONE;
            uint br = subgroupMin(qr);
            p = subgroupMin((qr == br && br != NONE) ? qs : NONE);
            pq = subgroupMin((p != NONE && qs == p) ? q : NONE);
        } else {
            float pv = -1.0;
            for (uint q = 0u; q < gl_NumSubgroups; ++q) {
                if (beats(sub_v[k & 1u][q], sub_s[k & 1u][q], pv, p)) {
                    pv = sub_v[k & 1u][q];
                    p = sub_s[k & 1u][q];
                    pq = q;
                }
            }
        }
        // The winner's row into v for the last round's L11\U11 (read after later barriers).
        if (t == p && vec_rows) {
            for (uint j = 0u; j < 32u; ++j) v[t * STRIDE + j] = row[j];
        }
#else
        best_v[t] = cand;
        best_s[t] = cand >= 0.0 ? t : NONE;
        barrier();
        if (t < PARTS) {
            float bv = -1.0;
            uint bs = NONE;
            for (uint q = t * 16u; q < t * 16u + 16u; ++q) {
                if (beats(best_v[q], best_s[q], bv, bs)) {
                    bv = best_v[q];
                    bs = best_s[q];
                }
            }
            part_v[t] = bv;
            part_s[t] = bs;
        }
        barrier();
        float pv = -1.0;
        for (uint q = 0u; q < PARTS; ++q) {
            if (beats(part_v[q], part_s[q], pv, p)) {
                pv = part_v[q];
                p = part_s[q];
            }
        }
        if (t == p) {
            for (uint j = 0u; j < 32u; ++j) v[t * STRIDE + j] = row[j];
        }
        barrier();
#endif
        if (t == 0u) {
            won[k] = p;
            cand_out[g * 32u + k] = p == NONE ? NONE : row_of[p];
        }
        if (p != NONE) {
            if (t == p) live = false;
            if (live) {
                float pr[32];
                if (vec_rows) {
#ifdef SUBGROUPS
                    for (uint c = 0u; c < 8u; ++c) {
                        vec4 x = sub_row[k & 1u][pq][c];
                        pr[4u * c] = x.x;
                        pr[4u * c + 1u] = x.y;
                        pr[4u * c + 2u] = x.z;
                        pr[4u * c + 3u] = x.w;
                    }
#endif
                } else {
                    for (uint j = 0u; j < 32u; ++j) pr[j] = v[p * STRIDE + j];
                }
                float piv = pick(pr, k);
                float l = piv != 0.0 ? pick(row, k) / piv : 0.0;
                for (uint j = 0u; j < 32u; ++j) {
                    row[j] = j == k ? l : (j > k ? row[j] - l * pr[j] : row[j]);
                }
            }
        }
        cand = (live && k + 1u < w) ? magnitude(pick(row, k + 1u)) : -1.0;
    }
}

// The leaf's column steps with the rows in shared memory (`step` 0).
void steps_in_shared(uint g, bool live) {
    uint t = gl_LocalInvocationID.x;
    // The pending product, a row per invocation (its entries of the previous leaf's columns).
    if (pend > 0u && row_of[t] != NONE && prefetch != 0) {
        pending_prefetched(t, row_of[t]);
    } else if (pend > 0u && row_of[t] != NONE) {
        uint r = row_of[t];
        for (uint k = 0u; k < pend; ++k) {
            float l = a[r * n + c0 - pend + k];
            for (uint j = 0u; j < w; ++j) v[t * STRIDE + j] -= l * u12[k * STRIDE + j];
        }
    }
    barrier();
#ifdef SUBGROUPS
    // One barrier a column: each subgroup reduces its invocations' candidates (the largest
    // magnitude, then the smallest original row among those, then its slot), every
    // invocation takes the pivot from the subgroups' bests itself, eliminates its row and
    // forms its next candidate in a register. The bests alternate between two arrays, so a
    // column's writes never meet the previous column's reads.
    float cand = live ? magnitude(v[t * STRIDE]) : -1.0;
    for (uint k = 0u; k < w; ++k) {
        uint mine = live ? row_of[t] : NONE;
        float m = subgroupMax(cand);
        uint r = subgroupMin(cand == m ? mine : NONE);
        uint sl = subgroupMin((cand == m && mine == r && r != NONE) ? t : NONE);
        if (subgroupElect()) {
            sub_v[k & 1u][gl_SubgroupID] = sl == NONE ? -1.0 : m;
            sub_s[k & 1u][gl_SubgroupID] = sl;
        }
        barrier();
        float pv = -1.0;
        uint p = NONE;
        for (uint q = 0u; q < gl_NumSubgroups; ++q) {
            if (beats(sub_v[k & 1u][q], sub_s[k & 1u][q], pv, p)) {
                pv = sub_v[k & 1u][q];
                p = sub_s[k & 1u][q];
            }
        }
        if (t == 0u) {
            won[k] = p;
            cand_out[g * 32u + k] = p == NONE ? NONE : row_of[p];
        }
        if (p != NONE) {
            if (t == p) live = false;
            if (live) {
                float piv = v[p * STRIDE + k];
                float l = piv != 0.0 ? v[t * STRIDE + k] / piv : 0.0;
                v[t * STRIDE + k] = l;
                eliminate_row(t, p, k, l);
            }
        }
        cand = (live && k + 1u < w) ? magnitude(v[t * STRIDE + k + 1u]) : -1.0;
    }
#else
    // Two barriers a column: the candidates (each invocation its row's) reduced by PARTS
    // invocations, then every invocation takes the pivot from their partial maxima itself,
    // eliminates its row and posts its next candidate.
    best_v[t] = live ? magnitude(v[t * STRIDE]) : -1.0;
    best_s[t] = live ? t : NONE;
    barrier();
    for (uint k = 0u; k < w; ++k) {
        if (t < PARTS) {
            float bv = -1.0;
            uint bs = NONE;
            for (uint q = t * 16u; q < t * 16u + 16u; ++q) {
                if (beats(best_v[q], best_s[q], bv, bs)) {
                    bv = best_v[q];
                    bs = best_s[q];
                }
            }
            part_v[t] = bv;
            part_s[t] = bs;
        }
        barrier();
        float pv = -1.0;
        uint p = NONE;
        for (uint q = 0u; q < PARTS; ++q) {
            if (beats(part_v[q], part_s[q], pv, p)) {
                pv = part_v[q];
                p = part_s[q];
            }
        }
        if (t == 0u) {
            won[k] = p;
            cand_out[g * 32u + k] = p == NONE ? NONE : row_of[p];
        }
        if (p != NONE) {
            if (t == p) live = false;
            if (live) {
                float piv = v[p * STRIDE + k];
                float l = piv != 0.0 ? v[t * STRIDE + k] / piv : 0.0;
                v[t * STRIDE + k] = l;
                eliminate_row(t, p, k, l);
            }
        }
        bool next = live && k + 1u < w;
        best_v[t] = next ? magnitude(v[t * STRIDE + k + 1u]) : -1.0;
        best_s[t] = next ? t : NONE;
        barrier();
    }
#endif
}

// Loads the rows of row_of, runs the column steps and writes the group's set g of cand_out
// (the winners' rows left in v, their slots in won).
void eliminate(uint g) {
    uint t = gl_LocalInvocationID.x;
    if (prefetch != 0) {
        // 32 entries an invocation, every load issued before the first store (a constant
        // trip count, unrolled): one round trip to memory instead of 32 in turn.
        float x[32];
        for (uint i = 0u; i < 32u; ++i) {
            uint e = t + i * ROWS;
            uint r = row_of[e / 32u];
            x[i] = (r != NONE && e % 32u < w) ? a[r * n + c0 + e % 32u] : 0.0;
        }
        for (uint i = 0u; i < 32u; ++i) {
            uint e = t + i * ROWS;
            v[(e / 32u) * STRIDE + e % 32u] = x[i];
        }
    } else {
        for (uint e = t; e < ROWS * 32u; e += ROWS) {
            uint s = e / 32u;
            uint j = e % 32u;
            uint r = row_of[s];
            v[s * STRIDE + j] = (r != NONE && j < w) ? a[r * n + c0 + j] : 0.0;
        }
    }
    barrier();
    bool live = row_of[t] != NONE;
    if (step != 0) {
        steps_in_registers(g, live);
    } else {
        steps_in_shared(g, live);
    }
    if (t >= w && t < 32u) cand_out[g * 32u + t] = NONE;
    barrier();
}

// The row of stash slot s (s < w: row c0+s; w <= s < 2w: the (s−w)-th winner), or NONE.
uint stash_row(uint s) {
    if (s < w) return c0 + s;
    if (s < 2u * w && won[s - w] != NONE) return row_of[won[s - w]];
    return NONE;
}

// Row stride of the stash rows prefetched into v: pend + w <= 64 entries, and one more.
const uint PRE = 65u;

// The stash (`prefetch`): the 64 slots' rows, columns c0 − pend .. c0 + w, read into v in one
// coalesced pass (every load issued before a barrier; v's winners are in lu11 by now), then
// each entry's pending product from shared memory.
void stash_prefetched() {
    uint t = gl_LocalInvocationID.x;
    uint span = pend + w;
    barrier();
    // Every load issued before the first store (a constant trip count, unrolled).
    float x[4096u / ROWS];
    for (uint i = 0u; i < 4096u / ROWS; ++i) {
        uint e = t + i * ROWS;
        uint row = stash_row(e / 64u);
        x[i] = (row != NONE && e % 64u < span) ? a[row * n + c0 - pend + e % 64u] : 0.0;
    }
    for (uint i = 0u; i < 4096u / ROWS; ++i) {
        uint e = t + i * ROWS;
        v[(e / 64u) * PRE + e % 64u] = x[i];
    }
    barrier();
    for (uint e = t; e < 64u * 32u; e += ROWS) {
        uint s = e / 32u;
        uint j = e % 32u;
        if (stash_row(s) == NONE || j >= w) continue;
        float x = v[s * PRE + pend + j];
        for (uint k = 0u; k < pend; ++k) x -= v[s * PRE + k] * u12[k * STRIDE + j];
        stash[e] = x;
    }
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x;
    if (mode == 0) {
        uint r = c0 + g * chunk + t;
        row_of[t] = (t < chunk && r < n) ? r : NONE;
    } else {
        uint s = g * fan + t / 32u;
        uint e = t % 32u;
        row_of[t] = (t < fan * 32u && s < sets && e < w) ? cand_in[s * 32u + e] : NONE;
    }
    if (prefetch != 0) {
        // Every load issued before the first store, as in eliminate().
        float x[1024u / ROWS];
        for (uint i = 0u; i < 1024u / ROWS; ++i) {
            uint e = t + i * ROWS;
            uint k = e / 32u;
            uint j = e % 32u;
            x[i] = (k < pend && j < w) ? a[(c0 - pend + k) * n + c0 + j] : 0.0;
        }
        for (uint i = 0u; i < 1024u / ROWS; ++i) {
            uint e = t + i * ROWS;
            u12[(e / 32u) * STRIDE + e % 32u] = x[i];
        }
    } else {
        for (uint e = t; e < 32u * 32u; e += ROWS) {
            uint k = e / 32u;
            uint j = e % 32u;
            u12[k * STRIDE + j] = (k < pend && j < w) ? a[(c0 - pend + k) * n + c0 + j] : 0.0;
        }
    }
    barrier();
    eliminate(g);
    bool finish = last != 0;
    uint groups = gl_NumWorkGroups.x;
    if (fuse != 0 && groups > 1u) {
        // Every group's set written and made visible before it is counted.
        memoryBarrierBuffer();
        barrier();
        if (t == 0u) merging = atomicAdd(tally[0], 1u) == groups - 1u;
        barrier();
        if (!merging) return;
        if (t == 0u) tally[0] = 0u;
        memoryBarrierBuffer();
        row_of[t] = (t < groups * 32u && t % 32u < w) ? cand_out[t] : NONE;
        barrier();
        eliminate(0u);
        finish = true;
    }
    if (finish) {
        for (uint e = t; e < 32u * 32u; e += ROWS) {
            uint k = e / 32u;
            uint j = e % 32u;
            uint s = k < w ? won[k] : NONE;
            lu11[e] = (s != NONE && j < w) ? v[s * STRIDE + j] : 0.0;
        }
        if (prefetch != 0) {
            stash_prefetched();
            return;
        }
        for (uint e = t; e < 64u * 32u; e += ROWS) {
            uint s = e / 32u;
            uint j = e % 32u;
            uint row = stash_row(s);
            if (row != NONE && j < w) stash[e] = entry(row, j);
        }
    }
}
