//! General inverse by blocked Gauss-Jordan elimination with pivoting (Benner et al. Fig 3
//! left, after Quintana-Ortí et al.): per block of b columns, the panel [A01; A11; A21] is
//! transformed as the unblocked sweep would, A11 := A11⁻¹, A01 := −A01·A11⁻¹,
//! A21 := −A21·A11⁻¹, by way of the pivoted LU of [A11; A21] ([`super::panel`]: whole-row
//! interchanges, P·[A11; A21] = [L11; L21]·U11, so A21·A11⁻¹ = L21·L11⁻¹ and
//! A11⁻¹ = U11⁻¹·L11⁻¹: both b x b inverses in one dispatch, then two products), then the
//! products A00 += A01·A10, A20 += A21·A10, A10 := A11·A10 as one (block row 1 moved out
//! first, zeros left, so all n rows accumulate; one launch with the column's copy), the same
//! for A02, A22, A12. 2s³ flops, one
//! sweep; the inverse of PA is in place and the columns are unscrambled on download.

use super::kernels::{CopyMode, DeviceSquare, Inverter};
pub use super::panel::PivotWork;
use super::panel::factor_panel;
use crate::error::Result;
use crate::tiled::Product;
use crate::tiled::cholesky::trsm;
use crate::tiled::{Operand, View};

/// The largest block whose inverses [`Inverter::panel_inverse`] forms in one work group.
pub const PANEL_INVERSE_MAX: usize = 64;

/// Inverts `a` in place up to the column order (the result is (PA)⁻¹ = A⁻¹Pᵀ; see
/// [`unscramble_columns`]). Queues the work; the status word says whether a pivot failed.
pub fn invert_in_place(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, tol: f32) -> Result<()> {
    let n = a.n;
    let v = a.view();
    let k = inv.tiled();
    let buf = &a.buffer;
    let op = |view: View| Operand::new(buf, view);
    let mut k0 = 0;
    while k0 < n {
        let b = w.block.min(n - k0);
        factor_panel(inv, a, w, k0, b, tol)?;
        // The panel column copied (the transform reads it), block row 1 moved out (zeros
        // left) outside the panel, so one product over all n rows per side updates A0j and
        // A2j and writes A1j := A11⁻¹·A1j: Aij += Ti1·W1j with T the transformed panel column.
        inv.panel_split(buf, n, k0, b, &w.row_block, &w.block_row)?;
        transform_panel(inv, a, w, k0, b)?;
        let r = n - k0 - b;
        let wv = View::row_major(b, n);
        let t = op(v.sub(0, k0, n, b));
        for (j0, width) in [(0, k0), (k0 + b, r)] {
            if width == 0 {
                continue;
            }
            let w1 = Operand::new(&w.block_row, wv.sub(0, j0, b, width).t());
            k.gemm(Product::new(op(v.sub(0, j0, n, width)), t, w1).accumulate())?;
        }
        k0 += b;
    }
    Ok(())
}

/// The factored panel (columns k0 .. k0+b: L11\U11 and L21 below, A01 above) turned into the
/// Gauss-Jordan panel: A01 := −A01·U11⁻¹·L11⁻¹, A21 := −L21·L11⁻¹, A11 := U11⁻¹·L11⁻¹. Up
/// to [`PANEL_INVERSE_MAX`] columns: both b x b inverses in one dispatch, two products from
/// the column's copy in `w.row_block` (n x b); wider: triangular solves in place.
fn transform_panel(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
) -> Result<()> {
    if b > PANEL_INVERSE_MAX {
        return transform_panel_by_solves(inv, a, w, k0, b);
    }
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let r = n - k0 - b;
    let a11 = v.sub(k0, k0, b, b);
    // The column's copy (n x b, by Inverter::panel_split): the products read it, write A.
    let cv = View::row_major(n, b);
    let col = |first, rows| Operand::new(&w.row_block, cv.sub(first, 0, rows, b));
    let lv = View::row_major(b, b);
    inv.panel_inverse(&a.buffer, n, k0 * n + k0, b, &w.square)?;
    if k0 > 0 {
        let c = a.op(v.sub(0, k0, k0, b));
        k.gemm(Product::new(c, col(0, k0), a.op(a11.t())).negate())?;
    }
    if r > 0 {
        let c = a.op(v.sub(k0 + b, k0, r, b));
        let linv = Operand::new(&w.square, lv.t());
        k.gemm(Product::new(c, col(k0 + b, r), linv).negate())?;
    }
    Ok(())
}

/// [`transform_panel`] by triangular solves in place (any b).
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
