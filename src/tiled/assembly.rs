//! C = A·diag(d)·Aᵀ into the lower triangle of a [`TiledMatrix`] (Algorithm 3 at tile
//! granularity): one launch of the product kernel over the lower tiles for full storage; for
//! RFP, straight into the packed array as its three blocks (C11 and C22 lower, C21 whole).

use super::kernels::{Operand, TiledKernels};
use super::parts::{Region, product};
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
    // Row stride of A in the buffer: cols, or cols rounded up to 4 for the texel kernels
    // (aligned rows are read four values per fetch). The padding holds zeros, in A and in d,
    // so the product runs over all lda columns (adding only zero terms) in fours.
    lda: usize,
}

impl DeviceProduct {
    /// Uploads A (m x n, row-major) and d (n).
    pub fn upload(k: &TiledKernels, a: &Matrix<f32>, d: &[f32], max_bytes: u64) -> Result<Self> {
        let (rows, cols) = a.shape();
        let lda = if k.config().texel && rows > 1 {
            cols.next_multiple_of(4)
        } else {
            cols
        };
        check_fits(&format!("A ({rows}x{cols})"), rows * lda, max_bytes)?;
        let ctx = k.context();
        let (padded, padded_d);
        let (values, d) = if lda == cols {
            (a.as_slice(), d)
        } else {
            let mut v = vec![0.0f32; rows * lda];
            for (row, src) in v.chunks_exact_mut(lda).zip(a.as_slice().chunks_exact(cols)) {
                row[..cols].copy_from_slice(src);
            }
            padded = v;
            padded_d = [d, &vec![0.0; lda - cols]].concat();
            (&padded[..], &padded_d[..])
        };
        Ok(Self {
            a: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, values)?,
            d: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, d)?,
            rows,
            lda,
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
        Ok(Self {
            a,
            d,
            rows,
            lda: cols,
        })
    }

    /// The order m of the product.
    pub fn order(&self) -> usize {
        self.rows
    }
}

/// Writes the lower triangle of A·diag(d)·Aᵀ into `c` (of order m); nothing else of `c` is
/// read or written. A split `c` is written piece by piece ([`product`]).
pub fn assemble(k: &TiledKernels, p: &DeviceProduct, c: &mut TiledMatrix) -> Result<()> {
    debug_assert_eq!(c.order(), p.rows);
    // All lda columns: the padding of A and d is zero.
    let a = View::row_major(p.rows, p.lda);
    let op_a = |v: View| Region::from(Operand::new(&p.a, v));
    let d = Some(&p.d);
    match c.triangle() {
        Triangle::Square(v) => product(k, c.region(v), op_a(a), op_a(a), d, 1.0, 0.0, Some(0))?,
        Triangle::Blocks([c11, c21, c22]) => {
            let n1 = c11.rows;
            let a1 = a.sub(0, 0, n1, p.lda);
            let a2 = a.sub(n1, 0, p.rows - n1, p.lda);
            product(k, c.region(c11), op_a(a1), op_a(a1), d, 1.0, 0.0, Some(0))?;
            product(k, c.region(c21), op_a(a2), op_a(a1), d, 1.0, 0.0, None)?;
            product(k, c.region(c22), op_a(a2), op_a(a2), d, 1.0, 0.0, Some(0))?;
        }
    }
    k.check("the tiled assembly")
}

/// Adds `sigma` to the diagonal of `c` (C + σ·I: a shift that makes a low-rank A·D·Aᵀ
/// positive definite), on the GPU as σ·1·1ᵀ products onto the diagonal's strided views.
pub fn add_to_diagonal(k: &TiledKernels, c: &mut TiledMatrix, sigma: f32) -> Result<()> {
    let m = c.order();
    let ones = Buffer::new(
        k.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        &vec![1.0f32; m.max(1)],
    )?;
    let diagonal = |v: View| View {
        offset: v.offset,
        rs: v.rs + v.cs,
        cs: 1,
        rows: v.rows,
        cols: 1,
    };
    let blocks = match c.triangle() {
        Triangle::Square(v) => vec![v],
        Triangle::Blocks([b11, _, b22]) => vec![b11, b22],
    };
    for v in blocks {
        let one = |rows| Region::from(Operand::new(&ones, View::row_major(rows, 1)));
        let dv = diagonal(v);
        product(k, c.region(dv), one(v.rows), one(1), None, sigma, 1.0, None)?;
    }
    k.check("adding to the diagonal")
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
