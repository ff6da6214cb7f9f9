//! Solves with C through an f64 factor on the GPU, for the SPD solve's x⁰ and corrections:
//! C' = 2^e·C = L̃·L̃ᵀ by the chained Cholesky (dpotrf), Z = L̃⁻¹ by the chained triangular
//! inverse, then each solve two f64 triangular products (glsl/double/trmv.comp),
//! C⁻¹·V = 2^e·Zᵀ·(Z·V): no chain of dependent steps per solve, and several right sides cost
//! about one's time.

use super::chain::{self, FailedPivot};
use super::inverse::TRIANGULAR_CHAIN_UP_TO;
use super::kernels::{CHAIN_TILE, DoubleKernels};
use crate::error::{Error, NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::scaling::pivot_in_units;
use std::cell::RefCell;

/// Columns of the right sides' buffers: a step's residual, the condition estimate's vector
/// beside it, and x⁰'s three (one launch each way takes them all).
pub(crate) const SIDES: usize = super::kernels::TRMV_SIDES;

/// Z = L̃⁻¹ of C' = 2^e·C on the GPU, and the buffers its solves run in: V (the right sides),
/// Y = Z·V and W = C⁻¹·V, each n x [`SIDES`] with its columns contiguous.
pub(crate) struct InverseFactor<'k> {
    kernels: &'k DoubleKernels,
    /// L̃ (lower triangle), the diagonal tiles' inverses, and Z.
    l: Buffer<f64>,
    inv: Buffer<f64>,
    z: Buffer<f64>,
    n: usize,
    exponent: i32,
    spins: usize,
    /// The two chains' sync words until [`InverseFactor::settle`] has read them.
    queued: RefCell<Option<[Buffer<u32>; 2]>>,
    vs: Buffer<f64>,
    ys: Buffer<f64>,
    ws: Buffer<f64>,
}

impl<'k> InverseFactor<'k> {
    /// Whether the GPU runs this solver at order n for C' = 2^exponent·C: both chained
    /// launches take order n, and 2^exponent is a normal f64.
    pub(crate) fn runs(kernels: &DoubleKernels, n: usize, exponent: i32) -> bool {
        n <= TRIANGULAR_CHAIN_UP_TO
            && exponent.abs() <= 1000
            && chain::spin_limit(kernels, n).is_some()
            && kernels.check_fits("Z", n * n).is_ok()
    }

