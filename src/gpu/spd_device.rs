//! The SPD solve's f64 data on the GPU: C's stored triangle goes up once in f64, packed by
//! rows (the bytes of an f32 square); the f32 copy that the tiled Cholesky factors is made
//! from it there, and every refinement step's residual b − C·x is formed there in f64
//! (Algorithm 1's residual on the device, as the least-squares solve's), so that after the
//! upload only vectors cross the bus.

use crate::double::kernels::DoubleKernels;
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::layout::by_rows::runs;
use crate::matrix::Element;
use crate::symmetric::{SymmetricView, Triangle};
use std::rc::Rc;

/// C's stored triangle and b on the GPU in f64, with the vectors of the residual.
pub(crate) struct SpdDevice {
    kernels: Rc<DoubleKernels>,
    packed: Buffer<f64>,
    b: Buffer<f64>,
    x: Buffer<f64>,
    r: Buffer<f64>,
    n: usize,
    upper: bool,
}

impl SpdDevice {
    /// Uploads C's stored triangle (read where it lies, row by row over all cores, an f32 C
    /// widened as it is copied) and b. Refused before anything is allocated where the
    /// triangle exceeds one storage buffer.
    pub(crate) fn upload<T: Element>(
        kernels: Rc<DoubleKernels>,
        c: &SymmetricView<'_, T>,
        b: &[f64],
    ) -> Result<Self> {
        let n = c.order();
        let upper = c.triangle() == Triangle::Upper;
        let len = n * (n + 1) / 2;
        kernels.check_fits("C's triangle in f64", len)?;
        kernels.spd_programs()?;
        let ctx = kernels.context().clone();
        let packed = Buffer::filled(
            &ctx,
            BufferTarget::Storage,
            BufferUsage::Static,
            len,
            |first, out| {
                runs(n, upper, first, out.len(), |i, k, at, take| {
                    let from = &c.packed_row(i)[k..k + take];
                    for (slot, &v) in out[at..at + take].iter_mut().zip(from) {
                        *slot = v.into();
                    }
                });
            },
        )?;
        let storage =
            |data: &[f64]| Buffer::new(&ctx, BufferTarget::Storage, BufferUsage::Static, data);
        let b = storage(b)?;
        let x = storage(&vec![0.0; n.max(1)])?;
        let r = storage(&vec![0.0; n.max(1)])?;
        Ok(Self {
            kernels,
            packed,
            b,
            x,
            r,
            n,
            upper,
        })
    }

    /// `single` (full storage of order n in one buffer) ← 2^exponent·C rounded to f32 in its
    /// lower triangle, NaN above.
    pub(crate) fn single_into(&self, single: &Buffer<f32>, exponent: i32) -> Result<()> {
        self.kernels
            .spd_unpack(&self.packed, self.n, self.upper, single, exponent)
    }

    /// b − C·x in f64, formed on the GPU.
    pub(crate) fn residual(&self, x: &[f64]) -> Result<Vec<f64>> {
        self.x.write(0, x)?;
        self.kernels.spd_residual(
            &self.packed,
            self.n,
            self.upper,
            (&self.b, &self.x, &self.r),
        )?;
        self.r.download_range(0, self.n)
    }
}
