//! The pivoted panel of the general inverses (LU and Gauss-Jordan): LU with partial pivoting of
//! the rows k0 .. n of b columns, blocked in leaves of at most [`LEAF`] columns. A leaf costs
//! one dispatch per column (glsl/inverse/leaf.comp: the pivot found from the previous
//! dispatch's per-group maxima, the rows updated in place, nothing moved) and two that move the
//! chosen rows into place across all n columns (glsl/inverse/permute.comp, LAPACK's row
//! interchanges); the panel's columns right of a leaf are updated by a triangular solve and
//! one product. The pivots are LAPACK's: row q was swapped with `piv[q]` at step q, whole
//! rows, the largest |candidate| (the smallest row on ties).

use super::kernels::{CopyMode, DeviceSquare, Inverter};
use crate::error::Result;
use crate::gl::Buffer;
use crate::tiled::Product;
use crate::tiled::cholesky::trsm;
use crate::tiled::{Operand, View};

/// The most columns of a leaf (the kernels' shared arrays hold 32 pivot-row values).
pub const LEAF: usize = 32;

/// Rows per work group of the leaf's column steps.
const LEAF_GROUP_ROWS: usize = 256;

/// Workspace of the pivoted sweeps.
pub struct PivotWork {
    /// Row swapped with row p at step p (LAPACK's ipiv, 0-based).
    pub piv: Buffer<u32>,
    /// A b x n copy of the panel's block row (Gauss-Jordan), or L11 with its unit diagonal (LU).
    pub row_block: Buffer<f32>,
    /// Two b x b workspaces (the Gauss-Jordan panel's L11⁻¹ and A11⁻¹).
    pub square: Buffer<f32>,
    /// The per-group pivot candidates, (|value|, row) as bits, written and read alternately.
    pub candidates: [Buffer<[u32; 2]>; 2],
    /// The rows chosen as pivots in the current leaf.
    pub chosen: Buffer<u32>,
    /// The rows the leaf's interchanges move (2·[`LEAF`] rows of n).
    pub moved: Buffer<f32>,
    /// The block size b.
    pub block: usize,
    /// Partial pivoting (true); false for the LU of an SPD matrix, whose pivots are then its
    /// Cholesky pivots (a non-positive one fails).
    pub pivoting: bool,
}

impl PivotWork {
    /// Workspace for order n with block size b.
    pub fn new(inv: &Inverter, n: usize, block: usize) -> Result<Self> {
        let groups = n.div_ceil(LEAF_GROUP_ROWS).max(1);
        let candidates = || inv.pair_buffer(groups);
        Ok(Self {
            piv: inv.index_buffer(n)?,
            row_block: inv.buffer("a block row", block * n)?,
            square: inv.buffer("the panel's inverses", 2 * block * block)?,
            candidates: [candidates()?, candidates()?],
            chosen: inv.index_buffer(LEAF)?,
            moved: inv.buffer("the rows a leaf moves", 2 * LEAF * n)?,
            block,
            pivoting: true,
        })
    }
}

/// One leaf of a pivoted panel: columns `c0 .. c0 + width` of the order-`n` matrix, rows
/// `c0 .. n` (its column steps and its row interchanges).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// The matrix's order.
    pub n: usize,
    /// The leaf's first column (and first row).
    pub c0: usize,
    /// Its columns, at most [`LEAF`].
    pub width: usize,
    /// A pivot at or below this (in magnitude when pivoting) fails.
    pub tol: f32,
    /// Partial pivoting (false: the diagonal is the pivot).
    pub pivoting: bool,
}

impl Leaf {
    /// Work groups of a column step.
    pub fn groups(&self) -> usize {
        (self.n - self.c0).div_ceil(LEAF_GROUP_ROWS)
    }
}

/// Factors P·[A11; A21] = [L11; L21]·U11 in place for columns k0 .. k0+b and rows k0 .. n of
/// `a` (whole rows interchanged; L unit lower below the diagonal, U on and above), the pivots
/// into `w.piv[k0 .. k0+b]`, a failing pivot flagged in the status word.
pub fn factor_panel(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    tol: f32,
) -> Result<()> {
    let end = k0 + b;
    let mut c0 = k0;
    while c0 < end {
        let leaf = Leaf {
            n: a.n,
            c0,
            width: LEAF.min(end - c0),
            tol,
            pivoting: w.pivoting,
        };
        inv.leaf_start(&a.buffer, leaf, w)?;
        for p in c0..c0 + leaf.width {
            inv.leaf_step(&a.buffer, leaf, p, w)?;
        }
        inv.leaf_interchanges(&a.buffer, leaf, w)?;
        update_right(inv, a, w, c0, leaf.width, end)?;
        c0 += leaf.width;
    }
    Ok(())
}

/// After the factored columns k0 .. k0+b: A12 := L11⁻¹·A12 and A22 −= L21·A12 for the columns
/// k0+b .. `end` (rows k0 .. n).
pub fn update_right(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    end: usize,
) -> Result<()> {
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let cols = end - k0 - b;
    if cols == 0 {
        return Ok(());
    }
    let rows = n - k0 - b;
    // L11 with its unit diagonal, into the row-block workspace.
    let lv = View::row_major(b, b);
    inv.copy(
        Operand::new(&w.row_block, lv),
        a.op(v.sub(k0, k0, b, b)),
        CopyMode::UnitLower,
        1.0,
    )?;
    let a12 = v.sub(k0, k0 + b, b, cols);
    // A12ᵀ ← A12ᵀ·L11⁻ᵀ, i.e. A12 := L11⁻¹·A12.
    trsm(k, a.op(a12.t()), &w.row_block, lv, false)?;
    if rows > 0 {
        k.gemm(
            Product::new(
                a.op(v.sub(k0 + b, k0 + b, rows, cols)),
                a.op(v.sub(k0 + b, k0, rows, b)),
                a.op(a12.t()),
            )
            .subtract(),
        )?;
    }
    Ok(())
}
