//! C = A·diag(d)·Aᵀ into the lower triangle of a [`TiledMatrix`] (Algorithm 3 at tile
//! granularity): one launch of the product kernel over the lower tiles for full storage; for
//! RFP, straight into the packed array as its three blocks (C11 and C22 lower, C21 whole).

use super::kernels::{DEPTH_PER_LAUNCH, Operand, TiledKernels};
use super::parts::{Region, product};
use super::product::{Product, Update};
use super::storage::{Storage, TiledMatrix, Triangle, check_fits};
use super::view::View;
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;

/// A and d on the GPU, as blocks of A's columns each in its own storage buffers (one block
/// where A fits one buffer): n, the number of observations, is bounded by memory alone.
pub struct DeviceProduct {
    blocks: Vec<ColumnBlock>,
    rows: usize,
}

/// Some consecutive columns of A (row-major) and their entries of d.
struct ColumnBlock {
    a: Buffer<f32>,
    d: Buffer<f32>,
    // Row stride of A in the buffer: the block's width, or that rounded up to 4 for the texel
    // kernels (aligned rows are read four values per fetch). The padding holds zeros, in A and
    // in d, so the product runs over all lda columns (adding only zero terms) in fours.
    lda: usize,
    // Whether every entry of d is ≥ 0 (checked on upload; NaN is not): then A·√d may be
    // packed once for both operands (`PanelVariant::root_d`).
    d_nonnegative: bool,
}

impl DeviceProduct {
    /// Uploads A (m x n, row-major) and d (n), A's columns cut into blocks of at most
    /// `max_bytes` each (a multiple of 4 columns).
    pub fn upload(k: &TiledKernels, a: &Matrix<f32>, d: &[f32], max_bytes: u64) -> Result<Self> {
        let (rows, cols) = a.shape();
        let pad = k.config().texel && rows > 1;
        let max_cols = (max_bytes / 4 / rows.max(1) as u64) as usize / 4 * 4;
        // Not even four columns fit one buffer: the one-buffer error, naming the limit.
        let width = if max_cols == 0 {
            cols
        } else {
            block_width(cols, max_cols)
        };
        let ctx = k.context();
        let mut blocks = Vec::new();
        for c0 in (0..cols).step_by(width.max(1)) {
            let w = (cols - c0).min(width);
            let lda = if pad { w.next_multiple_of(4) } else { w };
            check_fits(&format!("A ({rows}x{cols})"), rows * lda, max_bytes)?;
            let mut values = vec![0.0f32; rows * lda];
            for (row, src) in values
                .chunks_exact_mut(lda)
                .zip(a.as_slice().chunks_exact(cols))
            {
                row[..w].copy_from_slice(&src[c0..c0 + w]);
            }
            let mut dv = vec![0.0f32; lda];
            dv[..w].copy_from_slice(&d[c0..c0 + w]);
            blocks.push(ColumnBlock {
                a: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &values)?,
                d: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &dv)?,
                lda,
                d_nonnegative: dv.iter().all(|&x| x >= 0.0),
            });
        }
        Ok(Self { blocks, rows })
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
        let d_nonnegative = d.iter().all(|&x| x >= 0.0);
        let d = Buffer::new(k.context(), BufferTarget::Storage, BufferUsage::Static, d)?;
        Ok(Self {
            blocks: vec![ColumnBlock {
                a,
                d,
                lda: cols,
                d_nonnegative,
            }],
            rows,
        })
    }

    /// The order m of the product.
    pub fn order(&self) -> usize {
        self.rows
    }

    /// How many buffers hold A (its column blocks).
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }
}

