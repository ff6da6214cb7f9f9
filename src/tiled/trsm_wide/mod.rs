//! x ← x·L⁻ᵀ for a lower-triangular L in one buffer as MAGMA's trsm does it: every diagonal
//! block of [`SOLVE_BLOCK`](crate::tiled::schedule::SOLVE_BLOCK) (or 64, 32) inverted in one launch (glsl/tiled/trtri_blocks.comp, one work
//! group per block), then few, large products. Per outer block column J of `width` columns:
//! left-looking, X_J ← X_J − X_{<J}·L_{J,<J}ᵀ (one product of depth J's first column), or
//! right-looking, after J is solved, X_{>J} ← X_{>J} − X_J·L_{>J,J}ᵀ (one product of depth
//! `width`); inside J per inner block i one product with its inverse, X_i ← X_i·L_ii⁻ᵀ, and
//! one update of J's columns right of it. Launches: 2·⌈n/block⌉ ([`launches`]), against about
//! 2·n/diag + n/outer for [`trsm_inverted`](crate::tiled::cholesky::trsm_inverted).
//! The split Cholesky's L21 = B21·L11⁻ᵀ ([`split`](crate::tiled::cholesky::split)).

pub mod rows;

use crate::tiled::schedule::SplitSolve;
use crate::tiled::kernels::{Operand, TiledKernels};
use crate::tiled::parts::{Parts, Region, product, row_pieces};
use crate::tiled::product::Product;
use crate::tiled::view::View;
use crate::error::{Error, Result};

/// The launches [`trsm_wide`] makes for L of order `n` with inverted blocks of `nb` and
/// outer blocks of `width` (rounded up to whole blocks), x in one buffer, every product of
/// depth within one launch: the inversion, a product with an inverse per inner block, an
/// update per inner block but each outer block's last, and one product per outer block but
/// one (the first left-looking, the last right-looking).
pub fn launches(n: usize, width: usize, nb: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let w = outer_width(width, nb);
    let (inner, outer) = (n.div_ceil(nb), n.div_ceil(w));
    1 + inner + (inner - outer) + (outer - 1)
}

/// `width` rounded up to whole blocks of `nb` (at least one).
pub fn outer_width(width: usize, nb: usize) -> usize {
    width.max(1).div_ceil(nb) * nb
}

/// x ← x·L⁻ᵀ (each row of x solves L·yᵀ = xᵀ) for the lower-triangular square `l` (its
/// entries above the diagonal not read), x over one or several buffers, by inverted blocks
/// of `nb` (32, 64 or [`SOLVE_BLOCK`](crate::tiled::schedule::SOLVE_BLOCK)) and outer blocks of `width` columns, `left`-looking
/// or right-looking. Needs [`TiledKernels::solves_by_wide_blocks`].
pub fn trsm_wide(
    k: &TiledKernels,
    x: Region<'_>,
    l: Operand<'_>,
    (nb, width): (usize, usize),
    left: bool,
) -> Result<()> {
    let (r, n) = (x.view.rows, l.view.cols);
    check_solve_shapes("the wide triangular solve", x.view, l.view)?;
    if !k.solves_by_wide_blocks(nb) {
        return Err(Error::shape(
            "these kernels cannot solve by inverted blocks of the solve's order",
        ));
    }
    if n == 0 || r == 0 {
        return Ok(());
    }
    let w = outer_width(width, nb);
    let inv = k.solve_inverses(n.div_ceil(nb), nb)?;
    k.invert_blocks_of(l, nb, &inv)?;
    let lr = Parts::one(l.buffer);
    let ls = |i, j, rows, cols| lr.region(l.view.sub(i, j, rows, cols));
    let xs = |j, cols| x.with(x.view.sub(0, j, r, cols));
    for j0 in (0..n).step_by(w) {
        let end = (j0 + w).min(n);
        if left && j0 > 0 {
            // X_J ← X_J − X_{<J}·L_{J,<J}ᵀ
            let p = Product::new(xs(j0, end - j0), xs(0, j0), ls(j0, 0, end - j0, j0));
            product(k, p.subtract())?;
        }
        for j in (j0..end).step_by(nb) {
            let b = nb.min(end - j);
            for (_, v) in row_pieces(x.parts.starts(), xs(j, b).view)? {
                let xv = x.with(v).resolve("right-hand sides")?;
                k.multiply_by_solve_inverse(xv, &inv, j / nb, nb)?;
            }
            let right = end - j - b;
            if right > 0 {
                // J's columns right of block i less X_i·L_{right,i}ᵀ.
                let p = Product::new(xs(j + b, right), xs(j, b), ls(j + b, j, right, b));
                product(k, p.subtract())?;
            }
        }
        if !left && end < n {
            // X_{>J} ← X_{>J} − X_J·L_{>J,J}ᵀ
            let p = Product::new(xs(end, n - end), xs(j0, end - j0), ls(end, j0, n - end, end - j0));
            product(k, p.subtract())?;
        }
    }
    Ok(())
}

/// An error naming `what` unless L is square and x has as many columns as L's order.
pub fn check_solve_shapes(what: &str, x: View, l: View) -> Result<()> {
    if l.rows != l.cols || x.cols != l.cols {
        return Err(Error::shape(format!(
            "{what} needs a square L and x with as many columns as its order: x is {} x {}, L {} x {}",
            x.rows, x.cols, l.rows, l.cols
        )));
    }
    Ok(())
}

/// x ← x·L⁻ᵀ by `solve` where the kernels and L allow it ([`trsm_wide`] needs L in one
/// buffer), else `otherwise` (the caller's solve: the chain's inverted tiles or substitution).
/// Whether `solve` ran.
pub fn trsm_chosen(
    k: &TiledKernels,
    solve: SplitSolve,
    x: Region<'_>,
    l: Region<'_>,
    otherwise: impl FnOnce() -> Result<()>,
) -> Result<bool> {
    match (solve, l.parts.resolve(l.view)) {
        (SplitSolve::Blocks { block, width, left }, Some(lo))
            if k.solves_by_wide_blocks(block) =>
        {
            trsm_wide(k, x, lo, (block, width), left)?;
            Ok(true)
        }
        (
            SplitSolve::Rows {
                width,
                rows,
                leaf,
                block,
            },
            Some(lo),
        ) if k.solves_by_rows(rows, block) => {
            rows::trsm_rows(k, x, lo, (width, rows, leaf, block))?;
            Ok(true)
        }
        _ => otherwise().map(|()| false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiled::schedule::SOLVE_BLOCK;

    #[test]
    fn launches_count_the_inversion_the_inner_blocks_and_the_outer_products() {
        assert_eq!(launches(0, 512, SOLVE_BLOCK), 0);
        // One block: the inversion and one product.
        assert_eq!(launches(1, 512, SOLVE_BLOCK), 2);
        assert_eq!(launches(128, 512, SOLVE_BLOCK), 2);
        // 4096 in outer blocks of 1024: 32 inverses, 28 inner updates, 3 outer products.
        assert_eq!(launches(4096, 1024, SOLVE_BLOCK), 1 + 32 + 28 + 3);
        assert_eq!(launches(4096, 1024, 64), 1 + 64 + 60 + 3);
        assert_eq!(outer_width(1000, SOLVE_BLOCK), 1024);
        assert_eq!(outer_width(1000, 64), 1024);
        assert_eq!(outer_width(0, SOLVE_BLOCK), SOLVE_BLOCK);
    }
}
