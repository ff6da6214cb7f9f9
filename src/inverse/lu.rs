//! General inverse via LU with partial pivoting, for comparison with Gauss-Jordan (Benner et
//! al. section 3.1, three sweeps): blocked right-looking PA = LU on the GPU (panel column by
//! column with whole-row swaps, A12 := L11⁻¹A12, A22 -= A21·A12), then Y = L⁻¹ (solve with the
//! identity) and X = U⁻¹Y (the tiled triangular solve on the transposed views), so X = (PA)⁻¹;
//! columns are unscrambled on download. Counted as 2s³ flops (the standard count); the solves
//! with a full identity do more (about 2.7s³ executed).

use super::gje::PivotWork;
use super::kernels::{CopyMode, DeviceSquare, Inverter};
use crate::error::Result;
use crate::tiled::Product;
use crate::tiled::cholesky::trsm;
use crate::tiled::{Operand, View};

/// Factors PA = LU in place (L unit lower below the diagonal, U on and above); pivots in
/// `w.piv`, a failing pivot flagged in the status word.
pub fn factor_in_place(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, tol: f32) -> Result<()> {
    let n = a.n;
    let v = a.view();
    let k = inv.tiled();
    let buf = &a.buffer;
    let op = |view: View| Operand::new(buf, view);
    let mut k0 = 0;
    while k0 < n {
        let b = w.block.min(n - k0);
        w.eliminate_panel(inv, buf, n, k0, b, tol, true)?;
        let r = n - k0 - b;
        if r > 0 {
            // L11 with its unit diagonal, into the row-block workspace.
            let lv = View::row_major(b, b);
            let l11 = Operand::new(&w.row_block, lv);
            inv.copy(l11, op(v.sub(k0, k0, b, b)), CopyMode::UnitLower, 1.0)?;
            // A12ᵀ ← A12ᵀ·L11⁻ᵀ, i.e. A12 := L11⁻¹·A12.
            trsm(k, op(v.sub(k0, k0 + b, b, r).t()), &w.row_block, lv, false)?;
            k.gemm(
                Product::new(
                    op(v.sub(k0 + b, k0 + b, r, r)),
                    op(v.sub(k0 + b, k0, r, b)),
                    op(v.sub(k0, k0 + b, b, r).t()),
                )
                .subtract(),
            )?;
        }
        k0 += b;
    }
    Ok(())
}

/// (PA)⁻¹ = U⁻¹L⁻¹ from the factors in `lu`, into `x` (`l` is workspace of the same order).
pub fn inverse_from_factors(
    inv: &Inverter,
    lu: &DeviceSquare,
    l: &DeviceSquare,
    x: &DeviceSquare,
) -> Result<()> {
    let v = lu.view();
    let k = inv.tiled();
    inv.copy(l.op(v), lu.op(v), CopyMode::UnitLower, 1.0)?;
    inv.copy(x.op(v), x.op(v), CopyMode::Identity, 1.0)?;
    // X ← X·L⁻¹ = L⁻¹.
    trsm(k, x.op(v), &l.buffer, v, true)?;
    // Xᵀ ← Xᵀ·(Uᵀ)⁻¹, i.e. X := U⁻¹·X, with Uᵀ the lower-triangular transposed view.
    trsm(k, x.op(v.t()), &lu.buffer, v.t(), true)
}
