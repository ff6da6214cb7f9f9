//! The output tiles a product kernel launches, as plain data: all tiles of a rectangle, or only
//! those on or below the diagonal (the triangular launch of Algorithm 3 at tile granularity;
//! the strictly upper tiles are never launched).

/// The (tile row, tile column) of every bm x bn tile of a rows x cols output that holds an
/// entry (i, j) with i ≥ j when `lower`, else of every tile; row by row.
pub fn output_tiles(rows: usize, cols: usize, bm: usize, bn: usize, lower: bool) -> Vec<[u32; 2]> {
    output_tiles_below(rows, cols, bm, bn, lower.then_some(0))
}

/// [`output_tiles`] for the mask j ≤ i + shift (`None`: every tile): the lower triangle of a
/// block of a larger matrix whose diagonal is `shift` columns right of the block's (the pieces
/// of a product split over several storage buffers).
pub fn output_tiles_below(
    rows: usize,
    cols: usize,
    bm: usize,
    bn: usize,
    shift: Option<isize>,
) -> Vec<[u32; 2]> {
    let (tr, tc) = (rows.div_ceil(bm), cols.div_ceil(bn));
    let mut tiles = Vec::new();
    for ti in 0..tr {
        // Columns up to the tile's last row (+ shift) are written.
        let last = match shift {
            None => tc,
            Some(s) => {
                let j_last = (((ti + 1) * bm).min(rows) - 1) as isize + s;
                if j_last < 0 {
                    0
                } else {
                    (j_last as usize / bn + 1).min(tc)
                }
            }
        };
        tiles.extend((0..last).map(|tj| [ti as u32, tj as u32]));
    }
    tiles
}

/// `tiles` (as [`output_tiles_below`] lists them) reordered in bands of `group` tile rows,
/// each band column by column, its rows in order within a column: the work groups in flight
/// then read a few of A's row blocks and a window of B's instead of one A block and a whole
/// row of B blocks (a launch order only; `group` 1 leaves the rows as they are).
pub fn grouped(mut tiles: Vec<[u32; 2]>, group: usize) -> Vec<[u32; 2]> {
    if group > 1 {
        let g = group as u32;
        tiles.sort_by_key(|&[ti, tj]| (ti / g, tj, ti));
    }
    tiles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_tiles_are_the_same_tiles_band_by_band() {
        let tiles = output_tiles_below(100, 100, 8, 8, Some(0));
        for g in [1, 2, 3, 8, 64] {
            let mut got = grouped(tiles.clone(), g);
            if g > 1 {
                assert_eq!(got[..2], [[0, 0], [1, 0]], "group {g}");
            }
            for w in got.windows(2) {
                assert!(w[0][0] / g as u32 <= w[1][0] / g as u32, "group {g}: {w:?}");
            }
            got.sort();
            let mut want = tiles.clone();
            want.sort();
            assert_eq!(got, want, "group {g}");
        }
        assert_eq!(grouped(tiles.clone(), 1), tiles);
    }

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

    /// With a shift, exactly the tiles holding an entry with j ≤ i + shift are launched.
    #[test]
    fn shifted_masks_launch_the_tiles_with_written_entries() {
        for shift in [-9isize, -3, 0, 2, 5, 12] {
            let (rows, cols, bm, bn) = (10, 9, 4, 2);
            let tiles = output_tiles_below(rows, cols, bm, bn, Some(shift));
            for ti in 0..rows.div_ceil(bm) {
                for tj in 0..cols.div_ceil(bn) {
                    let holds = (ti * bm..((ti + 1) * bm).min(rows)).any(|i| {
                        (tj * bn..((tj + 1) * bn).min(cols))
                            .any(|j| j as isize <= i as isize + shift)
                    });
                    let launched = tiles.contains(&[ti as u32, tj as u32]);
                    assert_eq!(holds, launched, "shift {shift} tile {ti},{tj}");
                }
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
