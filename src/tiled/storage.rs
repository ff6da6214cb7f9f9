//! A symmetric matrix's lower triangle held in one storage buffer, in full row-major storage or
//! LAPACK's RFP (TRANSR = 'N', UPLO = 'L'), with the block views the factorization works on.

use super::kernels::Operand;
use super::view::{View, split_point};
use crate::error::{DeviceError, Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage, Context};
use crate::layout::rfp;
use crate::matrix::Matrix;

/// How the triangle is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// m x m row-major; the upper triangle is never read or written.
    Full,
    /// LAPACK's rectangular full packed array (TRANSR = 'N', UPLO = 'L'), m(m+1)/2 values.
    Rfp,
}

impl Storage {
    /// Values an order-m matrix needs.
    pub fn len(self, m: usize) -> usize {
        match self {
            Storage::Full => m * m,
            Storage::Rfp => rfp::len(m),
        }
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Full => "full",
            Storage::Rfp => "rfp",
        }
    }
}

/// A lower triangle split for the factorization: one square view (split anywhere), or the fixed
/// 2 x 2 blocks [B11; B21 B22] of RFP, B22 a transposed view (LAPACK's spftrf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    /// A square view, recursively split at [`split_point`].
    Square(View),
    /// Blocks B11 (n1 x n1), B21 (n2 x n1), B22 (n2 x n2).
    Blocks([View; 3]),
}

impl Triangle {
    /// The order.
    pub fn order(&self) -> usize {
        match self {
            Triangle::Square(v) => v.rows,
            Triangle::Blocks([b11, b21, _]) => b11.rows + b21.rows,
        }
    }

    /// The blocks to recurse on, or `None` for a square view of order ≤ nb (a leaf).
    pub fn split(&self, nb: usize) -> Option<[View; 3]> {
        match *self {
            Triangle::Square(v) if v.rows <= nb => None,
            Triangle::Square(v) => Some(v.split(split_point(v.rows, nb))),
            Triangle::Blocks(b) => Some(b),
        }
    }
}

/// The RFP array of order n (TRANSR = 'N', UPLO = 'L') as the blocks spftrf works on: L11 and
/// L21 column-major, L22 the transpose of the upper triangle in the array's top block.
pub fn rfp_blocks(n: usize) -> [View; 3] {
    if n.is_multiple_of(2) {
        let (k, ld) = (n / 2, n + 1);
        [
            View::col_major(1, k, k, ld),
            View::col_major(k + 1, k, k, ld),
            View::col_major(0, k, k, ld).t(),
        ]
    } else {
        let (n1, n2) = (n - n / 2, n / 2);
        [
            View::col_major(0, n1, n1, n),
            View::col_major(n1, n2, n1, n),
            View::col_major(n, n2, n2, n).t(),
        ]
    }
}

/// The most bytes one storage buffer may hold here: GL_MAX_SHADER_STORAGE_BLOCK_SIZE, and GL's
/// 32-bit buffer sizes through glow.
pub fn max_buffer_bytes(max_storage_block_bytes: u64) -> u64 {
    max_storage_block_bytes.min(i32::MAX as u64)
}

/// The largest order whose storage fits in `max_bytes`.
pub fn max_order(storage: Storage, max_bytes: u64) -> usize {
    let max_len = (max_bytes / 4) as usize;
    let mut m = (max_len as f64).sqrt() as usize * if storage == Storage::Rfp { 2 } else { 1 };
    while storage.len(m + 1) <= max_len {
        m += 1;
    }
    while m > 0 && storage.len(m) > max_len {
        m -= 1;
    }
    m
}

/// Refuses, before anything is allocated, `len` f32 values for `what` in one storage buffer
/// beyond `max_bytes` (naming the limit and the largest order in each storage).
pub fn check_fits(what: &str, len: usize, max_bytes: u64) -> Result<()> {
    let bytes = len as u64 * 4;
    if bytes <= max_bytes {
        return Ok(());
    }
    Err(Error::from(DeviceError::Unsupported {
        what: format!("hold {what} ({bytes} bytes) in one storage buffer"),
        why: format!(
            "one shader storage buffer holds at most {max_bytes} bytes here \
             (GL_MAX_SHADER_STORAGE_BLOCK_SIZE and 32-bit GL sizes); the largest symmetric \
             matrix is m = {} in full storage and m = {} in RFP",
            max_order(Storage::Full, max_bytes),
            max_order(Storage::Rfp, max_bytes)
        ),
    }))
}

/// The lower triangle of a symmetric m x m matrix in a storage buffer.
pub struct TiledMatrix {
    buffer: Buffer<f32>,
    order: usize,
    storage: Storage,
}

