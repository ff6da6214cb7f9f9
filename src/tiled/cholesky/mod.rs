//! Blocked Cholesky in place, all on the GPU (the CUDA course's tiled Cholesky with MAGMA's
//! inverted diagonal blocks): right-looking on two levels — per inner block column, factor
//! and invert the diagonal block in one work group, panel solve B21 ← B21·L11⁻ᵀ as one
//! product, update of the outer block column; per outer block column, one trailing update
//! B22 ← B22 − L21·L21ᵀ over the lower tiles only. For RFP the first split is LAPACK
//! spftrf's (two half-size factorizations, a triangular solve and a SYRK on the rectangle),
//! the first factorization and the solve run as one tall block column [B11; B21].
//! The diagonal-block kernels record the first failing pivot. Kernels without shared-memory
//! tiles use the recursive variant (substitution leaves of order ≤ nb). A matrix split over
//! several buffers runs the same steps, each launch cut where its views change buffer.
//! Full storage in one buffer may instead run as one chained launch, left-looking by tiles
//! ([`factor_by_chain`]), or as chained panels with trailing products
//! ([`factor_by_chained_panels`]), as [`CholeskySchedule`] chooses.

pub mod split;

use crate::tiled::schedule::CholeskySchedule;
use crate::tiled::kernels::{ChainFactor, Operand, TiledKernels, factor_chain_spin_limit};
use crate::tiled::launches::LaunchKind;
use crate::tiled::parts::{
    Parts, Region, multiply_by_inverse, part_of_view, product, row_pieces, square_split,
};
use crate::tiled::product::Product;
use crate::tiled::storage::{TiledMatrix, Triangle};
use crate::tiled::view::{View, split_point};
use crate::error::{Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};

/// Factors `c` in place (C = L·Lᵀ, L in its lower triangle), then reads the status word once:
/// a pivot ≤ 0 or NaN is [`NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite)
/// with the first failing column (LAPACK's INFO − 1) and the pivot before its square root.
pub fn factor(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    factor_status_unread(k, c)?;
    k.check_status()
}

/// [`factor`] with the status word left unread on the GPU, for the caller to read with other
/// values ([`TiledKernels::copy_status`]).
pub fn factor_status_unread(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    k.reset_status()?;
    factor_unchecked(k, c)?;
    k.check("the tiled Cholesky factorization")
}

/// The triangle `factor` works on: full storage of order ≥ the split order ([`TiledKernels::split_order`]) as spftrf's three
/// blocks of the same storage (aligned on diagonal blocks of `nb`), anything else as it is.
pub fn factored_triangle(tri: Triangle, nb: usize, split: usize) -> Triangle {
    match tri {
        Triangle::Square(v) if v.rows >= split.max(2 * nb + 1) => {
            let (m, n1) = (v.rows, (v.rows / 2).div_ceil(nb) * nb);
            Triangle::Blocks([
                v.sub(0, 0, n1, n1),
                v.sub(n1, 0, m - n1, n1),
                v.sub(n1, n1, m - n1, m - n1),
            ])
        }
        t => t,
    }
}

/// [`factor`] without the status read (for timing): the commands are queued, not waited for.
pub fn factor_unchecked(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    match k.chains_factor(c.order()) {
        Some(CholeskySchedule::Chain) if factor_by_chain(k, c, false)? => return Ok(()),
        Some(CholeskySchedule::Panels) if factor_by_chained_panels(k, c)? => return Ok(()),
        // Auto splits full storage only (RFP's blocked factor is the faster there:
        // `figures/h200/experiments/cholesky_split.txt`).
        Some(CholeskySchedule::Split)
            if k.inverted_blocks()
                && (k.cholesky_schedule() == CholeskySchedule::Split
                    || matches!(c.triangle(), Triangle::Square(_))) =>
        {
            return split::factor_split(k, c, false);
        }
        _ => {}
    }
    let tri = if k.inverted_blocks() {
        factored_triangle(c.triangle(), k.config().nb, k.split_order())
    } else {
        c.triangle()
    };
    let kind = k.set_launch_kind(LaunchKind::Other);
    let done = potrf_parts(k, c.parts(), tri, 0);
    k.set_launch_kind(kind);
    done
}