    /// Queues the factor of C' = 2^exponent·C (exponent even), held in the lower triangle of
    /// `square` (order n, row-major, consumed), and Z = L̃⁻¹ after it, neither waited on:
    /// solves may be queued behind them before [`InverseFactor::settle`] reads their sync
    /// words, so that the GPU runs the factor, Z and the first solves with no wait between.
    /// `given_up` marks the factor's and Z's chains as given up before they run (the tests'
    /// way onto the relaunches). Needs [`InverseFactor::runs`].
    pub(crate) fn queue(
        kernels: &'k DoubleKernels,
        square: Buffer<f64>,
        n: usize,
        exponent: i32,
        given_up: [bool; 2],
    ) -> Result<Self> {
        let ctx = kernels.context();
        let storage = |len: usize| {
            Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len)
        };
        let spins = chain::spin_limit(kernels, n).ok_or_else(|| {
            crate::Error::shape(format!("no chained f64 Cholesky of order {n} on this GPU"))
        })?;
        let f = Self {
            kernels,
            l: square,
            inv: storage(n * CHAIN_TILE)?,
            z: storage(n * n)?,
            n,
            exponent,
            spins,
            queued: RefCell::new(None),
            vs: storage(n * SIDES)?,
            ys: storage(n * SIDES)?,
            ws: storage(n * SIDES)?,
        };
        let factor = chain::start(kernels, n, given_up[0], &|sync| f.launch_factor(sync))?;
        let inverse = chain::start(kernels, n, given_up[1], &|sync| f.launch_inverse(sync))?;
        *f.queued.borrow_mut() = Some([factor, inverse]);
        Ok(f)
    }

    fn launch_factor(&self, sync: &Buffer<u32>) -> Result<()> {
        self.kernels
            .potrf_chain(&self.l, &self.inv, sync, self.n, self.spins)
    }

    fn launch_inverse(&self, sync: &Buffer<u32>) -> Result<()> {
        self.kernels
            .trtri_chain((&self.l, &self.inv, &self.z), sync, self.n, self.spins)
    }

    /// Waits for the factor and Z (once; later calls return false at once). Where a work
    /// group of either chain gave up (software renderers' loop limits), it is launched again
    /// until done, and Z formed anew after a factor finished so: then whatever the caller
    /// queued behind them read an unfinished Z, and true says to queue it again. A pivot
    /// that is not positive is
    /// [`NumericalError::NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite), its
    /// value in C's units.
    pub(crate) fn settle(&self) -> Result<bool> {
        let Some([factor, inverse]) = self.queued.borrow_mut().take() else {
            return Ok(false);
        };
        let (n, k) = (self.n, self.kernels);
        let (head, again) = chain::settle(&factor, n, "Cholesky", &|s| self.launch_factor(s))?;
        if let Some(FailedPivot { column, pivot }) = chain::failed_pivot(&head) {
            let e = Error::from(NumericalError::NotPositiveDefinite { column, pivot });
            return Err(pivot_in_units(e, |_| self.exponent / 2));
        }
        if again {
            chain::inverse(k, (&self.l, &self.inv, &self.z), n, self.spins, false)?;
            return Ok(true);
        }
        let (_, again) = chain::settle(&inverse, n, "triangular inverse", &|s| {
            self.launch_inverse(s)
        })?;
        Ok(again)
    }

    /// V, whose columns the caller writes (from the host, or a residual on the GPU).
    pub(crate) fn sides(&self) -> &Buffer<f64> {
        &self.vs
    }

    /// W, where [`InverseFactor::launch`] leaves C⁻¹·V.
    pub(crate) fn solutions(&self) -> &Buffer<f64> {
        &self.ws
    }

    /// Queues W's columns `first..first + count` ← C⁻¹ times V's same columns (not waited on):
    /// Y = Z·V, then W = 2^e·Zᵀ·Y.
    pub(crate) fn launch(&self, first: usize, count: usize) -> Result<()> {
        let (n, k) = (self.n, self.kernels);
        let at = first * n;
        k.trmv(
            (&self.z, n),
            false,
            (&self.vs, at),
            (&self.ys, at),
            count,
            0,
        )?;
        k.trmv(
            (&self.z, n),
            true,
            (&self.ys, at),
            (&self.ws, at),
            count,
            self.exponent,
        )
    }

    /// Column `c` of `buffer` (n x [`SIDES`]), read back.
    pub(crate) fn column(&self, buffer: &Buffer<f64>, c: usize) -> Result<Vec<f64>> {
        buffer.download_range(c * self.n, self.n)
    }

    /// C⁻¹·v for each of `vs`, [`SIDES`] at a time, each read back with one wait (the factor
    /// and Z settled first).
    pub(crate) fn solve_each(&self, vs: &[&[f64]]) -> Result<Vec<Vec<f64>>> {
        self.settle()?;
        let mut out = Vec::with_capacity(vs.len());
        for group in vs.chunks(SIDES) {
            for (c, v) in group.iter().enumerate() {
                if v.len() != self.n {
                    return Err(crate::Error::shape(format!(
                        "C is {n}x{n}, so a right side needs {n} entries, but has {}",
                        v.len(),
                        n = self.n
                    )));
                }
                self.vs.write(c * self.n, v)?;
            }
            self.launch(0, group.len())?;
            let w = self.ws.download_range(0, group.len() * self.n)?;
            out.extend(w.chunks(self.n).map(<[f64]>::to_vec));
        }
        Ok(out)
    }
}
