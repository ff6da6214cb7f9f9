//! The Cholesky split in halves ([`CholeskySchedule::Split`](crate::tiled::schedule::CholeskySchedule)):
//! LAPACK spftrf's split of C = [B11; B21 B22] (n1 = m/2 rounded up to whole tiles) applied
//! recursively to block columns. A block column [B11; B21] of at most
//! [`TiledKernels::split_chain_order`] columns is a leaf: L11 by one chained launch
//! (glsl/tiled/potrf_chain.comp, which leaves L11's inverted diagonal tiles in their slots),
//! L21 = B21·L11⁻ᵀ by the kernels' [`SplitSolve`]: by rows ([`crate::tiled::trsm_wide::rows`], the
//! default), by products with those inverses ([`trsm_inverted`], MAGMA's inverted blocks) or
//! by blocks of 128 inverted in one launch and wide products ([`trsm_wide`](crate::tiled::trsm_wide)). A wider
//! square block column is its left half, one lower-tile product B22 ← B22 − L21·L21ᵀ on the
//! right half's rows below the diagonal, then its right half; a wider tall one its square,
//! then one solve of the rows below. At m = 8192 with leaves of 4096: chain, solve of
//! 4096 × 4096, SYRK of rank 4096, chain; at 16384 that for the top left 8192, a solve of
//! 8192 × 8192, a SYRK of rank 8192 and the same for the bottom right. Where the chain cannot run (no
//! chain kernel, too many tile columns, a leaf over two buffers) the leaf is blocked
//! ([`potrf_blocked`], L11 and L21 together). Every kernel reports its first failing column to
//! the one status word by atomicMin with its global column, and a failed pivot leaves NaN that
//! flows into every later block, so the earliest failing column is the one reported.

use super::{chain_square, potrf_blocked, trsm_inverted, trsm_regions};
use crate::tiled::kernels::TiledKernels;
use crate::tiled::launches::LaunchKind;
use crate::tiled::parts::{Region, product};
use crate::tiled::product::Product;
use crate::tiled::trsm_wide::trsm_chosen;
#[cfg(doc)]
use crate::tiled::schedule::SplitSolve;
use crate::tiled::storage::{TiledMatrix, Triangle};
use crate::tiled::view::View;
use crate::error::{Error, Result};

/// Factors `c` (full storage or RFP, one buffer or several) in place by the split schedule,
/// the status word not read (as [`factor_unchecked`](super::factor_unchecked)).
/// `given_up` marks the first chained leaf as given up before it runs (the tests' way onto
/// the chain's resumed path). The kernels must have inverted blocks
/// ([`TiledKernels::inverted_blocks`]).
pub fn factor_split(k: &TiledKernels, c: &mut TiledMatrix, given_up: bool) -> Result<()> {
    let kind = k.set_launch_kind(LaunchKind::Other);
    let done = split_triangle(k, c, given_up);
    k.set_launch_kind(kind);
    done
}

fn split_triangle(k: &TiledKernels, c: &TiledMatrix, mut given_up: bool) -> Result<()> {
    let parts = c.parts();
    let r = |v: View| parts.region(v);
    match c.triangle() {
        Triangle::Square(v) => block_column(k, r(v), 0, &mut given_up),
        Triangle::Blocks([b11, b21, b22]) => {
            // RFP's own first split (spftrf): where B21 continues B11's columns, [B11; B21]
            // is one block column; else L11, then L21 by the recursive solve.
            let tall = View {
                rows: b11.rows + b21.rows,
                ..b11
            };
            if (b21.rs, b21.cs) == (b11.rs, b11.cs) && tall.index(b11.rows, 0) == b21.offset {
                block_column(k, r(tall), 0, &mut given_up)?;
            } else {
                block_column(k, r(b11), 0, &mut given_up)?;
                k.set_launch_kind(LaunchKind::PanelSolve);
                trsm_chosen(k, k.split_solve(), r(b21), r(b11), || {
                    trsm_regions(k, r(b21), r(b11), false)
                })?;
            }
            k.set_launch_kind(LaunchKind::TrailingUpdate);
            product(k, Product::new(r(b22), r(b21), r(b21)).subtract().lower())?;
            block_column(k, r(b22), b11.rows, &mut given_up)
        }
    }
}

/// The width of the left half of a block column `n` wide split on tiles of `t`: n/2 rounded
/// up to whole tiles (less than `n` where `n` > `t`).
pub fn left_width(n: usize, t: usize) -> usize {
    (n / 2).div_ceil(t) * t
}