/// The Cholesky of full storage in one buffer as one chained launch
/// (glsl/tiled/potrf_chain.comp: left-looking by tiles of [`TiledKernels::diag`], tiles waiting
/// on flags on the GPU instead of between launches). False, with `c` as it was, where it
/// cannot run (RFP, several buffers, an order whose tile columns leave too few polls:
/// [`factor_chain_spin_limit`]): the caller factors the blocked way. `given_up` marks the
/// chain as given up before its first launch (the tests' way onto the resumed path).
pub fn factor_by_chain(k: &TiledKernels, c: &mut TiledMatrix, given_up: bool) -> Result<bool> {
    let Some(view) = chain_view(k, c) else {
        return Ok(false);
    };
    counted_as_chained(k, || chain(k, c.buffer(), view, 0, given_up))?;
    Ok(true)
}

/// The square `v` of `buffer` factored in place by one chained launch (its first column
/// `column0` in the whole matrix; `given_up` as [`factor_by_chain`] takes it), for
/// [`CholeskySchedule::Split`]'s halves. False, nothing launched, where the kernels have no
/// chain or its tile columns leave too few polls.
pub(super) fn chain_square(
    k: &TiledKernels,
    buffer: &Buffer<f32>,
    v: View,
    column0: usize,
    given_up: bool,
) -> Result<bool> {
    if k.chains_factor(v.rows).is_none() || !chain_fits(k, v) {
        return Ok(false);
    }
    counted_as_chained(k, || chain(k, buffer, v, column0, given_up))?;
    Ok(true)
}

/// Runs `factor`'s launches as [`LaunchKind::Other`] and counts one chained factorization
/// ([`TiledKernels::chained_factors`]) once it succeeds.
fn counted_as_chained(k: &TiledKernels, factor: impl FnOnce() -> Result<()>) -> Result<()> {
    let kind = k.set_launch_kind(LaunchKind::Other);
    let done = factor();
    k.set_launch_kind(kind);
    done?;
    k.factor_chained();
    Ok(())
}

/// Whether the chained factor can run on the square `v`: its tile columns leave enough polls
/// ([`factor_chain_spin_limit`]).
fn chain_fits(k: &TiledKernels, v: View) -> bool {
    factor_chain_spin_limit(v.rows.div_ceil(k.chain_tile()), k.chain_tile()).is_some()
}

/// The Cholesky of the square `v` of `buffer` in place (its lower triangle), by the chained
/// launch where the kernels' schedule chains order `v.rows` (and the chain can run), else by
/// [`potrf`]; failures go to the status word either way (the inverses' SPD route).
pub fn potrf_square(k: &TiledKernels, buffer: &Buffer<f32>, v: View) -> Result<()> {
    if k.chains_factor(v.rows) == Some(CholeskySchedule::Chain) && chain_fits(k, v) {
        return counted_as_chained(k, || chain(k, buffer, v, 0, false));
    }
    if k.chains_factor(v.rows) == Some(CholeskySchedule::Split) && k.inverted_blocks() {
        let whole = Parts::one(buffer).region(v);
        return split::block_column(k, whole, 0, &mut false);
    }
    potrf(k, buffer, Triangle::Square(v), 0)
}

/// The Cholesky of full storage in one buffer with chained panels: per outer block column of
/// [`TiledKernels::outer`], [B11; B21] factored by one chained launch (L11 and L21 =
/// B21·L11⁻ᵀ, left-looking by tiles inside the panel) and the trailing matrix updated by one
/// lower-tile product of the outer rank, as [`potrf_blocked`] does: two dependent launches
/// per outer block. False, with `c` as it was, where the chain cannot run.
pub fn factor_by_chained_panels(k: &TiledKernels, c: &mut TiledMatrix) -> Result<bool> {
    let Some(v) = chain_view(k, c) else {
        return Ok(false);
    };
    counted_as_chained(k, || chained_panels(k, c, v, false))?;
    Ok(true)
}

