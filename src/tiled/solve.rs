//! Triangular solves with the Cholesky factor on the GPU for several right-hand sides at once:
//! L·Y = B, then Lᵀ·X = Y (section 2's forward and back substitution, blocked), so a solve runs
//! end to end on the device.

use super::cholesky::trsm_factor;
use super::kernels::{Operand, TiledKernels};
use super::storage::{TiledMatrix, check_fits};
use super::view::View;
use crate::error::{Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;

/// Right-hand sides on the GPU: an m x r row-major block.
pub struct DeviceRhs {
    buffer: Buffer<f32>,
    rows: usize,
    cols: usize,
}

impl DeviceRhs {
    /// Uploads B (m x r).
    pub fn upload(k: &TiledKernels, b: &Matrix<f32>, max_bytes: u64) -> Result<Self> {
        let (rows, cols) = b.shape();
        check_fits(
            &format!("{rows}x{cols} right-hand sides"),
            rows * cols,
            max_bytes,
        )?;
        let buffer = Buffer::new(
            k.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            b.as_slice(),
        )?;
        Ok(Self { buffer, rows, cols })
    }

    /// Reads X back.
    pub fn download(&self) -> Result<Matrix<f32>> {
        Matrix::from_row_major(self.rows, self.cols, self.buffer.download()?)
    }

    /// Bᵀ as a view: its rows are the right-hand sides.
    fn transposed(&self) -> Operand<'_> {
        Operand::new(&self.buffer, View::row_major(self.rows, self.cols).t())
    }
}

/// Overwrites B with X = (L·Lᵀ)⁻¹·B, L the factor in `l`.
pub fn solve_in_place(k: &TiledKernels, l: &TiledMatrix, b: &mut DeviceRhs) -> Result<()> {
    if b.rows != l.order() {
        return Err(Error::shape(format!(
            "the factor is {m}x{m}, so the right-hand sides need {m} rows, but have {}",
            b.rows,
            m = l.order()
        )));
    }
    // L·Y = B  ⇔  Yᵀ = Bᵀ·L⁻ᵀ;  Lᵀ·X = Y  ⇔  Xᵀ = Yᵀ·L⁻¹.
    trsm_factor(k, b.transposed(), l, false)?;
    trsm_factor(k, b.transposed(), l, true)?;
    k.check("the tiled triangular solves")
}
