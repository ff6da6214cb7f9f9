//! The SPD inverse via Cholesky in place in LAPACK's RFP storage (TRANSR = 'N', UPLO = 'L'),
//! after LAPACK's spftri: the tiled path's spftrf (L = [L11; L21 L22] on RFP's fixed blocks),
//! then L⁻¹ in place (strtri on L11 and L22, L21 := −L22⁻¹·L21·L11⁻¹ by two triangular solves),
//! then the lower triangle of L⁻ᵀL⁻¹ in place (slauum: C11 = L11ᵀL11 + L21ᵀL21,
//! C21 = L22ᵀL21 by a triangular product, C22 = L22ᵀL22). In RFP the strict upper triangle of
//! a diagonal block holds other entries, so nothing here reads or writes it: products run on
//! rectangles, and diagonal blocks of order ≤ nb (≤ [`TRMM_LEAF_BLOCKS`]·nb for the triangular
//! product) are copied to a small workspace with zeros above. Memory: the RFP array, n(n+1)/2 values,
//! plus [`workspace_len`] (about 4·nb·n); s³ flops as the full-storage route.

use super::kernels::{CopyMode, Inverter};
use crate::error::Result;
use crate::gl::Buffer;
use crate::tiled::{Product, Support};
use crate::tiled::cholesky::{potrf, trsm};
use crate::tiled::storage::rfp_blocks;
use crate::tiled::view::split_point;
use crate::tiled::{Operand, Triangle, View};

/// Largest diagonal block of the triangular product X := Tᵀ·X done as one full product from a
/// zero-padded copy, in diagonal blocks of order nb (128 on GPUs; the extra flops are the
/// leaf's order over the product's).
pub const TRMM_LEAF_BLOCKS: usize = 4;

/// The order of the triangular product's leaves.
fn trmm_leaf(inv: &Inverter) -> usize {
    TRMM_LEAF_BLOCKS * inv.tiled().config().nb
}

/// Values of the workspace for order n: a leaf triangle and a leaf's rows of X.
pub fn workspace_len(inv: &Inverter, n: usize) -> usize {
    let leaf = trmm_leaf(inv);
    leaf * leaf + leaf * n
}

/// The lower triangle of A⁻¹ in place in the RFP array `a` of order n (holding A's lower
/// triangle on entry); `w` holds [`workspace_len`] values. Queues the work; the tiled status
/// word says whether a pivot failed (`inv.tiled().check_status()`).
pub fn cholesky_inverse(inv: &Inverter, a: &Buffer<f32>, n: usize, w: &Buffer<f32>) -> Result<()> {
    let tri = Triangle::Blocks(rfp_blocks(n));
    potrf(inv.tiled(), a, tri, 0)?;
    trtri(inv, a, tri, w)?;
    lauum(inv, a, tri, w)
}

/// The lower-triangular `tri` of `a` replaced by its inverse in place (LAPACK strtri, lower):
/// L21 := −L22⁻¹·L21·L11⁻¹ (solves with the factors as they are), then L11 and L22 inverted.
/// Leaves: the identity in `w`, solved against the leaf, copied back below the diagonal.
pub fn trtri(inv: &Inverter, a: &Buffer<f32>, tri: Triangle, w: &Buffer<f32>) -> Result<()> {
    let k = inv.tiled();
    let op = |v: View| Operand::new(a, v);
    let Some([l11, l21, l22]) = tri.split(k.config().nb) else {
        let Triangle::Square(v) = tri else {
            unreachable!("blocks always split")
        };
        if v.rows == 0 {
            return Ok(());
        }
        let so = Operand::new(w, View::row_major(v.rows, v.rows));
        inv.copy(so, so, CopyMode::Identity, 1.0)?;
        trsm(k, so, a, v, true)?;
        return inv.copy(op(v), so, CopyMode::LowerOnly, 1.0);
    };
    if l21.rows > 0 {
        trsm(k, op(l21), a, l11, true)?;
        trsm(k, op(l21.t()), a, l22, false)?;
        inv.copy(op(l21), op(l21), CopyMode::Copy, -1.0)?;
    }
    trtri(inv, a, Triangle::Square(l11), w)?;
    trtri(inv, a, Triangle::Square(l22), w)
}