/// The width of A's column blocks where one buffer holds at most `max_cols` columns (a
/// positive multiple of 4): as many blocks as needed, of equal width rounded up to whole
/// depth launches ([`DEPTH_PER_LAUNCH`]) where a buffer holds one, else to 4. Widths cut to
/// the buffer's limit left a sliver (m = 16384, n = 32768: 32764 columns, then 4, a third pass
/// over C and two depth launches for the first block); equal blocks of whole launches cut the
/// sums where one buffer's launches do, so the bits are those of one buffer.
pub fn block_width(cols: usize, max_cols: usize) -> usize {
    if cols <= max_cols {
        return cols;
    }
    let (unit, most) = if max_cols >= DEPTH_PER_LAUNCH {
        (DEPTH_PER_LAUNCH, max_cols / DEPTH_PER_LAUNCH * DEPTH_PER_LAUNCH)
    } else {
        (4, max_cols)
    };
    cols.div_ceil(cols.div_ceil(most)).next_multiple_of(unit)
}

/// Writes the lower triangle of A·diag(d)·Aᵀ into `c` (of order m); nothing else of `c` is
/// read or written. A split `c` is written piece by piece ([`product`]); A's column blocks
/// add onto it one after another.
pub fn assemble(k: &TiledKernels, p: &DeviceProduct, c: &mut TiledMatrix) -> Result<()> {
    debug_assert_eq!(c.order(), p.rows);
    for (i, block) in p.blocks.iter().enumerate() {
        // The first block replaces C (not read), the others add onto it.
        let update = if i == 0 {
            Update::Replace
        } else {
            Update::Accumulate
        };
        // All lda columns: the padding of A and d is zero.
        let a = View::row_major(p.rows, block.lda);
        let op_a = |v: View| Region::from(Operand::new(&block.a, v));
        let d = Some(&block.d);
        match c.triangle() {
            Triangle::Square(v) => product(
                k,
                Product::new(c.region(v), op_a(a), op_a(a))
                    .scaled(d)
                    .nonnegative(block.d_nonnegative)
                    .update(update)
                    .lower(),
            )?,
            Triangle::Blocks([c11, c21, c22]) => {
                let n1 = c11.rows;
                let a1 = a.sub(0, 0, n1, block.lda);
                let a2 = a.sub(n1, 0, p.rows - n1, block.lda);
                product(
                    k,
                    Product::new(c.region(c11), op_a(a1), op_a(a1))
                        .scaled(d)
                        .nonnegative(block.d_nonnegative)
                        .update(update)
                        .lower(),
                )?;
                product(
                    k,
                    Product::new(c.region(c21), op_a(a2), op_a(a1))
                        .scaled(d)
                        .nonnegative(block.d_nonnegative)
                        .update(update),
                )?;
                product(
                    k,
                    Product::new(c.region(c22), op_a(a2), op_a(a2))
                        .scaled(d)
                        .nonnegative(block.d_nonnegative)
                        .update(update)
                        .lower(),
                )?;
            }
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
        product(
            k,
            Product::new(c.region(dv), one(v.rows), one(1)).update(Update::Scaled {
                alpha: sigma,
                beta: 1.0,
            }),
        )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_blocks_are_equal_whole_launches_within_the_limit() {
        // m = 16384, n = 32768 on a 2 GiB - 1 buffer: two blocks of 16384, not 32764 + 4.
        let max_cols = (i32::MAX as usize / 4 / 16384) / 4 * 4;
        assert_eq!(block_width(32768, max_cols), 16384);
        assert_eq!(block_width(1000, 4096), 1000);
        // Below one launch: equal blocks of whole fours, none wider than the limit.
        for (cols, max) in [(10, 4), (1001, 100), (65537, 16380), (300_003, 65_536)] {
            let w = block_width(cols, max);
            assert!(w <= max && w.is_multiple_of(4), "{cols} {max}: {w}");
            assert_eq!(cols.div_ceil(w), cols.div_ceil(max), "{cols} {max}: {w}");
        }
        assert_eq!(block_width(300_003, 65_536), 65_536);
        assert_eq!(block_width(50_000, 20_000), 16_384);
    }
}