impl TiledMatrix {
    /// Allocates an order-m matrix whose contents are undefined (checked against `max_bytes`).
    pub fn uninitialized(
        ctx: &Context,
        m: usize,
        storage: Storage,
        max_bytes: u64,
    ) -> Result<Self> {
        let len = storage.len(m);
        check_fits(
            &format!("an order-{m} matrix in {} storage", storage.name()),
            len,
            max_bytes,
        )?;
        let buffer = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, len)?;
        Ok(Self {
            buffer,
            order: m,
            storage,
        })
    }

    /// Uploads the lower triangle of `c` (the upper one is not read; in full storage it goes up
    /// as NaN, so any read of it would show).
    pub fn from_lower(
        ctx: &Context,
        c: &Matrix<f32>,
        storage: Storage,
        max_bytes: u64,
    ) -> Result<Self> {
        let m = c.rows();
        let mut matrix = Self::uninitialized(ctx, m, storage, max_bytes)?;
        let data = match storage {
            Storage::Full => {
                let mut data = c.as_slice().to_vec();
                for i in 0..m {
                    data[i * m + i + 1..(i + 1) * m].fill(f32::NAN);
                }
                data
            }
            Storage::Rfp => rfp::from_lower(c)?,
        };
        matrix.buffer.upload(&data)?;
        Ok(matrix)
    }

    /// Wraps a buffer holding an RFP array of order m.
    pub fn from_rfp(ctx: &Context, m: usize, arf: &[f32], max_bytes: u64) -> Result<Self> {
        if arf.len() != rfp::len(m) {
            return Err(Error::from(crate::error::InputError::Length {
                what: "an RFP array".into(),
                n: m,
                expected: rfp::len(m),
                actual: arf.len(),
            }));
        }
        let mut matrix = Self::uninitialized(ctx, m, Storage::Rfp, max_bytes)?;
        matrix.buffer.upload(arf)?;
        Ok(matrix)
    }

    /// The order m.
    pub fn order(&self) -> usize {
        self.order
    }

    /// How it is stored.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// The buffer.
    pub fn buffer(&self) -> &Buffer<f32> {
        &self.buffer
    }

    /// Fills the whole buffer with `value` (NaN to poison it before a run).
    pub fn fill(&mut self, value: f32) -> Result<()> {
        let len = self.buffer.len();
        self.buffer.upload(&vec![value; len])
    }

    /// The whole matrix as a square view (full storage) or as RFP's blocks.
    pub fn triangle(&self) -> Triangle {
        match self.storage {
            Storage::Full => Triangle::Square(View::row_major(self.order, self.order)),
            Storage::Rfp => Triangle::Blocks(rfp_blocks(self.order)),
        }
    }

    /// `view` of this matrix's buffer.
    pub fn operand(&self, view: View) -> Operand<'_> {
        Operand::new(&self.buffer, view)
    }

    /// The lower triangle (upper triangle zero), read back.
    pub fn download_lower(&self) -> Result<Matrix<f32>> {
        let m = self.order;
        let data = self.buffer.download()?;
        match self.storage {
            Storage::Full => {
                let mut c = Matrix::from_row_major(m, m, data)?;
                for i in 0..m {
                    c.as_mut_slice()[i * m + i + 1..(i + 1) * m].fill(0.0);
                }
                Ok(c)
            }
            Storage::Rfp => rfp::to_lower_of_order(m, &data),
        }
    }

    /// The raw contents: row-major m x m, or the RFP array.
    pub fn download_raw(&self) -> Result<Vec<f32>> {
        self.buffer.download()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfp_blocks_address_entries_where_lapack_puts_them() {
        for n in 1..12 {
            let [b11, b21, b22] = rfp_blocks(n);
            let n1 = b11.rows;
            assert_eq!(n1 + b22.rows, n);
            assert_eq!((b21.rows, b21.cols), (b22.rows, n1));
            for i in 0..n {
                for j in 0..=i {
                    let at = if j < n1 && i < n1 {
                        b11.index(i, j)
                    } else if j < n1 {
                        b21.index(i - n1, j)
                    } else {
                        b22.index(i - n1, j - n1)
                    };
                    assert_eq!(at, rfp::index(n, i, j), "n {n} ({i},{j})");
                }
            }
        }
    }

    #[test]
    fn the_largest_orders_fit_and_one_more_does_not() {
        let bytes = 2_147_483_647u64;
        for s in [Storage::Full, Storage::Rfp] {
            let m = max_order(s, bytes);
            assert!(s.len(m) as u64 * 4 <= bytes && s.len(m + 1) as u64 * 4 > bytes);
            assert!(check_fits("x", s.len(m), bytes).is_ok());
            assert!(check_fits("x", s.len(m + 1), bytes).is_err());
        }
        assert_eq!(max_order(Storage::Full, bytes), 23170);
    }
}
