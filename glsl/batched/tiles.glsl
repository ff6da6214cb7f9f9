// The assembly by register tiles (ASSEMBLY_TILES: the plan's AssemblyTiling::Tiles2 or
// Tiles4), after observations.glsl: C's lower triangle cut into TILE x TILE tiles (I, J),
// J ≤ I, each tile's TILE² sums of Algorithm 3 held in registers over every staged block of A,
// so one read of the staged A feeds TILE products rather than one. The host defines TILE,
// TSPLIT (invocations sharing one tile's staged columns) and TPL (tiles per invocation):
// where the tiles are fewer than the invocations, invocation t takes tile t mod NT and the
// staged columns kk ≡ t / NT (mod TSPLIT), and the TSPLIT parts add into S in turn (one
// barrier each); else it takes tiles t, t + T, … (TPL of them) with every column.
#ifdef ASSEMBLY_TILES
#define TILE_ROWS ((N + TILE - 1) / TILE)
#define NT (TILE_ROWS * (TILE_ROWS + 1) / 2)

// The invocation's tiles: their sums, first row and column, whether the slot holds one.
float tile_sum[TPL][TILE * TILE];
uint tile_row[TPL];
uint tile_col[TPL];
bool tile_held[TPL];
// The invocation's share of each staged block's columns (≥ TSPLIT: none).
uint tile_part;

// Sets the invocation's tiles, their sums 0.
void tiles_start() {
    tile_part = TSPLIT > 1 ? t / uint(NT) : 0u;
    for (int u = 0; u < TPL; u++) {
        uint x = TSPLIT > 1 ? t % uint(NT) : t + uint(u * T);
        tile_held[u] = x < uint(NT) && tile_part < uint(TSPLIT);
        x = min(x, uint(NT) - 1u);
        // x = I(I + 1)/2 + J: I from the square root, corrected for its rounding.
        uint i = uint((sqrt(8.0 * float(x) + 1.0) - 1.0) * 0.5);
        if (i * (i + 1u) / 2u > x) i--;
        if ((i + 1u) * (i + 2u) / 2u <= x) i++;
        tile_row[u] = i * uint(TILE);
        tile_col[u] = (x - i * (i + 1u) / 2u) * uint(TILE);
        for (int e = 0; e < TILE * TILE; e++) tile_sum[u][e] = 0.0;
    }
}

// Adds the staged block's part of the invocation's tiles: per column, TILE values of the
// tile's rows (times the weight) and TILE of its columns read, TILE² products. Rows past
// N − 1 read row N − 1 (their sums are never written).
void tiles_accumulate() {
    for (int u = 0; u < TPL; u++) {
        if (!tile_held[u]) continue;
        uint r[TILE];
        uint c[TILE];
        for (int i = 0; i < TILE; i++) {
            r[i] = min(tile_row[u] + uint(i), uint(N) - 1u);
            c[i] = min(tile_col[u] + uint(i), uint(N) - 1u);
        }
        for (uint kk = tile_part; kk < uint(KC); kk += uint(TSPLIT)) {
            float dk = DS(kk);
            float x[TILE];
            float y[TILE];
            for (int i = 0; i < TILE; i++) {
                x[i] = AS(r[i], kk) * dk;
                y[i] = AS(c[i], kk);
            }
            for (int i = 0; i < TILE; i++) {
                for (int j = 0; j < TILE; j++) {
                    tile_sum[u][i * TILE + j] = fma(x[i], y[j], tile_sum[u][i * TILE + j]);
                }
            }
        }
    }
}

// S ← the tiles' sums (entries on or below the diagonal, rows below N): the first part
// writes, the others add in turn, a barrier after each; S needs no zeroing before.
void tiles_store() {
    for (int s = 0; s < TSPLIT; s++) {
        if (tile_part == uint(s)) {
            for (int u = 0; u < TPL; u++) {
                if (!tile_held[u]) continue;
                for (int i = 0; i < TILE; i++) {
                    uint row = tile_row[u] + uint(i);
                    for (int j = 0; j < TILE; j++) {
                        uint col = tile_col[u] + uint(j);
                        if (row < uint(N) && col <= row) {
                            uint e = lower_index(row, col);
                            float sum = tile_sum[u][i * TILE + j];
                            S(e) = s == 0 ? sum : S(e) + sum;
                        }
                    }
                }
            }
        }
        sync();
    }
}
#endif