/// The lower triangle of YᵀY in place of the lower-triangular `tri` = Y of `a` (LAPACK slauum,
/// lower): C11 = Y11ᵀY11 + Y21ᵀY21, C21 = Y22ᵀY21, C22 = Y22ᵀY22, in that order. Leaves of
/// order ≤ nb: Y copied to `w` with zeros above, then one lower product.
pub fn lauum(inv: &Inverter, a: &Buffer<f32>, tri: Triangle, w: &Buffer<f32>) -> Result<()> {
    let k = inv.tiled();
    let op = |v: View| Operand::new(a, v);
    let Some([y11, y21, y22]) = tri.split(k.config().nb) else {
        let Triangle::Square(v) = tri else {
            unreachable!("blocks always split")
        };
        if v.rows == 0 {
            return Ok(());
        }
        let sv = View::row_major(v.rows, v.rows);
        let so = Operand::new(w, sv);
        inv.copy(so, op(v), CopyMode::Lower, 1.0)?;
        return k.gemm(Product::new(op(v), so.with(sv.t()), so.with(sv.t())).lower());
    };
    lauum(inv, a, Triangle::Square(y11), w)?;
    if y21.rows > 0 {
        k.gemm(
            Product::new(op(y11), op(y21.t()), op(y21.t()))
                .accumulate()
                .lower(),
        )?;
        trmm_transposed(inv, op(y21), a, y22, w)?;
    }
    lauum(inv, a, Triangle::Square(y22), w)
}

/// X := Tᵀ·X in place for the lower-triangular view `t` of `t_buffer` (order = X's rows),
/// recursively: with T = [A 0; B D] and X = [X1; X2], X1 := AᵀX1, X1 += BᵀX2, X2 := DᵀX2.
/// Leaves of order ≤ [`TRMM_LEAF_BLOCKS`]·nb: T's lower triangle and X's rows copied to `w`,
/// then one product. X must not overlap T.
pub fn trmm_transposed(
    inv: &Inverter,
    x: Operand<'_>,
    t_buffer: &Buffer<f32>,
    t: View,
    w: &Buffer<f32>,
) -> Result<()> {
    let k = inv.tiled();
    let (r, c) = (t.rows, x.view.cols);
    debug_assert_eq!(x.view.rows, r);
    if r == 0 || c == 0 {
        return Ok(());
    }
    let leaf = trmm_leaf(inv);
    if r <= leaf {
        let sv = View::row_major(r, r);
        let xv = View {
            offset: r * r,
            ..View::row_major(r, c)
        };
        let (so, xo) = (Operand::new(w, sv), Operand::new(w, xv));
        inv.copy(so, Operand::new(t_buffer, t), CopyMode::Lower, 1.0)?;
        inv.copy(xo, x, CopyMode::Copy, 1.0)?;
        // Tᵀ's row i is zero before depth i.
        let upper = Support::From { shift: 0 };
        let product = Product::new(x, so.with(sv.t()), xo.with(xv.t()));
        return k.gemm(product.support(upper, Support::All));
    }
    let r1 = split_point(r, leaf);
    let [a, b, d] = t.split(r1);
    let x1 = x.with(x.view.sub(0, 0, r1, c));
    let x2 = x.with(x.view.sub(r1, 0, r - r1, c));
    trmm_transposed(inv, x1, t_buffer, a, w)?;
    k.gemm(Product::new(x1, Operand::new(t_buffer, b.t()), x2.with(x2.view.t())).accumulate())?;
    trmm_transposed(inv, x2, t_buffer, d, w)
}
