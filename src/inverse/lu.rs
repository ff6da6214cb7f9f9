//! General inverse via LU with partial pivoting, for comparison with Gauss-Jordan (Benner et
//! al. section 3.1, three sweeps): blocked right-looking PA = LU on the GPU (the pivoted panel
//! of [`super::kernels::panel`], then A12 := L11⁻¹A12, A22 -= A21·A12), then Y = L⁻¹ (solve with the
//! identity, or the triangular inverse: [`LowerInverse`]) and X = U⁻¹Y (the tiled triangular
//! solve on the transposed views), so X = (PA)⁻¹;
//! columns are unscrambled on download. Counted as 2s³ flops (the standard count); the solves
//! with a full identity do more (about 2.7s³ executed).

use super::kernels::{CopyMode, DeviceSquare, Inverter};
use super::kernels::panel::{
    Beside, LowerInverse, PivotWork, copy_unit_lower, factor_panel, factor_panel_ahead,
    look_ahead, panel_launches, queue_bands, solve_right, update_right,
};
use super::kernels::rank::{RankProduct, RankTile, rank_update};
use crate::tiled::{Product, Support, Update};
use super::spd;
use crate::error::Result;
use crate::tiled::cholesky::trsm;

/// Factors PA = LU in place (L unit lower below the diagonal, U on and above); pivots in
/// `w.piv`, a failing pivot flagged in the status word. With
/// [`PanelSettings::look_ahead`](super::kernels::panel::PanelSettings::look_ahead) each block
/// updates the next panel's columns first and the rest beside that panel's launches.
pub fn factor_in_place(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, tol: f32) -> Result<()> {
    let n = a.n;
    let ahead = look_ahead(inv, w, n, false);
    let mut beside = Beside::default();
    let mut k0 = 0;
    while k0 < n {
        let b = w.block.min(n - k0);
        let Some(tile) = ahead else {
            factor_panel(inv, a, w, k0, b, tol, None)?;
            inv.traced(|| format!("lu update at {k0}"), || update_right(inv, a, w, k0, b, n))?;
            k0 += b;
            continue;
        };
        factor_panel_ahead(inv, a, w, k0, b, tol, &mut beside)?;
        inv.traced(
            || format!("lu update ahead at {k0}"),
            || update_ahead(inv, a, w, k0, b, tile, &mut beside),
        )?;
        k0 += b;
    }
    debug_assert!(beside.is_empty());
    Ok(())
}

/// The trailing update after the panel at k0 with look-ahead: A12 := L11⁻¹·A12 on every
/// column right of it, A22 −= L21·A12 on the next panel's columns (waited for) and the rest
/// queued in `beside` in as many bands of rows as the next panel has launches.
fn update_ahead<'a>(
    inv: &Inverter,
    a: &'a DeviceSquare,
    w: &'a PivotWork,
    k0: usize,
    b: usize,
    tile: RankTile,
    beside: &mut Beside<'a>,
) -> Result<()> {
    let (n, v) = (a.n, a.view());
    let next = k0 + b;
    if next >= n {
        return Ok(());
    }
    copy_unit_lower(inv, a, w, k0, b)?;
    solve_right(inv, a, w, k0, b, n)?;
    let block = |(i0, rows): (usize, usize), (j0, width): (usize, usize)| RankProduct {
        c: a.op(v.sub(i0, j0, rows, width)),
        x: a.op(v.sub(i0, k0, rows, b)),
        y: a.op(v.sub(k0, j0, b, width)),
        below: None,
        update: Update::Subtract,
    };
    let nb = w.block.min(n - next);
    let rows = (next, n - next);
    rank_update(inv, block(rows, (next, nb)), tile)?;
    let slots = panel_launches(inv, w, n, next, nb);
    let cols = [(next + nb, n - next - nb), (n, 0)];
    queue_bands(beside, tile, slots, rows, cols, block);
    Ok(())
}

/// (PA)⁻¹ = U⁻¹L⁻¹ from the factors in `lu`, into `x` (`l` is workspace of the same order,
/// and so is `lu` under [`LowerInverse::Product`]), as `inv`'s
/// [`super::kernels::panel::PanelSettings::lower`] says.
pub fn inverse_from_factors(
    inv: &Inverter,
    lu: &DeviceSquare,
    l: &DeviceSquare,
    x: &DeviceSquare,
) -> Result<()> {
    let v = lu.view();
    let k = inv.tiled();
    match inv.panel().lower {
        LowerInverse::Solve => {
            inv.copy(l.op(v), lu.op(v), CopyMode::UnitLower, 1.0)?;
            inv.copy(x.op(v), x.op(v), CopyMode::Identity, 1.0)?;
            // X ← X·L⁻¹ = L⁻¹.
            inv.traced(
                || "lu solve with L".into(),
                || trsm(k, x.op(v), &l.buffer, v, true),
            )?;
        }
        LowerInverse::Triangular => {
            // X := L (zeros above), then inverted in place.
            inv.copy(x.op(v), lu.op(v), CopyMode::UnitLower, 1.0)?;
            inv.traced(|| "lu inverse of L".into(), || spd::invert_lower(inv, &x.buffer, v, None))?;
        }
        LowerInverse::Product => {
            // l := Uᵀ and lu := L (zeros above each), both inverted in place, then
            // X = U⁻¹·L⁻¹ = A·Bᵀ with A = (U⁻ᵀ)ᵀ and B = (L⁻¹)ᵀ, whose rows i are zero before
            // depth i.
            inv.copy(l.op(v), lu.op(v.t()), CopyMode::Lower, 1.0)?;
            inv.copy(lu.op(v), lu.op(v), CopyMode::UnitLower, 1.0)?;
            inv.traced(|| "lu inverse of L".into(), || spd::invert_lower(inv, &lu.buffer, v, None))?;
            inv.traced(|| "lu inverse of U".into(), || spd::invert_lower(inv, &l.buffer, v, None))?;
            let upper = Support::From { shift: 0 };
            return inv.traced(
                || "lu product of the inverses".into(),
                || k.gemm(Product::new(x.op(v), l.op(v.t()), lu.op(v.t())).support(upper, upper)),
            );
        }
    }
    // Xᵀ ← Xᵀ·(Uᵀ)⁻¹, i.e. X := U⁻¹·X, with Uᵀ the lower-triangular transposed view.
    inv.traced(
        || "lu solve with U".into(),
        || trsm(k, x.op(v.t()), &lu.buffer, v.t(), true),
    )
}
