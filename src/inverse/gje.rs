//! General inverse by blocked Gauss-Jordan elimination with partial pivoting (Benner et al.
//! Fig 3 left, after Quintana-Ortí et al.): per block of b columns, the panel [A01; A11; A21]
//! is transformed column by column on the GPU (pivot search and whole-row swaps, then the
//! Gauss-Jordan step), then the six products A00 += A01·A10, A20 += A21·A10, A10 := A11·A10,
//! A02 += A01·A12, A22 += A21·A12, A12 := A11·A12 (block row 1 copied first, as the last
//! product of each pair overwrites it). 2s³ flops, one sweep; the inverse of PA is in place
//! and the columns are unscrambled on download.

use super::kernels::{CopyMode, DeviceSquare, Inverter};
use crate::error::Result;
use crate::gl::Buffer;
use crate::tiled::Product;
use crate::tiled::{Operand, View};

/// Workspace of the pivoted sweeps: saved column/row, pivots, copied block row.
pub struct PivotWork {
    /// Column p and row p's panel part.
    pub saved: Buffer<f32>,
    /// Row swapped with row p at step p.
    pub piv: Buffer<u32>,
    /// A b x n copy of the panel's block row.
    pub row_block: Buffer<f32>,
    /// The block size b.
    pub block: usize,
    /// Partial pivoting (true); false for the LU of an SPD matrix, whose pivots are then its
    /// Cholesky pivots (a non-positive one fails).
    pub pivoting: bool,
}

impl PivotWork {
    /// Pivots and eliminates the panel's b columns from k0 one by one on the GPU: the panel
    /// of Gauss-Jordan (`lu` false: every row) or of LU (`lu` true: the rows below the pivot).
    #[allow(clippy::too_many_arguments)]
    pub fn eliminate_panel(
        &self,
        inv: &Inverter,
        a: &Buffer<f32>,
        n: usize,
        k0: usize,
        b: usize,
        tol: f32,
        lu: bool,
    ) -> Result<()> {
        for p in k0..k0 + b {
            inv.pivot(a, n, p, k0, b, &self.saved, &self.piv, tol, self.pivoting)?;
            inv.panel_step(a, n, p, k0, b, &self.saved, lu)?;
        }
        Ok(())
    }

    /// Workspace for order n with block size b.
    pub fn new(inv: &Inverter, n: usize, block: usize) -> Result<Self> {
        Ok(Self {
            saved: inv.buffer("the saved pivot column", n + block)?,
            piv: inv.index_buffer(n)?,
            row_block: inv.buffer("a block row", block * n)?,
            block,
            pivoting: true,
        })
    }
}

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
        w.eliminate_panel(inv, buf, n, k0, b, tol, false)?;
        let r = n - k0 - b;
        let wv = View::row_major(b, n);
        inv.copy(
            Operand::new(&w.row_block, wv),
            op(v.sub(k0, 0, b, n)),
            CopyMode::Copy,
            1.0,
        )?;
        let t01 = op(v.sub(0, k0, k0, b));
        let t11 = op(v.sub(k0, k0, b, b));
        let t21 = op(v.sub(k0 + b, k0, r, b));
        for (j0, width) in [(0, k0), (k0 + b, r)] {
            if width == 0 {
                continue;
            }
            let w1 = Operand::new(&w.row_block, wv.sub(0, j0, b, width).t());
            k.gemm(Product::new(op(v.sub(0, j0, k0, width)), t01, w1).accumulate())?;
            k.gemm(Product::new(op(v.sub(k0 + b, j0, r, width)), t21, w1).accumulate())?;
            k.gemm(Product::new(op(v.sub(k0, j0, b, width)), t11, w1))?;
        }
        k0 += b;
    }
    Ok(())
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
