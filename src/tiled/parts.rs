//! One matrix's storage split over several storage buffers, for orders whose storage one buffer
//! cannot hold (GL_MAX_SHADER_STORAGE_BLOCK_SIZE, 32-bit GL sizes): the buffers hold consecutive
//! ranges of one index space (whole rows of full storage, whole columns of the RFP array), and
//! each kernel launch is cut into pieces whose views each lie in one buffer. Cutting a product
//! along rows, columns or depth leaves every entry's sequence of operations as it was, so the
//! results are those of one buffer.

use super::kernels::{Operand, TiledKernels};
use super::product::{Mask, Product};
use super::view::View;
use crate::error::{Error, Result};
use crate::gl::Buffer;

/// The buffers holding consecutive ranges of one index space: buffer p holds indices
/// `starts[p]..starts[p + 1]` (the last one to its end), at its own index 0.
#[derive(Clone, Copy)]
pub struct Parts<'a> {
    buffers: &'a [Buffer<f32>],
    starts: &'a [usize],
}

impl<'a> Parts<'a> {
    /// One buffer holding the whole index space.
    pub fn one(buffer: &'a Buffer<f32>) -> Self {
        Self {
            buffers: std::slice::from_ref(buffer),
            starts: &[0],
        }
    }

    /// `buffers[p]` holding the indices from `starts[p]` on (`starts[0]` = 0, increasing).
    pub fn new(buffers: &'a [Buffer<f32>], starts: &'a [usize]) -> Self {
        debug_assert!(buffers.len() == starts.len() && starts.first() == Some(&0));
        debug_assert!(starts.windows(2).all(|w| w[0] < w[1]));
        Self { buffers, starts }
    }

    /// Where each buffer's range starts.
    pub fn starts(&self) -> &'a [usize] {
        self.starts
    }

    /// `view` of this index space.
    pub fn region(self, view: View) -> Region<'a> {
        Region { parts: self, view }
    }

    /// `view` as an operand of the one buffer that holds all its entries, if one does.
    pub fn resolve(&self, view: View) -> Option<Operand<'a>> {
        part_of_view(self.starts, view).map(|p| {
            Operand::new(
                &self.buffers[p],
                View {
                    offset: view.offset.saturating_sub(self.starts[p]),
                    ..view
                },
            )
        })
    }
}

/// A view of an index space held in [`Parts`].
#[derive(Clone, Copy)]
pub struct Region<'a> {
    /// Where the index space is held.
    pub parts: Parts<'a>,
    /// The block of it.
    pub view: View,
}

impl<'a> Region<'a> {
    /// The same index space through another view.
    pub fn with(&self, view: View) -> Self {
        Self {
            parts: self.parts,
            view,
        }
    }

    /// The operand of the one buffer holding the whole view, or an error naming `what`.
    pub fn resolve(&self, what: &str) -> Result<Operand<'a>> {
        self.parts.resolve(self.view).ok_or_else(|| {
            Error::shape(format!(
                "{what} ({}x{} at {}) spans two storage buffers",
                self.view.rows, self.view.cols, self.view.offset
            ))
        })
    }
}

impl<'a> From<Operand<'a>> for Region<'a> {
    fn from(op: Operand<'a>) -> Self {
        Parts::one(op.buffer).region(op.view)
    }
}

/// The part holding index `index`.
pub fn part_of(starts: &[usize], index: usize) -> usize {
    starts.partition_point(|&s| s <= index).saturating_sub(1)
}

/// The one part holding every entry of `v` (an empty view: part 0), if one does.
pub fn part_of_view(starts: &[usize], v: View) -> Option<usize> {
    let end = v.extent();
    if end == 0 {
        return Some(0);
    }
    let p = part_of(starts, v.offset);
    (part_of(starts, end - 1) == p).then_some(p)
}

/// A row s (0 < s < rows) where `v` changes part cleanly: every entry of rows < s lies below a
/// part's start and every entry of rows ≥ s at or above it (rows of full storage, of RFP's
/// transposed L22; never the interleaved rows of a column-major view).
pub fn row_split(starts: &[usize], v: View) -> Option<usize> {
    if v.rows < 2 || v.cols == 0 || v.rs == 0 {
        return None;
    }
    let first = |r: usize| v.offset + r * v.rs;
    let last = |r: usize| first(r) + (v.cols - 1) * v.cs;
    starts
        .iter()
        .filter(|&&b| b > v.offset && b < v.extent())
        .find_map(|&b| {
            let s = (b - v.offset).div_ceil(v.rs);
            (s > 0 && s < v.rows && last(s - 1) < b && first(s) >= b).then_some(s)
        })
}