/// [`factor_by_chained_panels`]' launches. C is copied first and every launch issued before
/// any flag is read (one wait for the GPU, not one per panel); where a panel's chain gave up,
/// C is restored and the panels run again, each chain finished before the next product.
/// `given_up` marks the first panel's chain as given up before it runs (the tests' way onto
/// the restoring path).
fn chained_panels(k: &TiledKernels, c: &TiledMatrix, v: View, given_up: bool) -> Result<()> {
    let saved = Buffer::<f32>::uninitialized(
        k.context(),
        BufferTarget::Storage,
        BufferUsage::Stream,
        c.buffer().len(),
    )?;
    saved.copy_from(c.buffer())?;
    let flags = panels_in_order(k, c, v, false, given_up)?;
    for sync in &flags {
        if sync.download_range(1, 1)?[0] != 0 {
            log::debug!("a chained panel gave up waiting: the panels again, each finished");
            c.buffer().copy_from(&saved)?;
            k.reset_status()?;
            panels_in_order(k, c, v, true, false)?;
            break;
        }
    }
    Ok(())
}

/// Per outer block column the panel's chain ([`chain_launch`], `checked` or not) and the
/// trailing product; the panels' flags where unchecked. `given_up`: the first panel's chain
/// is marked given up before it runs.
fn panels_in_order(
    k: &TiledKernels,
    c: &TiledMatrix,
    v: View,
    checked: bool,
    given_up: bool,
) -> Result<Vec<Buffer<u32>>> {
    let (m, outer) = (v.rows, k.panel_outer());
    let region = c.region(v);
    let sub = |i, j, r, cols| region.with(v.sub(i, j, r, cols));
    let mut flags = Vec::new();
    for j0 in (0..m).step_by(outer) {
        let w = outer.min(m - j0);
        k.set_launch_kind(LaunchKind::PanelSolve);
        let panel = v.sub(j0, j0, m - j0, w);
        let give_up = given_up && j0 == 0;
        flags.extend(chain_launch(k, c.buffer(), panel, j0, give_up, checked)?);
        let rest = m - j0 - w;
        if rest > 0 {
            let (c22, l21) = (sub(j0 + w, j0 + w, rest, rest), sub(j0 + w, j0, rest, w));
            k.set_launch_kind(LaunchKind::TrailingUpdate);
            product(k, Product::new(c22, l21, l21).subtract().lower())?;
        }
    }
    Ok(flags)
}

/// [`factor`] with chained panels where the first panel's chain is told, before it runs, that
/// a work group gave up: C restored and the panels run again, each chain finished before the
/// next product. For the tests.
#[doc(hidden)]
pub fn factor_panels_after_chain_gives_up(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    let v = chain_view(k, c)
        .ok_or_else(|| Error::shape("the chained Cholesky cannot run on this matrix"))?;
    k.reset_status()?;
    chained_panels(k, c, v, true)?;
    k.check("the tiled Cholesky factorization")?;
    k.check_status()
}

/// The view the chained Cholesky factors: full storage in one buffer, where the chain's tile
/// columns leave it enough polls.
fn chain_view(k: &TiledKernels, c: &TiledMatrix) -> Option<View> {
    match c.triangle() {
        Triangle::Square(v) if c.part_count() == 1 && chain_fits(k, v) => Some(v),
        _ => None,
    }
}

/// Factors the first `view.cols` columns of `view` (the whole square, or a block column whose
/// width is a multiple of the tiles' order) in place by the chained kernel, its first column
/// `column0` in the whole matrix. A launch where a work group gave up waiting (a software
/// renderer's loop limit) leaves every tile published and final or as it was, so the chain is
/// launched again on the same flags until every tile is published: the first tile not
/// published waits for nobody, so each launch publishes at least one (at most one launch per
/// tile, else the device is broken: an error).
fn chain(
    k: &TiledKernels,
    buffer: &Buffer<f32>,
    view: View,
    column0: usize,
    given_up: bool,
) -> Result<()> {
    chain_launch(k, buffer, view, column0, given_up, true).map(|_| ())
}

