//! General inverse by blocked Gauss-Jordan elimination with pivoting (Benner et al. Fig 3
//! left, after Quintana-Ortí et al.): per block of b columns, the panel [A01; A11; A21] is
//! transformed as the unblocked sweep would, A11 := A11⁻¹, A01 := −A01·A11⁻¹,
//! A21 := −A21·A11⁻¹, by way of the pivoted LU of [A11; A21] ([`super::kernels::panel`]: whole-row
//! interchanges, P·[A11; A21] = [L11; L21]·U11, so A21·A11⁻¹ = L21·L11⁻¹ and
//! A11⁻¹ = U11⁻¹·L11⁻¹), then A0j += A01·A1j, A2j += A21·A1j, A1j := A11⁻¹·A1j. Up to
//! [`PANEL_INVERSE_MAX`] columns a block takes three launches after its panel (the column and
//! block row moved out and both b x b inverses formed in one, then two on the rank kernel of
//! [`super::kernels::rank`]; [`BlockUpdate::Products`](super::kernels::rank::BlockUpdate::Products): three tiled
//! products: [`block_update`]); wider blocks transform the panel by triangular solves. 2s³
//! flops, one sweep; the inverse of PA is in place and the columns are unscrambled on download.

use super::kernels::{CopyMode, DeviceSquare, Inverter};
pub use super::kernels::panel::PivotWork;
use super::kernels::panel::{
    Beside, factor_panel, factor_panel_ahead, look_ahead, panel_launches, queue_bands,
};
use crate::error::Result;
use super::kernels::rank::{RankProduct, RankTile, rank_update};
use crate::tiled::cholesky::trsm;
use crate::tiled::{Operand, Product, Update, View};

/// The largest block whose inverses [`Inverter::panel_split`] forms in one work group.
pub const PANEL_INVERSE_MAX: usize = 64;

/// Inverts `a` in place up to the column order (the result is (PA)⁻¹ = A⁻¹Pᵀ; see
/// [`unscramble_columns`]). Queues the work; the status word says whether a pivot failed.
/// With [`PanelSettings::look_ahead`](super::kernels::panel::PanelSettings::look_ahead) each
/// block updates the next panel's columns first and the rest beside that panel's launches.
pub fn invert_in_place(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, tol: f32) -> Result<()> {
    let n = a.n;
    let ahead = look_ahead(inv, w, n, true);
    debug_assert!(ahead.is_none() || w.block <= PANEL_INVERSE_MAX);
    // With trace logging on, the wall time of the panels and of the updates, each waited for.
    let timed = log::log_enabled!(log::Level::Trace);
    let (mut panels, mut updates) = (0.0, 0.0);
    let wait = |total: &mut f64, start: std::time::Instant| {
        if timed {
            inv.context().finish();
            *total += start.elapsed().as_secs_f64() * 1e3;
        }
    };
    let mut beside = Beside::default();
    let mut k0 = 0;
    while k0 < n {
        let b = w.block.min(n - k0);
        let start = std::time::Instant::now();
        if let Some(tile) = ahead {
            factor_panel_ahead(inv, a, w, k0, b, tol, &mut beside)?;
            wait(&mut panels, start);
            let start = std::time::Instant::now();
            inv.traced(
                || format!("block update ahead at {k0}"),
                || block_update_ahead(inv, a, w, k0, b, tile, &mut beside),
            )?;
            wait(&mut updates, start);
        } else {
            factor_panel(inv, a, w, k0, b, tol, None)?;
            wait(&mut panels, start);
            let start = std::time::Instant::now();
            if b <= PANEL_INVERSE_MAX {
                inv.traced(|| format!("block update at {k0}"), || block_update(inv, a, w, k0, b))?;
            } else {
                block_update_by_solves(inv, a, w, k0, b)?;
            }
            wait(&mut updates, start);
        }
        k0 += b;
    }
    debug_assert!(beside.is_empty());
    if timed {
        log::trace!("Gauss-Jordan inverse of order {n}: panels {panels:.2} ms, updates {updates:.2} ms");
    }
    Ok(())
}

