//! The square matrix in a storage buffer that every inversion kernel works on.

use super::*;

/// An n x n matrix, row-major, in one storage buffer.
pub struct DeviceSquare {
    /// The buffer.
    pub buffer: Buffer<f32>,
    /// The order.
    pub n: usize,
}

impl DeviceSquare {
    /// Uploads `a` (square).
    pub fn upload(inv: &Inverter, a: &Matrix<f32>) -> Result<Self> {
        let n = a.rows();
        let buffer = inv.buffer_with(&format!("an order-{n} matrix"), a.as_slice())?;
        Ok(Self { buffer, n })
    }

    /// Uploads the lower triangle of `a` with NaN above it, so a read of the upper triangle
    /// would show in the result.
    pub fn upload_lower(inv: &Inverter, a: &Matrix<f32>) -> Result<Self> {
        let n = a.rows();
        let mut data = a.as_slice().to_vec();
        for i in 0..n {
            data[i * n + i + 1..(i + 1) * n].fill(f32::NAN);
        }
        let buffer = inv.buffer_with(&format!("an order-{n} matrix"), &data)?;
        Ok(Self { buffer, n })
    }

    /// The whole matrix as a view.
    pub fn view(&self) -> View {
        View::row_major(self.n, self.n)
    }

    /// `view` of the buffer.
    pub fn op(&self, view: View) -> Operand<'_> {
        Operand::new(&self.buffer, view)
    }

    /// Reads the matrix back.
    pub fn download(&self) -> Result<Matrix<f32>> {
        Matrix::from_row_major(
            self.n,
            self.n,
            self.buffer.download_range(0, self.n * self.n)?,
        )
    }
}