/// [`chain`], or with `checked` false its first launch only: the flags are returned unread
/// (word 1 set where a work group gave up), so that a caller issuing several launches waits
/// for the GPU once.
fn chain_launch(
    k: &TiledKernels,
    buffer: &Buffer<f32>,
    view: View,
    column0: usize,
    given_up: bool,
    checked: bool,
) -> Result<Option<Buffer<u32>>> {
    let (rows, cols) = (view.rows, view.cols);
    if cols == 0 {
        return Ok(None);
    }
    let t = k.chain_tile();
    debug_assert!(rows == cols || cols.is_multiple_of(t));
    let (row_tiles, col_tiles) = (rows.div_ceil(t), cols.div_ceil(t));
    let tiles = col_tiles * row_tiles - col_tiles * (col_tiles - 1) / 2;
    let spin_limit = factor_chain_spin_limit(col_tiles, t).ok_or_else(|| {
        Error::shape(format!(
            "the chained Cholesky cannot wait across {col_tiles} tile columns"
        ))
    })?;
    let ctx = k.context();
    let mut words = vec![0u32; 2 + tiles];
    words[1] = u32::from(given_up);
    let sync = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Stream, &words)?;
    let scratch = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Stream, &[0u32; 2])?;
    let launch = ChainFactor {
        c: Operand::new(buffer, view),
        column0,
        sync: &sync,
        scratch: &scratch,
        spin_limit,
    };
    if !given_up {
        k.potrf_chain(&launch)?;
    }
    if !checked {
        return Ok(Some(sync));
    }
    for _ in 0..=tiles {
        if sync.download_range(1, 1)?[0] == 0 {
            return Ok(None);
        }
        // Only on software renderers (and in the tests): the next launch goes on from the
        // published tiles.
        log::debug!("the chained Cholesky gave up waiting: launched again");
        sync.write(0, &[0, 0])?;
        k.potrf_chain(&launch)?;
    }
    Err(chain_stalled(tiles))
}

/// The error of a chain that stopped making progress (never, where the device keeps GL's
/// memory model: the first tile not published waits for nobody).
fn chain_stalled(tiles: usize) -> Error {
    crate::error::DeviceError::Unsupported {
        what: "finish the chained Cholesky".into(),
        why: format!(
            "its work groups did not publish its {tiles} tiles in {} launches",
            tiles + 1
        ),
    }
    .into()
}

/// [`factor`] where the chained Cholesky is told, before its first launch, that a work group
/// gave up: the path a long wait on a software renderer takes (the chain launched again on
/// the tiles already published). For the tests.
#[doc(hidden)]
pub fn factor_after_chain_gives_up(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    k.reset_status()?;
    if !factor_by_chain(k, c, true)? {
        return Err(Error::shape("the chained Cholesky cannot run on this matrix"));
    }
    k.check("the tiled Cholesky factorization")?;
    k.check_status()
}

/// The factorization of `tri` in `buffer`; `column0` is its first global column
/// ([`potrf_parts`] for one buffer).
pub fn potrf(k: &TiledKernels, buffer: &Buffer<f32>, tri: Triangle, column0: usize) -> Result<()> {
    potrf_parts(k, Parts::one(buffer), tri, column0)
}