/// [`block_update`] with look-ahead: the split and Y as there, then the update of the next
/// panel's columns (waited for), and the rest of the columns queued in `beside` in as many
/// bands of rows as the next panel has launches (all of it at once at the last block).
fn block_update_ahead<'a>(
    inv: &Inverter,
    a: &'a DeviceSquare,
    w: &'a PivotWork,
    k0: usize,
    b: usize,
    tile: RankTile,
    beside: &mut Beside<'a>,
) -> Result<()> {
    let n = a.n;
    inv.traced(
        || format!("gje split at {k0}"),
        || inv.panel_split(&a.buffer, n, k0, b, &w.row_block, &w.block_row, Some(&w.square)),
    )?;
    let yv = View::row_major(2 * b, n);
    inv.traced(
        || format!("gje y product at {k0}"),
        || rank_update(inv, y_product(w, b, n), w.update.tile(2 * b, n, b).unwrap_or(tile)),
    )?;
    // A −= C·Y over rows i0 .. i0+rows and columns j0 .. j0+width: rows before k0+b take Y's
    // second half, the rows from it on its first.
    let (v, xv) = (a.view(), View::row_major(n, b));
    let block = |(i0, rows): (usize, usize), (j0, width): (usize, usize)| RankProduct {
        c: a.op(v.sub(i0, j0, rows, width)),
        x: Operand::new(&w.row_block, xv.sub(i0, 0, rows, b)),
        y: Operand::new(&w.spread, yv.sub(b, j0, b, width)),
        below: Some(((k0 + b).clamp(i0, i0 + rows) - i0, yv.sub(0, j0, b, width))),
        update: Update::Subtract,
    };
    let next = k0 + b;
    if next >= n {
        return rank_update(inv, block((0, n), (0, n)), tile);
    }
    let nb = w.block.min(n - next);
    inv.traced(
        || format!("gje next panel's update at {k0}"),
        || rank_update(inv, block((0, n), (next, nb)), tile),
    )?;
    // The other columns, left and right of the next panel.
    let slots = panel_launches(inv, w, n, next, nb);
    let cols = [(0, next), (next + nb, n - next - nb)];
    queue_bands(beside, tile, slots, (0, n), cols, block);
    Ok(())
}

/// Y = [L11⁻¹; U11⁻¹·L11⁻¹]·W1 (2b x n) on the rank kernel, from the split's workspaces.
fn y_product(w: &PivotWork, b: usize, n: usize) -> RankProduct<'_> {
    RankProduct {
        c: Operand::new(&w.spread, View::row_major(2 * b, n)),
        x: Operand::new(&w.square, View::row_major(2 * b, b)),
        y: Operand::new(&w.block_row, View::row_major(b, n)),
        below: None,
        update: Update::Replace,
    }
}

/// One block's Gauss-Jordan update (b ≤ [`PANEL_INVERSE_MAX`]), the panel factored (columns
/// k0 .. k0+b: L11\U11 and L21 below, A01 above): with C the panel column's copy and W1
/// block row 1 with the identity in the panel's columns, both moved out (zeros left), and
/// Y = [L11⁻¹; U11⁻¹·L11⁻¹]·W1, rows 0 .. k0+b get −C·(U11⁻¹·L11⁻¹·W1) with −I in C's block
/// rows and the rows below −C·(L11⁻¹·W1): A01 := −A01·A11⁻¹, A11 := A11⁻¹, A21 := −L21·L11⁻¹,
/// A0j += A01·A1j, A1j := A11⁻¹·A1j and A2j += A21·A1j in three launches on the rank kernel
/// (four with the tiled products, more where they pack an operand).
pub fn block_update(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, k0: usize, b: usize) -> Result<()> {
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let r = n - k0 - b;
    let (col_copy, row) = (&w.row_block, &w.block_row);
    inv.traced(
        || format!("gje split at {k0}"),
        || inv.panel_split(&a.buffer, n, k0, b, col_copy, row, Some(&w.square)),
    )?;
    if let Some(tile) = w.update.tile(n, n, b) {
        return rank_block_update(inv, a, w, k0, b, tile);
    }
    let cv = View::row_major(n, b);
    let col = |first, rows| Operand::new(&w.row_block, cv.sub(first, 0, rows, b));
    let yv = View::row_major(2 * b, n);
    let y = |first| Operand::new(&w.spread, yv.sub(first, 0, b, n).t());
    k.gemm(Product::new(
        Operand::new(&w.spread, yv),
        Operand::new(&w.square, View::row_major(2 * b, b)),
        Operand::new(&w.block_row, View::row_major(b, n).t()),
    ))?;
    k.gemm(Product::new(a.op(v.sub(0, 0, k0 + b, n)), col(0, k0 + b), y(b)).subtract())?;
    if r > 0 {
        k.gemm(Product::new(a.op(v.sub(k0 + b, 0, r, n)), col(k0 + b, r), y(0)).subtract())?;
    }
    Ok(())
}