/// Factors the first `v.cols` columns of the block column `v` (rows ≥ cols: L11 on top, L21
/// below), its first column `column0` in the whole matrix: a square split in halves while
/// wider than the split's chain order, a taller one as its square and then one solve of the
/// rows below. `given_up` is taken by the first chained leaf.
pub fn block_column(
    k: &TiledKernels,
    v: Region<'_>,
    column0: usize,
    given_up: &mut bool,
) -> Result<()> {
    let (rows, n) = (v.view.rows, v.view.cols);
    if n == 0 {
        return Ok(());
    }
    if rows < n {
        return Err(Error::shape(format!(
            "the split Cholesky's block column is {rows} x {n}, wider than tall"
        )));
    }
    let t = k.chain_tile();
    if n <= k.split_chain_order().max(t) {
        return leaf(k, v, column0, given_up);
    }
    let sub = |i, j, r, c| v.with(v.view.sub(i, j, r, c));
    if rows > n {
        // Its square first, then the rows below by one solve with it: faster than splitting
        // the tall half again (measured in docs/results.md).
        let square = sub(0, 0, n, n);
        block_column(k, square, column0, given_up)?;
        k.set_launch_kind(LaunchKind::PanelSolve);
        let below = sub(n, 0, rows - n, n);
        trsm_chosen(k, k.split_solve(), below, square, || {
            trsm_regions(k, below, square, false)
        })?;
        return Ok(());
    }
    let n1 = left_width(n, t);
    block_column(k, sub(0, 0, rows, n1), column0, given_up)?;
    // The right half's rows below its diagonal less L21·L21ᵀ (its lower tiles only).
    let (c, a, bt) = (
        sub(n1, n1, rows - n1, n - n1),
        sub(n1, 0, rows - n1, n1),
        sub(n1, 0, n - n1, n1),
    );
    k.set_launch_kind(LaunchKind::TrailingUpdate);
    product(k, Product::new(c, a, bt).subtract().lower())?;
    block_column(k, sub(n1, n1, rows - n1, n - n1), column0 + n1, given_up)
}

/// A block column of at most the chain order: L11 by one chained launch and L21 by products
/// with L11's inverted diagonal tiles, or both blocked where the chain cannot run.
fn leaf(k: &TiledKernels, v: Region<'_>, column0: usize, given_up: &mut bool) -> Result<()> {
    let (rows, n) = (v.view.rows, v.view.cols);
    let square = v.with(v.view.sub(0, 0, n, n));
    let chained = match square.parts.resolve(square.view) {
        Some(l11) => chain_square(k, l11.buffer, l11.view, column0, *given_up)?,
        None => false,
    };
    if !chained {
        return potrf_blocked(k, v, column0);
    }
    *given_up = false;
    if rows > n {
        k.set_launch_kind(LaunchKind::PanelSolve);
        solve_below_leaf(k, v.with(v.view.sub(n, 0, rows - n, n)), square)?;
    }
    Ok(())
}

/// L21 = B21·L11⁻ᵀ below a chained leaf L11 by the kernels' [`SplitSolve`]: by rows or by
/// inverted blocks of 128 and wide products ([`trsm_wide`](crate::tiled::trsm_wide::trsm_wide))
/// where chosen and possible, else products with the chain's inverted tiles
/// ([`trsm_inverted`] on the chain's tile order).
pub fn solve_below_leaf(k: &TiledKernels, x: Region<'_>, l11: Region<'_>) -> Result<()> {
    trsm_chosen(k, k.split_solve(), x, l11, || {
        trsm_inverted(k, x, l11, k.chain_tile())
    })
    .map(|_| ())
}

/// [`factor`](super::factor) by the split schedule where the first chained leaf is
/// told, before it runs, that a work group gave up (the chain launched again on the tiles it
/// published). For the tests.
#[doc(hidden)]
pub fn factor_split_after_chain_gives_up(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    if !k.inverted_blocks() {
        return Err(Error::shape("the split Cholesky needs inverted diagonal blocks"));
    }
    k.reset_status()?;
    factor_split(k, c, true)?;
    k.check("the tiled Cholesky factorization")?;
    k.check_status()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_left_half_is_whole_tiles_and_narrower_than_the_block_column() {
        for t in [32, 64] {
            for n in [t + 1, 2 * t, 2 * t + 1, 1000, 4097, 8192, 16384] {
                let n1 = left_width(n, t);
                assert!(n1.is_multiple_of(t) && n1 >= n / 2 && n1 < n, "t {t} n {n}: {n1}");
            }
        }
        assert_eq!(left_width(8192, 64), 4096);
        assert_eq!(left_width(16384, 64), 8192);
    }
}