/// The factorization of `tri` held in `parts`; `column0` is its first global column. Blocked
/// with inverted diagonal blocks where the kernels allow it ([`potrf_blocked`]), else
/// recursive.
pub fn potrf_parts(
    k: &TiledKernels,
    parts: Parts<'_>,
    tri: Triangle,
    column0: usize,
) -> Result<()> {
    if !k.inverted_blocks() {
        return potrf_recursive(k, parts, tri, column0);
    }
    let r = |v: View| parts.region(v);
    match tri {
        Triangle::Square(v) => potrf_blocked(k, r(v), column0),
        Triangle::Blocks([b11, b21, b22]) => {
            // spftrf: L11, L21 = B21·L11⁻ᵀ, B22 − L21·L21ᵀ, L22. Where B21 continues B11's
            // columns (RFP's column-major halves), L11 and L21 are one tall block column
            // factored like full storage's first n1 columns (its panels run through both).
            let tall = View {
                rows: b11.rows + b21.rows,
                ..b11
            };
            if (b21.rs, b21.cs) == (b11.rs, b11.cs) && tall.index(b11.rows, 0) == b21.offset {
                potrf_blocked(k, r(tall), column0)?;
            } else {
                potrf_blocked(k, r(b11), column0)?;
                k.set_launch_kind(LaunchKind::PanelSolve);
                trsm_inverted(k, r(b21), r(b11), k.diag())?;
            }
            k.set_launch_kind(LaunchKind::TrailingUpdate);
            product(k, Product::new(r(b22), r(b21), r(b21)).subtract().lower())?;
            potrf_blocked(k, r(b22), column0 + b11.rows)
        }
    }
}

/// One inner block column of the blocked Cholesky: columns j..j + b of the view, inside the
/// outer block column outer.0..outer.1, its inverted diagonal block in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InnerBlock {
    /// First column.
    pub j: usize,
    /// Width (the diag order, less at the end of an outer block or at a buffer boundary).
    pub b: usize,
    /// The outer block column's first column and end.
    pub outer: (usize, usize),
    /// Slot of the inverse of its diagonal block.
    pub slot: usize,
}

/// The inner blocks of the blocked Cholesky of the view `v` (its leading square's columns)
/// held in parts starting at `starts`: outer block columns of width `outer`, inner ones of width `d`, an inner block cut
/// short where its diagonal block would span two buffers (never with the aligned parts of
/// [`part_starts`](crate::tiled::storage::part_starts) at the default block widths).
pub fn inner_blocks(starts: &[usize], v: View, d: usize, outer: usize) -> Result<Vec<InnerBlock>> {
    let n = v.cols;
    let mut blocks = Vec::new();
    let mut j0 = 0;
    while j0 < n {
        let w = outer.min(n - j0);
        let mut j = j0;
        while j < j0 + w {
            let mut b = d.min(j0 + w - j);
            while part_of_view(starts, v.sub(j, j, b, b)).is_none() {
                b = square_split(starts, v.sub(j, j, b, b)).ok_or_else(|| {
                    Error::shape("a diagonal block spans two storage buffers and cannot be cut")
                })?;
            }
            blocks.push(InnerBlock {
                j,
                b,
                outer: (j0, j0 + w),
                slot: blocks.len(),
            });
            j += b;
        }
        j0 += w;
    }
    Ok(blocks)
}

