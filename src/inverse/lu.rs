//! General inverse via LU with partial pivoting, for comparison with Gauss-Jordan (Benner et
//! al. section 3.1, three sweeps): blocked right-looking PA = LU on the GPU (the pivoted panel
//! of [`super::kernels::panel`], then A12 := L11⁻¹A12, A22 -= A21·A12), then Y = L⁻¹ (solve with the
//! identity, or the triangular inverse: [`LowerInverse`]) and X = U⁻¹Y (the tiled triangular
//! solve on the transposed views), so X = (PA)⁻¹;
//! columns are unscrambled on download. Counted as 2s³ flops (the standard count); the solves
//! with a full identity do more (about 2.7s³ executed).

use super::kernels::{CopyMode, DeviceSquare, Inverter};
use super::kernels::panel::{LowerInverse, PivotWork, factor_panel, update_right};
use super::spd;
use crate::error::Result;
use crate::tiled::cholesky::trsm;

/// Factors PA = LU in place (L unit lower below the diagonal, U on and above); pivots in
/// `w.piv`, a failing pivot flagged in the status word.
pub fn factor_in_place(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, tol: f32) -> Result<()> {
    let n = a.n;
    let mut k0 = 0;
    while k0 < n {
        let b = w.block.min(n - k0);
        factor_panel(inv, a, w, k0, b, tol, None)?;
        inv.traced(|| format!("lu update at {k0}"), || update_right(inv, a, w, k0, b, n))?;
        k0 += b;
    }
    Ok(())
}

/// (PA)⁻¹ = U⁻¹L⁻¹ from the factors in `lu`, into `x` (`l` is workspace of the same order),
/// L⁻¹ formed as `inv`'s [`super::kernels::panel::PanelSettings::lower`] says.
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
            inv.traced(
                || "lu inverse of L".into(),
                || {
                    if k.solves_by_inverses() {
                        spd::trtri_by_blocks(inv, &x.buffer, v)
                    } else {
                        let s = inv.buffer("a diagonal block", k.config().nb.pow(2))?;
                        spd::trtri(inv, &x.buffer, v, &s)
                    }
                },
            )?;
        }
    }
    // Xᵀ ← Xᵀ·(Uᵀ)⁻¹, i.e. X := U⁻¹·X, with Uᵀ the lower-triangular transposed view.
    inv.traced(
        || "lu solve with U".into(),
        || trsm(k, x.op(v.t()), &lu.buffer, v.t(), true),
    )
}