/// [`block_update`]'s two products after the split on the rank kernel ([`super::kernels::rank`]):
/// Y = [L11⁻¹; U11⁻¹·L11⁻¹]·W1 (2b x n), then A −= C·Y over all rows in one launch, rows
/// 0 .. k0+b taking Y's second half and the rows below its first.
fn rank_block_update(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    tile: RankTile,
) -> Result<()> {
    let n = a.n;
    let yv = View::row_major(2 * b, n);
    inv.traced(
        || format!("gje y product at {k0}"),
        || rank_update(inv, y_product(w, b, n), w.update.tile(2 * b, n, b).unwrap_or(tile)),
    )?;
    let update = RankProduct {
        c: a.op(a.view()),
        x: Operand::new(&w.row_block, View::row_major(n, b)),
        y: Operand::new(&w.spread, yv.sub(b, 0, b, n)),
        below: Some((k0 + b, yv.sub(0, 0, b, n))),
        update: Update::Subtract,
    };
    inv.traced(
        || format!("gje rank update at {k0}"),
        || rank_update(inv, update, tile),
    )
}

/// One block's Gauss-Jordan update for wider blocks: the panel transformed by triangular
/// solves in place (A01 := −A01·U11⁻¹·L11⁻¹, A21 := −L21·L11⁻¹, A11 := U11⁻¹·L11⁻¹), block
/// row 1 moved out (zeros left) and one product per side over all rows, Aij += Ti1·W1j (on
/// the rank kernel up to [`super::kernels::rank::RANK_MAX_DEPTH`] columns).
pub fn block_update_by_solves(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
) -> Result<()> {
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let r = n - k0 - b;
    inv.panel_split(&a.buffer, n, k0, b, &w.row_block, &w.block_row, None)?;
    transform_panel_by_solves(inv, a, w, k0, b)?;
    let wv = View::row_major(b, n);
    let t = a.op(v.sub(0, k0, n, b));
    for (j0, width) in [(0, k0), (k0 + b, r)] {
        if width == 0 {
            continue;
        }
        let (c, w1) = (a.op(v.sub(0, j0, n, width)), wv.sub(0, j0, b, width));
        match w.update.tile(n, width, b) {
            Some(tile) => {
                let y = Operand::new(&w.block_row, w1);
                let product = RankProduct {
                    c,
                    x: t,
                    y,
                    below: None,
                    update: Update::Accumulate,
                };
                rank_update(inv, product, tile)?;
            }
            None => {
                let w1 = Operand::new(&w.block_row, w1.t());
                k.gemm(Product::new(c, t, w1).accumulate())?;
            }
        }
    }
    Ok(())
}

/// The factored panel (columns k0 .. k0+b: L11\U11 and L21 below, A01 above) turned into the
/// Gauss-Jordan panel by triangular solves in place (any b): A01 := −A01·U11⁻¹·L11⁻¹,
/// A21 := −L21·L11⁻¹, A11 := U11⁻¹·L11⁻¹.
fn transform_panel_by_solves(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
) -> Result<()> {
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let r = n - k0 - b;
    let a11 = v.sub(k0, k0, b, b);
    // L11 with its unit diagonal, and the identity, side by side in the square workspace.
    let lv = View::row_major(b, b);
    let sv = View {
        offset: b * b,
        ..lv
    };
    let (l11, s) = (Operand::new(&w.square, lv), Operand::new(&w.square, sv));
    inv.copy(l11, a.op(a11), CopyMode::UnitLower, 1.0)?;
    inv.copy(s, s, CopyMode::Identity, 1.0)?;
    // Uᵀ is the lower triangle of A11's transposed view: X·U⁻¹ = X·(Uᵀ)⁻ᵀ.
    for (rows, first) in [(k0, 0), (r, k0 + b)] {
        if rows == 0 {
            continue;
        }
        let x = a.op(v.sub(first, k0, rows, b));
        if first == 0 {
            trsm(k, x, &a.buffer, a11.t(), false)?;
        }
        trsm(k, x, &w.square, lv, true)?;
        inv.copy(x, x, CopyMode::Copy, -1.0)?;
    }
    // S := L11⁻¹, then Sᵀ := Sᵀ·(U11ᵀ)⁻¹, i.e. S := U11⁻¹·L11⁻¹.
    trsm(k, s, &w.square, lv, true)?;
    trsm(k, s.with(sv.t()), &a.buffer, a11.t(), true)?;
    inv.copy(a.op(a11), s, CopyMode::Copy, 1.0)
}

/// A⁻¹ from (PA)⁻¹: the column swaps of the row pivots, in reverse order.
pub fn unscramble_columns(x: &mut crate::Matrix<f32>, piv: &[u32]) {
    let n = x.rows();
    for p in (0..n).rev() {
        let r = piv[p] as usize;
        if r != p {
            let s = x.as_mut_slice();
            for i in 0..n {
                s.swap(i * n + p, i * n + r);
            }
        }
    }
}
