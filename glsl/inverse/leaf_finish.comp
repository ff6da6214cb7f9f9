// The last launch of a tournament-pivoted leaf (tournament.comp chose the w <= 32 pivot rows
// `chosen` of columns c0 .. c0+w, in order, and left the winners' L11\U11 in lu11, row stride
// 32, and the leaf columns of the 2w rows the interchanges touch in `stash`): in one launch the
// chosen rows go to rows c0 .. c0+w as LAPACK's interchanges would put them (row q swapped with
// piv[q] at step q, recorded by the first row group), and the leaf's columns become
// L11\U11 over L21 = A21·U11⁻¹. Every group replays the interchanges in shared memory over
// the touched rows as permute.comp does (slot s < w: row c0+s; slot w+t: row chosen[t] when it
// lies below the leaf), in O(w) steps on slots. The first `col_groups` groups move the touched
// rows' entries outside the leaf's columns and the `right` (<= 32) columns after it, 64 columns
// each (all reads before all writes, no column shared between groups; only the window `lo`,
// `others` says); the rest take 128 rows
// of A21 each, reading a moved row's leaf entries from the stash (no group reads what another
// writes). The first row group also writes L11\U11, the unit lower L11 (unit_l, w x w) for a
// solve right of the leaf, the `right` columns' moves and U12 = L11⁻¹·A12 there (the panel's
// update then needs only A22 −= L21·U12), and a pivot whose magnitude is at or below `tol` (or
// NaN) with its column into the status word, once. With `pend` > 0 the previous leaf's product
// on these columns is applied to the rows read from A first (see tournament.comp). `step` != 0
// (src/inverse/panel.rs's ColumnStep): the row groups' pending product and L21 solve with each
// invocation's row in registers (compile-time indices), U11 read as broadcasts. Issue 26's
// latency: `prefetch` issues every load of a pass into shared memory before its first store
// (constant trip counts, unrolled) and reads the pending product's entries 16 at a time.
layout(local_size_x = 128) in;

layout(std430, binding = 0) buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer ChosenBuf { uint chosen[]; };
layout(std430, binding = 2) writeonly buffer PivBuf { uint piv[]; };
layout(std430, binding = 3) buffer StatusBuf { uint status[]; };
layout(std430, binding = 4) readonly buffer Lu11Buf { float lu11[]; };
layout(std430, binding = 5) readonly buffer StashBuf { float stash[]; };
layout(std430, binding = 6) writeonly buffer UnitLBuf { float unit_l[]; };

uniform uint n;
uniform uint c0;
uniform uint w;
uniform float tol;
uniform uint col_groups;
uniform uint right;
// The other columns whose touched rows move: `others` of them from column `lo` on, skipping
// the leaf and the `right` columns (0 and n − w − right: all; a look-ahead panel keeps its
// interchanges to its own columns and leaves the rest to interchange.comp).
uniform uint lo;
uniform uint others;
uniform uint pend;
uniform int step;
uniform int prefetch;

const uint NONE = 0xFFFFFFFFu;
const uint STRIDE = 33u;
const uint COLS = 64u;

shared uint picked[32];
// By slot: the row it stands for (NONE: unused), the slot whose original content it holds
// now, the slot where its original content is now; each winner's slot.
shared uint row_of[64];
shared uint content_slot[64];
shared uint where_slot[64];
shared uint picked_slot[32];
shared uint src_slot[128];
shared float u[32u * STRIDE];
// The previous leaf's U12 where its product on this leaf's columns is pending
// (tournament.comp): applied to the rows read from A here.
shared float u12[32u * STRIDE];
// Column groups: 64 slots x 64 columns; row groups: 128 rows x 32 leaf columns.
shared float buf[128u * STRIDE];

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

// The row slot s stands for.
uint row_at(uint s) {
    return s < w ? c0 + s : picked[s - w];
}

// Whether row first + t of a row group is read from A (not a moved row's stash) and has the
// pending product to apply.
bool u12_live(uint first) {
    uint t = gl_LocalInvocationID.x;
    return pend > 0u && first + t < n && src_slot[t] == NONE;
}

