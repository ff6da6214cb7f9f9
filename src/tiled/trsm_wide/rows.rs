//! x ← x·L⁻ᵀ for a lower-triangular L in one buffer with few launches: L's diagonal blocks of
//! order 32 or 64 inverted in one launch (glsl/tiled/trtri_blocks.comp), then per outer block
//! column J of `width` columns one launch of glsl/tiled/trsm_rows.comp, whose work groups each
//! solve `rows` rows of X_J through all of J (left-looking inside it, the tiles of L and the
//! solved blocks staged in shared memory), and one product X_{>J} ← X_{>J} − X_J·L_{>J,J}ᵀ
//! (right-looking). [`trsm_inverted`](crate::tiled::cholesky::trsm_inverted) takes two launches per
//! inner block instead. The split Cholesky's L21 = B21·L11⁻ᵀ ([`crate::tiled::cholesky::split`]).

use crate::tiled::kernels::{Operand, TiledKernels};
use crate::tiled::parts::{Parts, Region, product, row_pieces};
use crate::tiled::product::Product;
use super::{check_solve_shapes, outer_width};
use crate::error::{Error, Result};
use crate::gl::Buffer;

/// The launches [`trsm_rows`] makes for L of order `n`, outer blocks of `width` (rounded up
/// to whole blocks of `d`), halves while wider than `leaf`, x in one buffer and every product
/// within one launch: the inversion, then per leaf one row solve per outer block and one
/// product per outer block but the last, and one product per halving.
pub fn launches(n: usize, (width, leaf): (usize, usize), d: usize) -> usize {
    fn solve(n: usize, w: usize, leaf: usize, d: usize) -> usize {
        if n > leaf {
            let n1 = half(n, d);
            return solve(n1, w, leaf, d) + 1 + solve(n - n1, w, leaf, d);
        }
        let outer = n.div_ceil(w);
        outer + outer.saturating_sub(1)
    }
    if n == 0 {
        return 0;
    }
    let w = outer_width(width, d);
    1 + solve(n, w, leaf.max(w), d)
}

/// The first half of an order `n` above the leaf: n/2 rounded up to whole blocks of `d`.
fn half(n: usize, d: usize) -> usize {
    (n / 2).div_ceil(d) * d
}

/// x ← x·L⁻ᵀ (each row of x solves L·yᵀ = xᵀ) for the lower-triangular square `l` (its
/// entries above the diagonal not read), x over one or several buffers: halves of L while
/// wider than `leaf` (X1 by the first, X2 ← X2 − X1·L21ᵀ as one product, X2 by the second),
/// each leaf by outer blocks of `width` columns and `rows` rows of x per work group, diagonal
/// blocks of `block`. Needs [`TiledKernels::solves_by_rows`].
pub fn trsm_rows(
    k: &TiledKernels,
    x: Region<'_>,
    l: Operand<'_>,
    (width, rows, leaf, block): (usize, usize, usize, usize),
) -> Result<()> {
    let (r, n) = (x.view.rows, l.view.cols);
    check_solve_shapes("the row solve", x.view, l.view)?;
    if !k.solves_by_rows(rows, block) {
        return Err(Error::shape(format!(
            "these kernels cannot solve by rows of {rows} with blocks of {block}"
        )));
    }
    if n == 0 || r == 0 {
        return Ok(());
    }
    let d = block;
    let w = outer_width(width, d);
    let inv = k.solve_inverses(n.div_ceil(d), d)?;
    k.invert_blocks_of(l, d, &inv)?;
    solve(k, x, l, (&inv, 0), (w, rows, leaf.max(w), d))
}

/// [`trsm_rows`] after the inversion: L's diagonal blocks in `inv` from slot `slot0` on.
fn solve(
    k: &TiledKernels,
    x: Region<'_>,
    l: Operand<'_>,
    (inv, slot0): (&Buffer<f32>, usize),
    (w, rows, leaf, d): (usize, usize, usize, usize),
) -> Result<()> {
    let (r, n) = (x.view.rows, l.view.cols);
    let lr = Parts::one(l.buffer);
    let ls = |i, j, rows, cols| lr.region(l.view.sub(i, j, rows, cols));
    let xs = |j, cols| x.with(x.view.sub(0, j, r, cols));
    if n > leaf {
        let n1 = half(n, d);
        let l11 = l.with(l.view.sub(0, 0, n1, n1));
        let l22 = l.with(l.view.sub(n1, n1, n - n1, n - n1));
        solve(k, xs(0, n1), l11, (inv, slot0), (w, rows, leaf, d))?;
        let p = Product::new(xs(n1, n - n1), xs(0, n1), ls(n1, 0, n - n1, n1));
        product(k, p.subtract())?;
        return solve(k, xs(n1, n - n1), l22, (inv, slot0 + n1 / d), (w, rows, leaf, d));
    }
    for j0 in (0..n).step_by(w) {
        let end = (j0 + w).min(n);
        let lj = l.with(l.view.sub(j0, j0, end - j0, end - j0));
        for (_, v) in row_pieces(x.parts.starts(), xs(j0, end - j0).view)? {
            let xv = x.with(v).resolve("right-hand sides")?;
            k.solve_rows(xv, lj, (inv, slot0 + j0 / d), (rows, d))?;
        }
        if end < n {
            // X_{>J} ← X_{>J} − X_J·L_{>J,J}ᵀ
            let p = Product::new(xs(end, n - end), xs(j0, end - j0), ls(end, j0, n - end, end - j0));
            product(k, p.subtract())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_count_the_inversion_the_row_solves_and_the_products() {
        let one_leaf = 1 << 20;
        assert_eq!(launches(0, (512, one_leaf), 64), 0);
        assert_eq!(launches(64, (512, one_leaf), 64), 2);
        // 4096 in outer blocks of 512: the inversion, 8 row solves, 7 products.
        assert_eq!(launches(4096, (512, one_leaf), 64), 1 + 8 + 7);
        assert_eq!(launches(4097, (500, one_leaf), 64), 1 + 9 + 8);
        // Halves of 2048 (8 row solves, 7 products), one product between them.
        assert_eq!(launches(4096, (512, 2048), 64), 1 + 7 + 1 + 7);
        // A leaf below the width is the width: 8 leaves of one row solve, 7 halvings.
        assert_eq!(launches(4096, (512, 100), 64), 1 + 8 + 7);
        assert_eq!((half(4097, 64), half(4100, 64)), (2048, 2048 + 64));
    }
}
