//! The output tiles a product kernel launches, as plain data: all tiles of a rectangle, or only
//! those on or below the diagonal (the triangular launch of Algorithm 3 at tile granularity;
//! the strictly upper tiles are never launched).

/// The (tile row, tile column) of every bm x bn tile of a rows x cols output that holds an
/// entry (i, j) with i ≥ j when `lower`, else of every tile; row by row.
pub fn output_tiles(rows: usize, cols: usize, bm: usize, bn: usize, lower: bool) -> Vec<[u32; 2]> {
    let (tr, tc) = (rows.div_ceil(bm), cols.div_ceil(bn));
    let mut tiles = Vec::new();
    for ti in 0..tr {
        // The tile's last row is ti·bm + bm − 1: columns up to that one hold lower entries.
        let last = if lower {
            ((ti * bm + bm - 1) / bn + 1).min(tc)
        } else {
            tc
        };
        tiles.extend((0..last).map(|tj| [ti as u32, tj as u32]));
    }
    tiles
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lower entry lies in exactly one launched tile, and every launched tile holds one.
    #[test]
    fn lower_tiles_cover_the_lower_triangle_and_nothing_else() {
        for (rows, cols, bm, bn) in [(1, 1, 4, 4), (9, 9, 4, 4), (10, 7, 4, 8), (7, 10, 8, 4)] {
            let tiles = output_tiles(rows, cols, bm, bn, true);
            for i in 0..rows {
                for j in 0..=i.min(cols - 1) {
                    let n = tiles
                        .iter()
                        .filter(|&&[ti, tj]| ti as usize == i / bm && tj as usize == j / bn)
                        .count();
                    assert_eq!(n, 1, "entry ({i},{j}) of {rows}x{cols}");
                }
            }
            for &[ti, tj] in &tiles {
                let (i_last, j_first) =
                    ((ti as usize * bm + bm - 1).min(rows - 1), tj as usize * bn);
                assert!(
                    j_first <= i_last && j_first < cols,
                    "tile {ti},{tj} has no lower entry"
                );
            }
        }
    }

    #[test]
    fn a_square_grid_launches_the_triangle_of_tiles() {
        assert_eq!(output_tiles(256, 256, 64, 64, true).len(), 10);
        assert_eq!(output_tiles(256, 256, 64, 64, false).len(), 16);
        assert_eq!(
            output_tiles(3, 5, 2, 2, false),
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
        );
    }
}