/// Right-looking blocked Cholesky of the region `v` on two levels (MAGMA's inverted diagonal
/// blocks): outer block columns of the kernels' outer width, each factored in inner block
/// columns of the diag order with three launches apiece — factor and invert B_jj in one work
/// group, panel L_j = B_j·L_jj⁻ᵀ as one product, update of the outer block column's remaining
/// columns — then one lower-tile SYRK of the outer rank on the trailing matrix (each cut into
/// pieces where the region spans several buffers). Where the kernels fuse them, each update
/// (inner and trailing) also factors the next diagonal block: two dependent launches per
/// inner block, and a packing launch per outer block. A tall `v` (rows > cols) is a block column
/// [B11; B21]: L11 and L21 = B21·L11⁻ᵀ come out together (the trailing updates stop at its last
/// column). Leaves the inverses of the diagonal blocks in the slots of [`inner_blocks`].
pub fn potrf_blocked(k: &TiledKernels, v: Region<'_>, column0: usize) -> Result<()> {
    let (rows, n) = (v.view.rows, v.view.cols);
    debug_assert!(rows >= n);
    let blocks = inner_blocks(v.parts.starts(), v.view, k.diag(), k.outer())?;
    k.reserve_inverses(blocks.len())?;
    let sub = |i, j, r, c| v.with(v.view.sub(i, j, r, c));
    // The slot whose diagonal block the last inner update already factored.
    let mut factored = None;
    for (
        index,
        &InnerBlock {
            j,
            b,
            outer: (j0, end),
            slot,
        },
    ) in blocks.iter().enumerate()
    {
        if factored != Some(slot) {
            let diagonal = sub(j, j, b, b).resolve("a diagonal block")?;
            k.set_launch_kind(LaunchKind::DiagonalBlock);
            k.potrf_inv_block(diagonal, column0 + j, slot)?;
        }
        factored = None;
        let below = rows - j - b;
        if below > 0 {
            let panel = sub(j + b, j, below, b);
            k.set_launch_kind(LaunchKind::PanelSolve);
            multiply_by_inverse(k, panel, slot, k.diag())?;
            k.set_launch_kind(LaunchKind::InnerUpdate);
            let right = end - j - b;
            if right > 0 {
                // The outer block column's columns right of this block, lower part; the next
                // inner block's diagonal block (at its corner) factored in the same launch
                // where the kernels can.
                let (c, bt) = (sub(j + b, j + b, below, right), sub(j + b, j, right, b));
                let next = blocks.get(index + 1).filter(|n| n.j == j + b);
                let fused = match (
                    next,
                    c.parts.resolve(c.view),
                    panel.parts.resolve(panel.view),
                ) {
                    (Some(n), Some(co), Some(po)) => match bt.parts.resolve(bt.view) {
                        Some(bo) => {
                            k.update_and_factor(co, po, bo, (n.b, column0 + n.j, n.slot))?
                        }
                        None => false,
                    },
                    _ => false,
                };
                if fused {
                    factored = next.map(|n| n.slot);
                } else {
                    product(k, Product::new(c, panel, bt).subtract().lower())?;
                }
            }
        }
        let (rest_rows, rest) = (rows - end, n - end);
        if j + b == end && rest > 0 {
            let w = end - j0;
            let c = sub(end, end, rest_rows, rest);
            let (a, bt) = (sub(end, j0, rest_rows, w), sub(end, j0, rest, w));
            k.set_launch_kind(LaunchKind::TrailingUpdate);
            // The next block column's first diagonal block (at C's corner) factored in the
            // same launch where the kernels can.
            let next = blocks.get(index + 1).filter(|n| n.j == end);
            let fused = match (
                next,
                c.parts.resolve(c.view),
                a.parts.resolve(a.view),
                bt.parts.resolve(bt.view),
            ) {
                (Some(n), Some(co), Some(ao), Some(bo)) => {
                    k.trailing_and_factor(co, ao, bo, (n.b, column0 + n.j, n.slot))?
                }
                _ => false,
            };
            if fused {
                factored = next.map(|n| n.slot);
            } else {
                product(k, Product::new(c, a, bt).subtract().lower())?;
            }
        }
    }
    Ok(())
}

/// x ← x·L⁻ᵀ for the square factor `l` just factored, whose diagonal blocks of `order` have
/// their inverses in the slots of [`inner_blocks`] (by [`potrf_blocked`], `order` the kernels'
/// diag; by a chain, its tile order), on two levels: per inner block one product with the
/// inverse and one update of the outer block's columns right of it, per outer block one
/// update of all columns right of it (of the outer rank, rounded up to whole blocks).
pub fn trsm_inverted(k: &TiledKernels, x: Region<'_>, l: Region<'_>, order: usize) -> Result<()> {
    let (n, r) = (l.view.rows, x.view.rows);
    let outer = k.outer().next_multiple_of(order);
    let blocks = inner_blocks(l.parts.starts(), l.view, order, outer)?;
    let xs = |j, w| x.with(x.view.sub(0, j, r, w));
    let ls = |i, j, rows, cols| l.with(l.view.sub(i, j, rows, cols));
    for &InnerBlock {
        j,
        b,
        outer: (j0, end),
        slot,
    } in &blocks
    {
        multiply_by_inverse(k, xs(j, b), slot, order)?;
        let right = end - j - b;
        if right > 0 {
            // X_right ← X_right − X_j·L_right,jᵀ inside the outer block.
            let c = xs(j + b, right);
            product(
                k,
                Product::new(c, xs(j, b), ls(j + b, j, right, b)).subtract(),
            )?;
        }
        let rest = n - end;
        if j + b == end && rest > 0 {
            let (c, xj) = (xs(end, rest), xs(j0, end - j0));
            product(
                k,
                Product::new(c, xj, ls(end, j0, rest, end - j0)).subtract(),
            )?;
        }
    }
    Ok(())
}

