//! The SPD solve's data on the GPU: C's stored triangle goes up once, packed by rows, in f64
//! (an f32 C in its own f32 values, half the bytes); the f32 copy that the tiled Cholesky
//! factors is made from it there, and every refinement step's residual b − C·x is formed
//! there in f64 (Algorithm 1's residual on the device, as the least-squares solve's), so that
//! after the upload only vectors cross the bus.

use super::spd_direct::StepResidual;
use crate::double::kernels::{DoubleKernels, Packed};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::layout::by_rows::runs;
use crate::matrix::Element;
use crate::symmetric::{SymmetricView, Triangle};
use std::rc::Rc;

/// C's stored triangle and b on the GPU, with the vectors of the residual.
pub(crate) struct SpdDevice {
    kernels: Rc<DoubleKernels>,
    packed: Packed,
    b: Buffer<f64>,
    x: Buffer<f64>,
    r: Buffer<f64>,
    n: usize,
    upper: bool,
}

impl SpdDevice {
    /// Uploads C's stored triangle (read where it lies, row by row over all cores; an f32 C
    /// as it is, an f64 C in f64) and b, for a factor in f32 or (`double`) in f64. Refused
    /// before anything is allocated where the triangle exceeds one storage buffer.
    pub(crate) fn upload<T: Element>(
        kernels: Rc<DoubleKernels>,
        c: &SymmetricView<'_, T>,
        b: &[f64],
        double: bool,
    ) -> Result<Self> {
        let n = c.order();
        let upper = c.triangle() == Triangle::Upper;
        let len = n * (n + 1) / 2;
        let single = !T::DOUBLE;
        match single {
            true => kernels.check_fits("C's triangle in f32", len.div_ceil(2))?,
            false => kernels.check_fits("C's triangle in f64", len)?,
        }
        kernels.spd_programs(single, double)?;
        let ctx = kernels.context().clone();
        fn filled<T: Element, U: crate::gl::Pod>(
            ctx: &crate::gl::Context,
            c: &SymmetricView<'_, T>,
            upper: bool,
            len: usize,
            to: impl Fn(T) -> U + Sync,
        ) -> Result<Buffer<U>> {
            let n = c.order();
            Buffer::filled(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                len,
                |first, out| {
                    runs(n, upper, first, out.len(), |i, k, at, take| {
                        let from = &c.packed_row(i)[k..k + take];
                        for (slot, &v) in out[at..at + take].iter_mut().zip(from) {
                            *slot = to(v);
                        }
                    });
                },
            )
        }
        // An f32 C's values come back from f64 exactly.
        let packed = match single {
            true => Packed::Single(filled(&ctx, c, upper, len, |v| v.into() as f32)?),
            false => Packed::Double(filled(&ctx, c, upper, len, |v| v.into())?),
        };
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

    /// `square` (order n, row-major) ← 2^exponent·C in f64 in its lower triangle, NaN above.
    pub(crate) fn double_into(&self, square: &Buffer<f64>, exponent: i32) -> Result<()> {
        self.kernels
            .spd_unpack_double(&self.packed, self.n, self.upper, square, exponent)
    }

    /// b − C·x in f64, formed on the GPU.
    pub(crate) fn residual(&self, x: &[f64]) -> Result<Vec<f64>> {
        self.x.write(0, x)?;
        self.residual_at((&self.x, 0), (&self.r, 0))?;
        self.r.download_range(0, self.n)
    }

    /// r ← b − C·x in f64 on the GPU, x and r the n entries from the given offsets of their
    /// buffers; not waited on.
    pub(crate) fn residual_at(
        &self,
        x: (&Buffer<f64>, usize),
        r: (&Buffer<f64>, usize),
    ) -> Result<()> {
        self.kernels
            .spd_residual(&self.packed, self.n, self.upper, &self.b, x, r)
    }
}

impl StepResidual for SpdDevice {
    fn residual_at(&self, x: (&Buffer<f64>, usize), r: (&Buffer<f64>, usize)) -> Result<()> {
        SpdDevice::residual_at(self, x, r)
    }

    fn residual_of(&self, x: &[f64], r: (&Buffer<f64>, usize)) -> Result<()> {
        self.x.write(0, x)?;
        SpdDevice::residual_at(self, (&self.x, 0), r)
    }
}
