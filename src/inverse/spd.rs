//! SPD inverses, lower triangle only (the upper triangle is never read or written):
//! via Cholesky (Benner et al. section 4.1: factor C = L·Lᵀ with the tiled path, Y = L⁻¹ by the
//! tiled triangular solve with the identity, then the lower triangle of YᵀY = L⁻ᵀL⁻¹), and by
//! the Gauss-Jordan variant for SPD matrices (Fig 3 right, Bientinesi et al.) in its lower,
//! symmetric form: a blocked sweep. Per block of b columns, with A11 = L·Lᵀ (the Schur
//! complement, so a failing pivot is the Cholesky pivot of that column):
//! Y0 = A01·L⁻ᵀ, Y2 = A21·L⁻ᵀ (TRSM); A00 -= Y0Y0ᵀ, A20 -= Y2Y0ᵀ, A22 -= Y2Y2ᵀ (SYRK, GEMM,
//! SYRK); A01 := Y0·L⁻¹, A21 := Y2·L⁻¹ (TRSM); A11 := −L⁻ᵀL⁻¹ (TRTRI, LAUUM). After the last
//! block the lower triangle holds −A⁻¹ (sweeping every pivot negates the inverse), negated on
//! download. Both count s³ flops (the standard SPD count).

use super::kernels::{CopyMode, DeviceSquare, Inverter};
use crate::error::Result;
use crate::gl::Buffer;
use crate::tiled::cholesky::{potrf, trsm};
use crate::tiled::{Operand, Triangle, View};

/// The lower triangle of A⁻¹ by Cholesky, into `a` (its lower triangle holds A on entry);
/// `y` is order-n workspace. Queues the work; the tiled status word says whether a pivot
/// failed (read with `inv.tiled().check_status()`).
pub fn cholesky_inverse(inv: &Inverter, a: &DeviceSquare, y: &DeviceSquare) -> Result<()> {
    let k = inv.tiled();
    let v = a.view();
    potrf(k, &a.buffer, Triangle::Square(v), 0)?;
    inv.copy(y.op(v), y.op(v), CopyMode::Identity, 1.0)?;
    trsm(k, y.op(v), &a.buffer, v, true)?;
    k.gemm(a.op(v), y.op(v.t()), y.op(v.t()), None, 1.0, 0.0, true)
}

/// The lower triangle of −A⁻¹ by the SPD Gauss-Jordan sweep, in place in `a`; `s` holds at
/// least b² values (b = `block`).
pub fn gje_negative_inverse(
    inv: &Inverter,
    a: &DeviceSquare,
    s: &Buffer<f32>,
    block: usize,
) -> Result<()> {
    let k = inv.tiled();
    let n = a.n;
    let v = a.view();
    let buf = &a.buffer;
    let op = |view: View| Operand::new(buf, view);
    let mut k0 = 0;
    while k0 < n {
        let b = block.min(n - k0);
        let r = n - k0 - b;
        let a11 = v.sub(k0, k0, b, b);
        potrf(k, buf, Triangle::Square(a11), k0)?;
        let y0 = op(v.sub(k0, 0, b, k0).t());
        let y2 = op(v.sub(k0 + b, k0, r, b));
        trsm(k, y0, buf, a11, false)?;
        trsm(k, y2, buf, a11, false)?;
        k.gemm(op(v.sub(0, 0, k0, k0)), y0, y0, None, -1.0, 1.0, true)?;
        k.gemm(op(v.sub(k0 + b, 0, r, k0)), y2, y0, None, -1.0, 1.0, false)?;
        k.gemm(
            op(v.sub(k0 + b, k0 + b, r, r)),
            y2,
            y2,
            None,
            -1.0,
            1.0,
            true,
        )?;
        trsm(k, y0, buf, a11, true)?;
        trsm(k, y2, buf, a11, true)?;
        let sv = View::row_major(b, b);
        let so = Operand::new(s, sv);
        inv.copy(so, so, CopyMode::Identity, 1.0)?;
        trsm(k, so, buf, a11, true)?;
        k.gemm(
            op(a11),
            so.with(sv.t()),
            so.with(sv.t()),
            None,
            -1.0,
            0.0,
            true,
        )?;
        k0 += b;
    }
    Ok(())
}