/// A column where `v` changes part cleanly ([`row_split`] of the transpose).
pub fn col_split(starts: &[usize], v: View) -> Option<usize> {
    row_split(starts, v.t())
}

/// Where a square block spanning two parts is cut so that its first diagonal block lies in one
/// part: along rows or along columns, whichever runs clean.
pub fn square_split(starts: &[usize], v: View) -> Option<usize> {
    row_split(starts, v).or_else(|| col_split(starts, v))
}

/// One launch of a product cut to one buffer per operand: C ← α·A·Bᵀ + β·C (β = 1 where
/// `accumulate`: a later slice of the depth), writing entries with j ≤ i + shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// C's block (index space of C).
    pub c: View,
    /// A's block.
    pub a: View,
    /// B's block.
    pub b: View,
    /// The write mask (`None`: every entry).
    pub shift: Option<isize>,
    /// First index of the depth this piece covers (d's offset).
    pub depth0: usize,
}

/// Part starts of C, A and B.
#[derive(Clone, Copy)]
pub struct ProductParts<'s> {
    /// C's part starts.
    pub c: &'s [usize],
    /// A's.
    pub a: &'s [usize],
    /// B's.
    pub b: &'s [usize],
}

/// The pieces of C ← α·A·Bᵀ + β·C (mask j ≤ i + shift) whose every view lies in one part: cut
/// along C's and A's rows, C's columns and B's rows, or the depth, where an operand changes
/// part; pieces with nothing to write are dropped. In launch order (depth slices in order).
pub fn plan_product(
    parts: ProductParts<'_>,
    c: View,
    a: View,
    b: View,
    shift: Option<isize>,
) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    plan(parts, &mut out, c, a, b, shift, 0)?;
    Ok(out)
}

fn plan(
    parts: ProductParts<'_>,
    out: &mut Vec<Piece>,
    c: View,
    a: View,
    b: View,
    shift: Option<isize>,
    depth0: usize,
) -> Result<()> {
    if c.rows == 0 || c.cols == 0 {
        return Ok(());
    }
    let shift = match shift {
        Some(s) if s + c.rows as isize - 1 < 0 => return Ok(()),
        Some(s) if s >= c.cols as isize - 1 => None,
        s => s,
    };
    let (in_c, in_a, in_b) = (
        part_of_view(parts.c, c).is_some(),
        part_of_view(parts.a, a).is_some(),
        part_of_view(parts.b, b).is_some(),
    );
    if in_c && in_a && in_b {
        out.push(Piece {
            c,
            a,
            b,
            shift,
            depth0,
        });
        return Ok(());
    }
    let rows = if in_c && in_a {
        None
    } else {
        row_split(parts.c, c).or_else(|| row_split(parts.a, a))
    };
    if let Some(s) = rows {
        let (r, n) = (c.rows, a.cols);
        plan(
            parts,
            out,
            c.sub(0, 0, s, c.cols),
            a.sub(0, 0, s, n),
            b,
            shift,
            depth0,
        )?;
        let below = shift.map(|x| x + s as isize);
        let (c2, a2) = (c.sub(s, 0, r - s, c.cols), a.sub(s, 0, r - s, n));
        return plan(parts, out, c2, a2, b, below, depth0);
    }
    let cols = if in_c && in_b {
        None
    } else {
        col_split(parts.c, c).or_else(|| row_split(parts.b, b))
    };
    if let Some(s) = cols {
        let (w, n) = (c.cols, b.cols);
        plan(
            parts,
            out,
            c.sub(0, 0, c.rows, s),
            a,
            b.sub(0, 0, s, n),
            shift,
            depth0,
        )?;
        let right = shift.map(|x| x - s as isize);
        let (c2, b2) = (c.sub(0, s, c.rows, w - s), b.sub(s, 0, w - s, n));
        return plan(parts, out, c2, a, b2, right, depth0);
    }
    let depth = if in_a && in_b {
        None
    } else {
        col_split(parts.a, a).or_else(|| col_split(parts.b, b))
    };
    if let Some(s) = depth {
        let n = a.cols;
        let (a1, b1) = (a.sub(0, 0, a.rows, s), b.sub(0, 0, b.rows, s));
        plan(parts, out, c, a1, b1, shift, depth0)?;
        let (a2, b2) = (a.sub(0, s, a.rows, n - s), b.sub(0, s, b.rows, n - s));
        return plan(parts, out, c, a2, b2, shift, depth0 + s);
    }
    Err(Error::shape(format!(
        "a product block ({}x{} from depth {}) cannot be cut so that each operand lies in one \
         storage buffer",
        c.rows, c.cols, a.cols
    )))
}