// Entry k of a register row: a select over compile-time indices keeps `row` in registers.
float pick(float row[32], uint k) {
    float x = 0.0;
    for (uint j = 0u; j < 32u; ++j) {
        if (j == k) x = row[j];
    }
    return x;
}

// The pending product (`pending`) and L21 = A21·U11⁻¹ on this invocation's row of `buf`, the
// row in registers (u's entries past w are zero, so the unrolled columns past w stay zero).
void solve_in_registers(uint first, bool pending) {
    uint t = gl_LocalInvocationID.x;
    float row[32];
    for (uint j = 0u; j < 32u; ++j) row[j] = buf[t * STRIDE + j];
    if (pending && prefetch != 0) {
        for (uint k0 = 0u; k0 < pend; k0 += 16u) {
            vec4 l0, l1, l2, l3;
            pending16(first + t, k0, l0, l1, l2, l3);
            for (uint j = 0u; j < 32u; ++j) row[j] -= times_u12(l0, l1, l2, l3, k0, j);
        }
    } else if (pending) {
        uint r = first + t;
        for (uint k = 0u; k < pend; ++k) {
            float l = a[r * n + c0 - pend + k];
            for (uint j = 0u; j < 32u; ++j) row[j] -= l * u12[k * STRIDE + j];
        }
    }
    for (uint k = 0u; k < w; ++k) {
        float l = pick(row, k) / u[k * STRIDE + k];
        for (uint j = 0u; j < 32u; ++j) {
            float ukj = u[k * STRIDE + j];
            row[j] = j == k ? l : (j > k ? row[j] - l * ukj : row[j]);
        }
    }
    for (uint j = 0u; j < 32u; ++j) buf[t * STRIDE + j] = row[j];
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x;
    if (t < w) picked[t] = chosen[t];
    barrier();
    if (t < w) {
        uint r = picked[t];
        picked_slot[t] = r < c0 + w ? r - c0 : w + t;
    }
    if (t < 2u * w) {
        uint row = row_at(t);
        // A chosen row inside the leaf already has its slot below w: this slot is unused.
        row_of[t] = (t >= w && row < c0 + w) ? NONE : row;
        content_slot[t] = t;
        where_slot[t] = t;
    }
    barrier();
    // The interchanges replayed on slots: step k swaps row c0+k (slot k) with where the k-th
    // winner's content is now.
    if (t == 0u) {
        for (uint k = 0u; k < w; ++k) {
            uint rs = picked_slot[k];
            uint at = where_slot[rs];
            if (g == col_groups) piv[c0 + k] = row_at(at);
            if (at != k) {
                uint qs = content_slot[k];
                content_slot[k] = rs;
                content_slot[at] = qs;
                where_slot[rs] = k;
                where_slot[qs] = at;
            }
        }
    }
    barrier();
    if (g < col_groups) {
        // The touched rows' entries outside the leaf: columns g·64 .. of the `others`.
        if (prefetch != 0) {
            // Every load issued before the first store (a constant trip count, unrolled).
            float x[32];
            for (uint i = 0u; i < 32u; ++i) {
                uint e = t + i * 128u;
                uint s = e / COLS;
                uint jp = g * COLS + e % COLS;
                uint j = lo + jp < c0 ? lo + jp : lo + jp + w + right;
                bool moves = s < 2u * w && jp < others && row_of[s] != NONE
                    && content_slot[s] != s;
                x[i] = moves ? a[row_at(content_slot[s]) * n + j] : 0.0;
            }
            for (uint i = 0u; i < 32u; ++i) buf[t + i * 128u] = x[i];
        } else {
            for (uint e = t; e < 64u * COLS; e += 128u) {
                uint s = e / COLS;
                uint jp = g * COLS + e % COLS;
                uint j = lo + jp < c0 ? lo + jp : lo + jp + w + right;
                if (s < 2u * w && jp < others && row_of[s] != NONE
                    && content_slot[s] != s) {
                    buf[e] = a[row_at(content_slot[s]) * n + j];
                }
            }
        }
        barrier();
        for (uint e = t; e < 64u * COLS; e += 128u) {
            uint s = e / COLS;
            uint jp = g * COLS + e % COLS;
            uint j = lo + jp < c0 ? lo + jp : lo + jp + w + right;
            if (s < 2u * w && jp < others && row_of[s] != NONE && content_slot[s] != s) {
                a[row_of[s] * n + j] = buf[e];
            }
        }
        return;
    }
    uint gr = g - col_groups;
    if (prefetch != 0) {
        // Every load issued before the first store (a constant trip count, unrolled).
        float x[8];
        float y[8];
        for (uint i = 0u; i < 8u; ++i) {
            uint e = t + i * 128u;
            uint k = e / 32u;
            uint j = e % 32u;
            x[i] = lu11[e];
            y[i] = (k < pend && j < w) ? a[(c0 - pend + k) * n + c0 + j] : 0.0;
        }
        for (uint i = 0u; i < 8u; ++i) {
            uint e = t + i * 128u;
            u[(e / 32u) * STRIDE + e % 32u] = x[i];
            u12[(e / 32u) * STRIDE + e % 32u] = y[i];
        }
    } else {
        for (uint e = t; e < 32u * 32u; e += 128u) {
            u[(e / 32u) * STRIDE + e % 32u] = lu11[e];
            uint k = e / 32u;
            uint j = e % 32u;
            u12[k * STRIDE + j] = (k < pend && j < w) ? a[(c0 - pend + k) * n + c0 + j] : 0.0;
        }
    }
    // Where row first + t's new leaf entries come from: the stash slot of the row moved there,
    // or NONE (not moved: its own entries in A).
    uint first = c0 + w + gr * 128u;
    uint r = first + t;
    uint from = NONE;
    for (uint k = 0u; k < w; ++k) {
        if (picked[k] == r) from = content_slot[w + k];
    }
    src_slot[t] = from;
    barrier();
    if (prefetch != 0) {
        // Every load issued before the first store (a constant trip count, unrolled).
        float x[32];
        for (uint i = 0u; i < 32u; ++i) {
            uint e = t + i * 128u;
            uint s = e / 32u;
            uint j = e % 32u;
            uint row = first + s;
            uint q = src_slot[s];
            bool in_leaf = row < n && j < w;
            x[i] = !in_leaf ? 0.0 : (q != NONE ? stash[q * 32u + j] : a[row * n + c0 + j]);
        }
        for (uint i = 0u; i < 32u; ++i) {
            uint e = t + i * 128u;
            buf[(e / 32u) * STRIDE + e % 32u] = x[i];
        }
    } else {
        for (uint e = t; e < 128u * 32u; e += 128u) {
            uint s = e / 32u;
            uint j = e % 32u;
            uint row = first + s;
            float v = 0.0;
            if (row < n && j < w) {
                uint q = src_slot[s];
                v = q != NONE ? stash[q * 32u + j] : a[row * n + c0 + j];
            }
            buf[s * STRIDE + j] = v;
        }
    }
    barrier();
    if (step != 0) {
        solve_in_registers(first, u12_live(first));
    } else {
        // The pending product on rows read from A (a moved row's stash has it already).
        if (u12_live(first) && prefetch != 0) {
            for (uint k0 = 0u; k0 < pend; k0 += 16u) {
                vec4 l0, l1, l2, l3;
                pending16(first + t, k0, l0, l1, l2, l3);
                for (uint j = 0u; j < w; ++j) {
                    buf[t * STRIDE + j] -= times_u12(l0, l1, l2, l3, k0, j);
                }
            }
        } else if (u12_live(first)) {
            uint row = first + t;
            for (uint k = 0u; k < pend; ++k) {
                float l = a[row * n + c0 - pend + k];
                for (uint j = 0u; j < w; ++j) buf[t * STRIDE + j] -= l * u12[k * STRIDE + j];
            }
        }
        // L21 = A21·U11⁻¹, a row per invocation (the elimination's own operations).
        for (uint k = 0u; k < w; ++k) {
            float l = buf[t * STRIDE + k] / u[k * STRIDE + k];
            buf[t * STRIDE + k] = l;
            for (uint j = k + 1u; j < w; ++j) {
                buf[t * STRIDE + j] -= l * u[k * STRIDE + j];
            }
        }
    }
    barrier();
    for (uint e = t; e < 128u * 32u; e += 128u) {
        uint s = e / 32u;
        uint j = e % 32u;
        uint row = first + s;
        if (row < n && j < w) a[row * n + c0 + j] = buf[s * STRIDE + j];
    }
    if (gr != 0u) return;
    for (uint e = t; e < 32u * 32u; e += 128u) {
        uint i = e / 32u;
        uint j = e % 32u;
        if (i < w && j < w) {
            float v = u[i * STRIDE + j];
            a[(c0 + i) * n + c0 + j] = v;
            unit_l[i * w + j] = i == j ? 1.0 : (j < i ? v : 0.0);
        }
    }
    if (right > 0u) {
        // The `right` block columns after the leaf: the touched rows' entries interchanged
        // here, rows c0 .. c0+w turned into U12 = L11⁻¹·A12 (a column per invocation).
        barrier();
        if (prefetch != 0) {
            // Every load issued before the first store (a constant trip count, unrolled).
            float x[16];
            for (uint i = 0u; i < 16u; ++i) {
                uint e = t + i * 128u;
                uint s = e / 32u;
                uint jj = e % 32u;
                bool moves = s < 2u * w && jj < right && row_of[s] != NONE;
                x[i] = moves ? a[row_at(content_slot[s]) * n + c0 + w + jj] : 0.0;
            }
            for (uint i = 0u; i < 16u; ++i) {
                uint e = t + i * 128u;
                if ((e / 32u) < 2u * w) buf[(e / 32u) * STRIDE + e % 32u] = x[i];
            }
        } else {
            for (uint e = t; e < 64u * 32u; e += 128u) {
                uint s = e / 32u;
                uint jj = e % 32u;
                if (s < 2u * w && jj < right && row_of[s] != NONE) {
                    buf[s * STRIDE + jj] = a[row_at(content_slot[s]) * n + c0 + w + jj];
                }
            }
        }
        barrier();
        if (t < right && step != 0) {
            // Column t in registers, right-looking: 32 independent updates per step.
            float x[32];
            for (uint i = 0u; i < 32u; ++i) x[i] = i < w ? buf[i * STRIDE + t] : 0.0;
            for (uint k = 0u; k < w; ++k) {
                float xk = pick(x, k);
                for (uint i = 0u; i < 32u; ++i) {
                    if (i > k) x[i] -= u[i * STRIDE + k] * xk;
                }
            }
            for (uint i = 0u; i < 32u; ++i) {
                if (i < w) buf[i * STRIDE + t] = x[i];
            }
        } else if (t < right) {
            for (uint i = 1u; i < w; ++i) {
                float v = buf[i * STRIDE + t];
                for (uint k = 0u; k < i; ++k) v -= u[i * STRIDE + k] * buf[k * STRIDE + t];
                buf[i * STRIDE + t] = v;
            }
        }
        barrier();
        for (uint e = t; e < 64u * 32u; e += 128u) {
            uint s = e / 32u;
            uint jj = e % 32u;
            if (s < 2u * w && jj < right && row_of[s] != NONE) {
                a[row_of[s] * n + c0 + w + jj] = buf[s * STRIDE + jj];
            }
        }
    }
    if (t == 0u) {
        for (uint k = 0u; k < w; ++k) {
            float piv = u[k * STRIDE + k];
            if (!(abs(piv) > tol)) {
                if (status[0] == NONE) {
                    status[0] = c0 + k;
                    status[1] = floatBitsToUint(piv);
                }
                break;
            }
        }
    }
}
