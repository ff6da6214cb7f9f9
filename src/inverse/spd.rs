//! SPD inverses, lower triangle only (the upper triangle is never read or written):
//! via Cholesky (Benner et al. section 4.1: factor C = L·Lᵀ with the tiled path, Y = L⁻¹ by a
//! recursive triangular inverse, then the lower triangle of YᵀY = L⁻ᵀL⁻¹ recursively), and by
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
use crate::tiled::{Product, Support};
use crate::tiled::cholesky::{potrf, potrf_square, trsm};
use crate::tiled::view::split_point;
use crate::tiled::schedule::SOLVE_BLOCK;
use crate::tiled::{Operand, Triangle, View};

/// The lower triangle of A⁻¹ by Cholesky, into `a` (its lower triangle holds A on entry);
/// `y` is order-n workspace, `s` at least nb² values. Queues the work; the tiled status word
/// says whether a pivot failed (read with `inv.tiled().check_status()`). About s³ flops as
/// LAPACK's potrf + potri: potrf s³/3, the recursive triangular inverse s³/3, the recursive
/// L⁻ᵀL⁻¹ about s³/3 plus the triangular blocks it multiplies at full depth.
pub fn cholesky_inverse(
    inv: &Inverter,
    a: &DeviceSquare,
    y: &DeviceSquare,
    s: &Buffer<f32>,
) -> Result<()> {
    let k = inv.tiled();
    let v = a.view();
    let n = v.rows;
    inv.traced(
        || format!("spd inverse {n}: potrf"),
        || potrf_square(k, &a.buffer, v),
    )?;
    inv.traced(
        || format!("spd inverse {n}: triangular inverse"),
        || {
            inv.copy(y.op(v), a.op(v), CopyMode::Lower, 1.0)?;
            invert_lower(inv, &y.buffer, v, Some(s))
        },
    )?;
    inv.traced(
        || format!("spd inverse {n}: lauum"),
        || lauum(inv, &a.buffer, &y.buffer, v),
    )
}

/// The lower-triangular `v` of `y` (zeros above) replaced by its inverse: [`trtri_by_blocks`]
/// where the kernels invert diagonal blocks, else [`trtri`] with `s` (at least nb² values;
/// made here where `None`).
pub fn invert_lower(inv: &Inverter, y: &Buffer<f32>, v: View, s: Option<&Buffer<f32>>) -> Result<()> {
    let k = inv.tiled();
    if k.solves_by_inverses() {
        return trtri_by_blocks(inv, y, v);
    }
    match s {
        Some(s) => trtri(inv, y, v, s),
        None => trtri(inv, y, v, &inv.buffer("a diagonal block", k.config().nb.pow(2))?),
    }
}

/// The lower-triangular `v` of `y` (zeros above, as a full square) replaced by its inverse:
/// every diagonal block of [`SOLVE_BLOCK`] inverted in place in one launch (`trtri_blocks.comp`,
/// as the triangular solves use), then joined bottom-up by products,
/// inv([A 0; B C]) = [A⁻¹ 0; −C⁻¹·B·A⁻¹ C⁻¹]: two products per join where [`trtri`] runs
/// triangular solves (chains of substitution launches) at every level.
pub fn trtri_by_blocks(inv: &Inverter, y: &Buffer<f32>, v: View) -> Result<()> {
    let k = inv.tiled();
    let n = v.rows;
    if n == 0 {
        return Ok(());
    }
    let blocks = n.div_ceil(SOLVE_BLOCK);
    k.invert_blocks_in_place(Operand::new(y, v))?;
    if blocks == 1 {
        return Ok(());
    }
    let n1 = join_point(n);
    let t = inv.buffer("the triangular inverse's work space", (n - n1) * n1)?;
    join_inverses(inv, y, v, &t)
}

/// Where [`join_inverses`] splits an order-n triangle: half its diagonal blocks, rounded down
/// (so every leaf is one of the inverted blocks).
fn join_point(n: usize) -> usize {
    n.div_ceil(SOLVE_BLOCK) / 2 * SOLVE_BLOCK
}