/// The recursive factorization (for kernels without inverted blocks): B11, the panel solve by
/// substitution leaves, the lower-tile SYRK, B22. A leaf spanning two buffers is split where
/// they meet.
pub fn potrf_recursive(
    k: &TiledKernels,
    parts: Parts<'_>,
    tri: Triangle,
    column0: usize,
) -> Result<()> {
    let nb = k.config().nb;
    let [b11, b21, b22] = match tri {
        Triangle::Square(v) if v.rows == 0 => return Ok(()),
        Triangle::Square(v) if v.rows <= nb => match parts.resolve(v) {
            Some(leaf) => {
                k.set_launch_kind(LaunchKind::DiagonalBlock);
                return k.potrf_block(leaf, column0);
            }
            None => v.split(square_split(parts.starts(), v).ok_or_else(|| {
                Error::shape("a diagonal block spans two storage buffers and cannot be cut")
            })?),
        },
        _ => tri.split(nb).expect("larger than a leaf"),
    };
    let r = |v: View| parts.region(v);
    potrf_recursive(k, parts, Triangle::Square(b11), column0)?;
    k.set_launch_kind(LaunchKind::PanelSolve);
    trsm_regions(k, r(b21), r(b11), false)?;
    k.set_launch_kind(LaunchKind::TrailingUpdate);
    product(k, Product::new(r(b22), r(b21), r(b21)).subtract().lower())?;
    potrf_recursive(k, parts, Triangle::Square(b22), column0 + b11.rows)
}

/// x ← x·L⁻ᵀ (`backward` false: each row solves L·yᵀ = xᵀ) or x ← x·L⁻¹ (true: Lᵀ·yᵀ = xᵀ) for
/// the lower-triangular `l` (view of `l_buffer`), recursively: leaves of order ≤ nb by one
/// kernel, the coupling block by the product kernel.
pub fn trsm(
    k: &TiledKernels,
    x: Operand<'_>,
    l_buffer: &Buffer<f32>,
    l: View,
    backward: bool,
) -> Result<()> {
    trsm_regions(k, x.into(), Parts::one(l_buffer).region(l), backward)
}

/// [`trsm`] for regions possibly spread over several buffers: a leaf spanning two is split
/// where they meet, x's rows are cut where x changes buffer.
pub fn trsm_regions(k: &TiledKernels, x: Region<'_>, l: Region<'_>, backward: bool) -> Result<()> {
    let nb = k.config().nb;
    let n = l.view.rows;
    if n == 0 {
        return Ok(());
    }
    let split = if n <= nb {
        match l.parts.resolve(l.view) {
            Some(leaf) => {
                for (_, v) in row_pieces(x.parts.starts(), x.view)? {
                    k.trsm_block(x.with(v).resolve("right-hand sides")?, leaf, backward)?;
                }
                return Ok(());
            }
            None => square_split(l.parts.starts(), l.view).ok_or_else(|| {
                Error::shape("a diagonal block spans two storage buffers and cannot be cut")
            })?,
        }
    } else {
        split_point(n, nb)
    };
    trsm_split(k, x, l.parts, l.view.split(split), backward)
}