/// The row blocks of `v` that each lie in one part (for row-independent launches in place).
pub fn row_pieces(starts: &[usize], v: View) -> Result<Vec<(usize, View)>> {
    let mut out = Vec::new();
    let mut stack = vec![(0, v)];
    while let Some((r0, v)) = stack.pop() {
        if v.rows == 0 {
            continue;
        }
        if part_of_view(starts, v).is_some() {
            out.push((r0, v));
            continue;
        }
        let s = row_split(starts, v).ok_or_else(|| {
            Error::shape(format!(
                "a {}x{} block at {} spans two storage buffers within a row",
                v.rows, v.cols, v.offset
            ))
        })?;
        stack.push((r0 + s, v.sub(s, 0, v.rows - s, v.cols)));
        stack.push((r0, v.sub(0, 0, s, v.cols)));
    }
    Ok(out)
}

/// The product `p` (C ← α·A·diag(d)·Bᵀ + β·C over `p.mask`'s entries), each operand
/// possibly spread over several buffers: launched as the pieces of [`plan_product`]. d may
/// only scale a depth that is not cut (A and B each in one buffer along the depth).
pub fn product(k: &TiledKernels, p: Product<'_, Region<'_>>) -> Result<()> {
    let (c, a, b) = (p.c, p.a, p.b);
    let starts = ProductParts {
        c: c.parts.starts(),
        a: a.parts.starts(),
        b: b.parts.starts(),
    };
    if starts.c.len() == 1 && starts.a.len() == 1 && starts.b.len() == 1 {
        let whole = p.with(
            Operand::new(&c.parts.buffers[0], c.view),
            Operand::new(&a.parts.buffers[0], a.view),
            Operand::new(&b.parts.buffers[0], b.view),
        );
        return k.gemm(whole.support(p.support[0], p.support[1]));
    }
    for piece in plan_product(starts, c.view, a.view, b.view, p.mask.shift())? {
        if p.d.is_some() && piece.depth0 > 0 {
            return Err(Error::shape(
                "a scaled product's depth spans two storage buffers",
            ));
        }
        let update = if piece.depth0 > 0 {
            p.update.onto_c()
        } else {
            p.update
        };
        k.gemm(
            p.with(
                c.with(piece.c).resolve("C")?,
                a.with(piece.a).resolve("A")?,
                b.with(piece.b).resolve("B")?,
            )
            .update(update)
            .mask(Mask::from_shift(piece.shift)),
        )?;
    }
    Ok(())
}

