//! C = A·diag(d)·Aᵀ into the lower triangle of a [`TiledMatrix`] (Algorithm 3 at tile
//! granularity): one launch of the product kernel over the lower tiles for full storage; for
//! RFP, straight into the packed array as its three blocks (C11 and C22 lower, C21 whole).

use super::kernels::{Operand, TiledKernels};
use super::storage::{Storage, TiledMatrix, Triangle, check_fits};
use super::view::View;
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;

/// A and d on the GPU.
pub struct DeviceProduct {
    a: Buffer<f32>,
    d: Buffer<f32>,
    rows: usize,
    cols: usize,
}

impl DeviceProduct {
    /// Uploads A (m x n, row-major) and d (n).
    pub fn upload(k: &TiledKernels, a: &Matrix<f32>, d: &[f32], max_bytes: u64) -> Result<Self> {
        let (rows, cols) = a.shape();
        check_fits(&format!("A ({rows}x{cols})"), rows * cols, max_bytes)?;
        let ctx = k.context();
        Ok(Self {
            a: Buffer::new(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                a.as_slice(),
            )?,
            d: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, d)?,
            rows,
            cols,
        })
    }

    /// Wraps A (rows x cols, row-major) already on the GPU and uploads d (n).
    pub fn on_device(
        k: &TiledKernels,
        a: Buffer<f32>,
        d: &[f32],
        (rows, cols): (usize, usize),
    ) -> Result<Self> {
        assert_eq!(a.len(), rows * cols, "A's buffer holds rows x cols values");
        assert_eq!(d.len(), cols, "d has one entry per column of A");
        let d = Buffer::new(k.context(), BufferTarget::Storage, BufferUsage::Static, d)?;
        Ok(Self { a, d, rows, cols })
    }

    /// The order m of the product.
    pub fn order(&self) -> usize {
        self.rows
    }
}

/// Writes the lower triangle of A·diag(d)·Aᵀ into `c` (of order m); nothing else of `c` is
/// read or written.
pub fn assemble(k: &TiledKernels, p: &DeviceProduct, c: &mut TiledMatrix) -> Result<()> {
    debug_assert_eq!(c.order(), p.rows);
    let a = View::row_major(p.rows, p.cols);
    let op_a = |v: View| Operand::new(&p.a, v);
    let d = Some(&p.d);
    match c.triangle() {
        Triangle::Square(v) => k.gemm(c.operand(v), op_a(a), op_a(a), d, 1.0, 0.0, true)?,
        Triangle::Blocks([c11, c21, c22]) => {
            let n1 = c11.rows;
            let a1 = a.sub(0, 0, n1, p.cols);
            let a2 = a.sub(n1, 0, p.rows - n1, p.cols);
            k.gemm(c.operand(c11), op_a(a1), op_a(a1), d, 1.0, 0.0, true)?;
            k.gemm(c.operand(c21), op_a(a2), op_a(a1), d, 1.0, 0.0, false)?;
            k.gemm(c.operand(c22), op_a(a2), op_a(a2), d, 1.0, 0.0, true)?;
        }
    }
    k.check("the tiled assembly")
}

/// Allocates C in `storage` and assembles it.
pub fn assemble_new(
    k: &TiledKernels,
    p: &DeviceProduct,
    storage: Storage,
    max_bytes: u64,
) -> Result<TiledMatrix> {
    let mut c = TiledMatrix::uninitialized(k.context(), p.rows, storage, max_bytes)?;
    assemble(k, p, &mut c)?;
    Ok(c)
}
