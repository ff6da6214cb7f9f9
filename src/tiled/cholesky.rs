//! Blocked Cholesky in place, all on the GPU (the CUDA course's tiled Cholesky with MAGMA's
//! inverted diagonal blocks): right-looking on two levels — per inner block column, factor
//! and invert the diagonal block in one work group, panel solve B21 ← B21·L11⁻ᵀ as one
//! product, update of the outer block column; per outer block column, one trailing update
//! B22 ← B22 − L21·L21ᵀ over the lower tiles only. For RFP the first split is LAPACK
//! spftrf's (two half-size factorizations, a triangular solve and a SYRK on the rectangle).
//! The diagonal-block kernels record the first failing pivot. Kernels without shared-memory
//! tiles use the recursive variant (substitution leaves of order ≤ nb).

use super::kernels::{Operand, TiledKernels};
use super::storage::{TiledMatrix, Triangle};
use super::view::{View, split_point};
use crate::error::Result;
use crate::gl::Buffer;

/// Factors `c` in place (C = L·Lᵀ, L in its lower triangle), then reads the status word once:
/// a pivot ≤ 0 or NaN is [`NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite)
/// with the first failing column (LAPACK's INFO − 1) and the pivot before its square root.
pub fn factor(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    k.reset_status()?;
    factor_unchecked(k, c)?;
    k.check("the tiled Cholesky factorization")?;
    k.check_status()
}

/// [`factor`] without the status read (for timing): the commands are queued, not waited for.
pub fn factor_unchecked(k: &TiledKernels, c: &mut TiledMatrix) -> Result<()> {
    potrf(k, c.buffer(), c.triangle(), 0)
}

/// The factorization of `tri` in `buffer`; `column0` is its first global column. Blocked with
/// inverted diagonal blocks where the kernels allow it ([`potrf_blocked`]), else recursive.
pub fn potrf(k: &TiledKernels, buffer: &Buffer<f32>, tri: Triangle, column0: usize) -> Result<()> {
    if !k.inverted_blocks() {
        return potrf_recursive(k, buffer, tri, column0);
    }
    let op = |v: View| Operand::new(buffer, v);
    match tri {
        Triangle::Square(v) => potrf_blocked(k, buffer, v, column0),
        Triangle::Blocks([b11, b21, b22]) => {
            // spftrf: L11, L21 = B21·L11⁻ᵀ, B22 − L21·L21ᵀ, L22.
            potrf_blocked(k, buffer, b11, column0)?;
            trsm_inverted(k, op(b21), buffer, b11)?;
            k.gemm(op(b22), op(b21), op(b21), None, -1.0, 1.0, true)?;
            potrf_blocked(k, buffer, b22, column0 + b11.rows)
        }
    }
}

/// Right-looking blocked Cholesky of the square view `v` on two levels (MAGMA's inverted
/// diagonal blocks): outer block columns of the kernels' outer width, each factored in inner
/// block columns of the diag order with three dispatches apiece — factor and invert B_jj in
/// one work group, panel L_j = B_j·L_jj⁻ᵀ as one product, update of the outer block column's
/// remaining columns — then one lower-tile SYRK of the outer rank on the trailing matrix.
/// Leaves the inverses of the diagonal blocks in slots 0, 1, … for [`trsm_inverted`].
pub fn potrf_blocked(
    k: &TiledKernels,
    buffer: &Buffer<f32>,
    v: View,
    column0: usize,
) -> Result<()> {
    let (d, n) = (k.diag(), v.rows);
    let outer = k.outer();
    k.reserve_inverses(n.div_ceil(d))?;
    let op = |v: View| Operand::new(buffer, v);
    let mut j0 = 0;
    while j0 < n {
        let w = outer.min(n - j0);
        let mut j = j0;
        while j < j0 + w {
            let b = d.min(j0 + w - j);
            let slot = j / d;
            k.potrf_inv_block(op(v.sub(j, j, b, b)), column0 + j, slot)?;
            let below = n - j - b;
            if below > 0 {
                let panel = v.sub(j + b, j, below, b);
                k.multiply_by_inverse(op(panel), slot)?;
                let right = j0 + w - j - b;
                if right > 0 {
                    // The outer block column's columns right of this block, lower part.
                    k.gemm(
                        op(v.sub(j + b, j + b, below, right)),
                        op(panel),
                        op(v.sub(j + b, j, right, b)),
                        None,
                        -1.0,
                        1.0,
                        true,
                    )?;
                }
            }
            j += b;
        }
        let rest = n - j0 - w;
        if rest > 0 {
            let panel = v.sub(j0 + w, j0, rest, w);
            k.gemm(
                op(v.sub(j0 + w, j0 + w, rest, rest)),
                op(panel),
                op(panel),
                None,
                -1.0,
                1.0,
                true,
            )?;
        }
        j0 += w;
    }
    Ok(())
}