/// x ← x·L⁻ᵀ in place with the inverted diagonal block in `slot` of the slots of `order`
/// ([`TiledKernels::multiply_by_inverse`]), x's rows cut where it changes buffer.
pub fn multiply_by_inverse(k: &TiledKernels, x: Region<'_>, slot: usize, order: usize) -> Result<()> {
    for (_, v) in row_pieces(x.parts.starts(), x.view)? {
        k.multiply_by_inverse(x.with(v).resolve("a panel")?, slot, order)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the plan on plain f64 arrays and compares with the uncut product.
    fn check_plan(len: [usize; 3], starts: [&[usize]; 3], c: View, a: View, b: View) {
        for shift in [None, Some(0), Some(-3), Some(4)] {
            let parts = ProductParts {
                c: starts[0],
                a: starts[1],
                b: starts[2],
            };
            let pieces = plan_product(parts, c, a, b, shift).unwrap();
            let av: Vec<f64> = (0..len[1]).map(|i| (i % 7) as f64 - 3.0).collect();
            let bv: Vec<f64> = (0..len[2]).map(|i| (i % 5) as f64 + 0.5).collect();
            let mut got = vec![1.0; len[0]];
            for p in &pieces {
                assert!(part_of_view(starts[0], p.c).is_some(), "{p:?}");
                assert!(part_of_view(starts[1], p.a).is_some(), "{p:?}");
                assert!(part_of_view(starts[2], p.b).is_some(), "{p:?}");
                for i in 0..p.c.rows {
                    for j in 0..p.c.cols {
                        if p.shift.is_some_and(|s| j as isize > i as isize + s) {
                            continue;
                        }
                        let dot: f64 = (0..p.a.cols)
                            .map(|t| av[p.a.index(i, t)] * bv[p.b.index(j, t)])
                            .sum();
                        got[p.c.index(i, j)] += -dot;
                    }
                }
            }
            let mut want = vec![1.0; len[0]];
            for i in 0..c.rows {
                for j in 0..c.cols {
                    if shift.is_some_and(|s| j as isize > i as isize + s) {
                        continue;
                    }
                    let dot: f64 = (0..a.cols)
                        .map(|t| av[a.index(i, t)] * bv[b.index(j, t)])
                        .sum();
                    want[c.index(i, j)] += -dot;
                }
            }
            assert_eq!(got, want, "shift {shift:?}");
        }
    }

    #[test]
    fn parts_hold_indices_and_views() {
        let starts = [0, 10, 25];
        assert_eq!(
            (0..30).map(|i| part_of(&starts, i)).collect::<Vec<_>>()[9..11],
            [0, 1]
        );
        assert_eq!(part_of(&starts, 29), 2);
        assert_eq!(part_of_view(&starts, View::row_major(2, 5)), Some(0));
        assert_eq!(part_of_view(&starts, View::row_major(3, 5)), None);
        assert_eq!(row_split(&starts, View::row_major(6, 5)), Some(2));
        // Column-major rows interleave: no clean row cut, a clean column cut.
        let cm = View::col_major(0, 5, 6, 5);
        assert_eq!(row_split(&starts, cm), None);
        assert_eq!(col_split(&starts, cm), Some(2));
    }

    #[test]
    fn products_cut_over_row_parts_equal_the_whole() {
        // Full storage of order 12 in parts of 3 and 5 rows; the trailing SYRK of a panel.
        let m = 12;
        let starts: &[usize] = &[0, 3 * m, 8 * m];
        let v = View::row_major(m, m);
        let panel = v.sub(2, 0, 10, 2);
        check_plan([m * m; 3], [starts; 3], v.sub(2, 2, 10, 10), panel, panel);
        // A panel against a block of rows in another part.
        check_plan(
            [m * m; 3],
            [starts; 3],
            v.sub(4, 4, 8, 3),
            v.sub(4, 1, 8, 3),
            v.sub(4, 1, 3, 3),
        );
    }

    #[test]
    fn products_cut_over_column_parts_and_depth_equal_the_whole() {
        // A column-major 10 x 8 array in parts of 3 and 4 columns (RFP's L11 and L21), and a
        // transposed block (RFP's L22) fed from column-major A and B cut along the depth.
        let ld = 10;
        let starts: &[usize] = &[0, 3 * ld, 7 * ld];
        let l = View::col_major(0, 10, 8, ld);
        check_plan(
            [80; 3],
            [starts; 3],
            l.sub(2, 2, 6, 6),
            l.sub(2, 0, 6, 2),
            l.sub(2, 0, 6, 2),
        );
        let l22 = View::col_major(0, 8, 8, ld).t();
        let l21 = View::col_major(2, 8, 8, ld);
        check_plan([80; 3], [starts; 3], l22, l21, l21);
        // Solves: C a single buffer, B = L21ᵀ.
        let single: &[usize] = &[0];
        check_plan(
            [64, 64, 80],
            [single, single, starts],
            View::row_major(8, 8),
            View::row_major(8, 8),
            l21,
        );
    }

    #[test]
    fn row_pieces_cover_the_rows_once_in_order() {
        let starts = [0, 8, 20];
        let v = View::row_major(6, 4);
        let pieces = row_pieces(&starts, v).unwrap();
        let rows: Vec<usize> = pieces.iter().map(|p| p.0).collect();
        assert_eq!(rows, [0, 2, 5]);
        assert_eq!(pieces.iter().map(|p| p.1.rows).sum::<usize>(), 6);
        assert!(row_pieces(&starts, View::col_major(0, 6, 4, 6)).is_err());
    }
}