/// [`trsm`] with L given as its blocks [L11; L21 L22] (RFP's, or a split square view).
pub fn trsm_blocks(
    k: &TiledKernels,
    x: Operand<'_>,
    l_buffer: &Buffer<f32>,
    blocks: [View; 3],
    backward: bool,
) -> Result<()> {
    trsm_split(k, x.into(), Parts::one(l_buffer), blocks, backward)
}

/// [`trsm_blocks`] for regions possibly spread over several buffers.
pub fn trsm_split(
    k: &TiledKernels,
    x: Region<'_>,
    parts: Parts<'_>,
    [l11, l21, l22]: [View; 3],
    backward: bool,
) -> Result<()> {
    let (r, n1, n2) = (x.view.rows, l11.rows, l22.rows);
    let x1 = x.with(x.view.sub(0, 0, r, n1));
    let x2 = x.with(x.view.sub(0, n1, r, n2));
    let l = |v: View| parts.region(v);
    if !backward {
        // [X1 X2]·[L11ᵀ L21ᵀ; 0 L22ᵀ] = [B1 B2]
        trsm_regions(k, x1, l(l11), false)?;
        product(k, Product::new(x2, x1, l(l21)).subtract())?;
        trsm_regions(k, x2, l(l22), false)
    } else {
        // [X1 X2]·[L11 0; L21 L22] = [B1 B2]
        trsm_regions(k, x2, l(l22), true)?;
        product(k, Product::new(x1, x2, l(l21.t())).subtract())?;
        trsm_regions(k, x1, l(l11), true)
    }
}

/// [`trsm`] against a factor held as a [`TiledMatrix`] (full or RFP, one buffer or several).
pub fn trsm_factor(
    k: &TiledKernels,
    x: Operand<'_>,
    l: &TiledMatrix,
    backward: bool,
) -> Result<()> {
    match l.triangle() {
        Triangle::Square(v) => trsm_regions(k, x.into(), l.region(v), backward),
        Triangle::Blocks(b) => trsm_split(k, x.into(), l.parts(), b, backward),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain that stops making progress is a device error naming its tiles and launches,
    /// as the README's error table shows it.
    #[test]
    fn a_stalled_chain_is_a_device_error_naming_its_launches() {
        let e = chain_stalled(2080);
        assert_eq!(e.kind(), crate::ErrorKind::Device);
        assert_eq!(
            e.to_string(),
            "this device cannot finish the chained Cholesky: its work groups did not publish \
             its 2080 tiles in 2081 launches"
        );
    }

    #[test]
    fn large_full_storage_is_split_as_rfp_small_is_not() {
        let square = |m: usize| Triangle::Square(View::row_major(m, m));
        // Below the split order, and at orders too small to split on diagonal blocks: as is.
        assert_eq!(factored_triangle(square(12287), 32, 12288), square(12287));
        assert_eq!(factored_triangle(square(64), 32, 10), square(64));
        // From it on: [L11 (n1 x n1); L21; L22] of the same storage, n1 a multiple of 32.
        for m in [12288, 16384, 16385, 40000] {
            let Triangle::Blocks([b11, b21, b22]) = factored_triangle(square(m), 32, 12288) else {
                panic!("m = {m} not split");
            };
            let n1 = b11.rows;
            assert!(n1.is_multiple_of(32) && n1 >= m / 2 && n1 < m / 2 + 32);
            assert_eq!((b11.cols, b21.rows, b21.cols), (n1, m - n1, n1));
            assert_eq!((b22.rows, b22.cols), (m - n1, m - n1));
            // Row-major addresses of the whole matrix.
            assert_eq!((b21.offset, b22.offset), (n1 * m, n1 * m + n1));
            assert!([b11, b21, b22].iter().all(|b| (b.rs, b.cs) == (m, 1)));
        }
        // RFP's blocks are left to spftrf's own split.
        let rfp = Triangle::Blocks(crate::tiled::storage::rfp_blocks(20000));
        assert_eq!(factored_triangle(rfp, 32, 12288), rfp);
    }
}