/// x ← x·L⁻ᵀ for the factor `l` (view of `l_buffer`) just factored by [`potrf_blocked`], whose
/// diagonal blocks' inverses are in slots 0, 1, …, on the same two levels: per inner block
/// one product with the inverse and one update of the outer block's columns right of it, per
/// outer block one update of all columns right of it (of the outer rank).
pub fn trsm_inverted(
    k: &TiledKernels,
    x: Operand<'_>,
    l_buffer: &Buffer<f32>,
    l: View,
) -> Result<()> {
    let (d, n, r) = (k.diag(), l.rows, x.view.rows);
    let outer = k.outer();
    let lo = |v: View| Operand::new(l_buffer, v);
    let mut j0 = 0;
    while j0 < n {
        let w = outer.min(n - j0);
        let mut j = j0;
        while j < j0 + w {
            let b = d.min(j0 + w - j);
            let xj = x.with(x.view.sub(0, j, r, b));
            k.multiply_by_inverse(xj, j / d)?;
            let right = j0 + w - j - b;
            if right > 0 {
                // X_right ← X_right − X_j·L_right,jᵀ inside the outer block.
                let c = x.with(x.view.sub(0, j + b, r, right));
                k.gemm(c, xj, lo(l.sub(j + b, j, right, b)), None, -1.0, 1.0, false)?;
            }
            j += b;
        }
        let rest = n - j0 - w;
        if rest > 0 {
            let c = x.with(x.view.sub(0, j0 + w, r, rest));
            let xj = x.with(x.view.sub(0, j0, r, w));
            k.gemm(
                c,
                xj,
                lo(l.sub(j0 + w, j0, rest, w)),
                None,
                -1.0,
                1.0,
                false,
            )?;
        }
        j0 += w;
    }
    Ok(())
}

/// The recursive factorization (for kernels without inverted blocks): B11, the panel solve by
/// substitution leaves, the lower-tile SYRK, B22.
pub fn potrf_recursive(
    k: &TiledKernels,
    buffer: &Buffer<f32>,
    tri: Triangle,
    column0: usize,
) -> Result<()> {
    let nb = k.config().nb;
    let Some([b11, b21, b22]) = tri.split(nb) else {
        let Triangle::Square(v) = tri else {
            unreachable!("blocks always split")
        };
        if v.rows == 0 {
            return Ok(());
        }
        return k.potrf_block(Operand::new(buffer, v), column0);
    };
    let op = |v: View| Operand::new(buffer, v);
    potrf_recursive(k, buffer, Triangle::Square(b11), column0)?;
    trsm(k, op(b21), buffer, b11, false)?;
    k.gemm(op(b22), op(b21), op(b21), None, -1.0, 1.0, true)?;
    potrf_recursive(k, buffer, Triangle::Square(b22), column0 + b11.rows)
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
    let nb = k.config().nb;
    if l.rows <= nb {
        if l.rows == 0 {
            return Ok(());
        }
        return k.trsm_block(x, Operand::new(l_buffer, l), backward);
    }
    trsm_blocks(k, x, l_buffer, l.split(split_point(l.rows, nb)), backward)
}

/// [`trsm`] with L given as its blocks [L11; L21 L22] (RFP's, or a split square view).
pub fn trsm_blocks(
    k: &TiledKernels,
    x: Operand<'_>,
    l_buffer: &Buffer<f32>,
    [l11, l21, l22]: [View; 3],
    backward: bool,
) -> Result<()> {
    let (r, n1, n2) = (x.view.rows, l11.rows, l22.rows);
    let x1 = x.with(x.view.sub(0, 0, r, n1));
    let x2 = x.with(x.view.sub(0, n1, r, n2));
    let l = |v: View| Operand::new(l_buffer, v);
    if !backward {
        // [X1 X2]·[L11ᵀ L21ᵀ; 0 L22ᵀ] = [B1 B2]
        trsm(k, x1, l_buffer, l11, false)?;
        k.gemm(x2, x1, l(l21), None, -1.0, 1.0, false)?;
        trsm(k, x2, l_buffer, l22, false)
    } else {
        // [X1 X2]·[L11 0; L21 L22] = [B1 B2]
        trsm(k, x2, l_buffer, l22, true)?;
        k.gemm(x1, x2, l(l21.t()), None, -1.0, 1.0, false)?;
        trsm(k, x1, l_buffer, l11, true)
    }
}

/// [`trsm`] against a factor held as a [`TiledMatrix`] (full or RFP).
pub fn trsm_factor(
    k: &TiledKernels,
    x: Operand<'_>,
    l: &TiledMatrix,
    backward: bool,
) -> Result<()> {
    match l.triangle() {
        Triangle::Square(v) => trsm(k, x, l.buffer(), v, backward),
        Triangle::Blocks(b) => trsm_blocks(k, x, l.buffer(), b, backward),
    }
}