/// Y21 := −Y22⁻¹·Y21·Y11⁻¹ at every level, the halves first (their diagonal blocks already
/// inverted); `t` holds the product in between.
fn join_inverses(inv: &Inverter, y: &Buffer<f32>, v: View, t: &Buffer<f32>) -> Result<()> {
    if v.rows <= SOLVE_BLOCK {
        return Ok(());
    }
    let k = inv.tiled();
    let [y11, y21, y22] = v.split(join_point(v.rows));
    join_inverses(inv, y, y11, t)?;
    join_inverses(inv, y, y22, t)?;
    let tv = View::row_major(y21.rows, y21.cols);
    let op = |w: View| Operand::new(y, w);
    // Products take B transposed: C = A·Bᵀ. Row j of Y11⁻ᵀ is zero before depth j, row i
    // of Y22⁻¹ after depth i: the panels skip those slices.
    let upper = Support::From { shift: 0 };
    let lower = Support::UpTo { shift: 0 };
    k.gemm(Product::new(Operand::new(t, tv), op(y21), op(y11.t())).support(Support::All, upper))?;
    k.gemm(
        Product::new(op(y21), op(y22), Operand::new(t, tv.t()))
            .negate()
            .support(lower, Support::All),
    )
}

/// The lower-triangular `v` of `y` (zeros above) replaced by its inverse, recursively:
/// inv([L11 0; L21 L22]) = [L11⁻¹ 0; −L22⁻¹·L21·L11⁻¹ L22⁻¹] (LAPACK strtri, lower); leaves of
/// order ≤ nb by the tiled solve against the identity in `s`.
pub fn trtri(inv: &Inverter, y: &Buffer<f32>, v: View, s: &Buffer<f32>) -> Result<()> {
    let k = inv.tiled();
    let nb = k.config().nb;
    let op = |view: View| Operand::new(y, view);
    if v.rows <= nb {
        let sv = View::row_major(v.rows, v.rows);
        let so = Operand::new(s, sv);
        inv.copy(so, so, CopyMode::Identity, 1.0)?;
        trsm(k, so, y, v, true)?;
        return inv.copy(op(v), so, CopyMode::Lower, 1.0);
    }
    let [y11, y21, y22] = v.split(split_point(v.rows, nb));
    trsm(k, op(y21), y, y11, true)?;
    trsm(k, op(y21.t()), y, y22, false)?;
    inv.copy(op(y21), op(y21), CopyMode::Copy, -1.0)?;
    trtri(inv, y, y11, s)?;
    trtri(inv, y, y22, s)
}

/// The lower triangle of YᵀY into view `v` of `c`, for the lower-triangular `v` of `y` (zeros
/// above): LAPACK slauum's result by one lower-masked product over the whole depth, as one
/// launch of large tiles instead of a chain of small products, which run far below the GPU's
/// rate (measured in docs/results.md). The packed-panel product skips the depth slices above
/// Y's diagonal (about s³/3 flops); the other kernels multiply those zeros too (s³).
pub fn lauum(inv: &Inverter, c: &Buffer<f32>, y: &Buffer<f32>, v: View) -> Result<()> {
    let (oc, oy) = (Operand::new(c, v), Operand::new(y, v.t()));
    // C = A·Bᵀ with A = B = Yᵀ, whose row i is zero before depth i.
    let upper = Support::From { shift: 0 };
    inv.tiled().gemm(Product::new(oc, oy, oy).lower().support(upper, upper))
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
        k.gemm(
            Product::new(op(v.sub(0, 0, k0, k0)), y0, y0)
                .subtract()
                .lower(),
        )?;
        k.gemm(Product::new(op(v.sub(k0 + b, 0, r, k0)), y2, y0).subtract())?;
        k.gemm(
            Product::new(op(v.sub(k0 + b, k0 + b, r, r)), y2, y2)
                .subtract()
                .lower(),
        )?;
        trsm(k, y0, buf, a11, true)?;
        trsm(k, y2, buf, a11, true)?;
        let sv = View::row_major(b, b);
        let so = Operand::new(s, sv);
        inv.copy(so, so, CopyMode::Identity, 1.0)?;
        trsm(k, so, buf, a11, true)?;
        k.gemm(
            Product::new(op(a11), so.with(sv.t()), so.with(sv.t()))
                .negate()
                .lower(),
        )?;
        k0 += b;
    }
    Ok(())
}
