//! [`Gpu::batched`]: the batched operations (issue 28), B small problems of one order at once
//! on the compute kernels of `crate::batched`.

use super::{Gpu, Method};
use crate::batched::kernels::BatchedKernels;
use crate::batched::{
    self, AsBatchRef, Batch, BatchFactor, BatchOptions, BatchSolution, device::Poison,
};
use crate::error::{InputError, Result};
use crate::matrix::Element;
use std::rc::Rc;

/// The batched operations of one [`Gpu`] ([`Gpu::batched`]): each takes B problems of one
/// order n (1 ≤ n ≤ 256) as [`Batch`]es, the batch outer, or as [`BatchRef`](crate::BatchRef)s lent from the
/// caller's arrays at any strides (read where they lie: f32 values go to the GPU as they are,
/// which gathers and scales them there), and runs them in one dispatch (cut only at the
/// device's limits). Inputs f32 or f64, rounded once to f32 for the GPU (each
/// value checked finite and within float32's range); the operations' docs say what precision
/// their results carry.
pub struct Batched<'g> {
    gpu: &'g Gpu,
}

impl Gpu {
    /// The batched operations: [`Batched::assemble`], [`Batched::cholesky`],
    /// [`Batched::spd_solve`] and [`Batched::least_squares`] over many small problems at once,
    /// with a status per problem.
    ///
    /// ```
    /// use symraster::{Batch, BatchOptions, Gpu};
    /// let gpu = Gpu::new()?;
    /// // two 2x2 problems; the second is not positive definite
    /// let c = Batch::new(2, 2, 2, vec![4.0f32, 0.0, 1.0, 3.0, 1.0, 0.0, 2.0, 1.0])?;
    /// let b = Batch::vectors(2, 2, vec![1.0f32, 2.0, 1.0, 1.0])?;
    /// let s = gpu.batched().spd_solve(&c, &b, BatchOptions::default())?;
    /// assert_eq!(s.info, vec![0, 2]);                 // LAPACK's INFO: column 1 failed
    /// assert_eq!(s.failed(), vec![1]);
    /// assert!((4.0 * s.x.problem(0)[0] + s.x.problem(0)[1] - 1.0).abs() < 1e-6);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn batched(&self) -> Batched<'_> {
        Batched { gpu: self }
    }

    /// The batched kernels, made on first use.
    fn batched_kernels(&self) -> Result<Rc<BatchedKernels>> {
        if let Some(k) = self.batched.borrow().as_ref() {
            return Ok(k.clone());
        }
        let kernels = Rc::new(BatchedKernels::new(self.context())?);
        *self.batched.borrow_mut() = Some(kernels.clone());
        Ok(kernels)
    }
}

impl Batched<'_> {
    /// The compute kernels for `options`' method: [`Method::Auto`] and [`Method::Tiled`] run
    /// them (where the device has compute shaders, else [`crate::DeviceError::Unsupported`]);
    /// the fragment methods have no batched form ([`InputError::Unsupported`]).
    fn kernels(&self, options: &BatchOptions) -> Result<Rc<BatchedKernels>> {
        match options.method {
            Method::Auto | Method::Tiled => {
                self.gpu.resolve(Method::Tiled)?;
                self.gpu.batched_kernels()
            }
            m => Err(InputError::Unsupported(format!(
                "the batched operations run on compute shaders (the tiled method, one work \
                 group per problem); the {m} method has no batched form: use the tiled or auto \
                 method"
            ))
            .into()),
        }
    }

    /// The lower triangle of Cₚ = Aₚ·diag(dₚ)·Aₚᵀ for A (B, n, k) and d (B, k) (the diagonal
    /// of D² per problem, as [`Gpu::assemble`]): f32, (B, n, n), zeros above the diagonal. A
    /// Cₚ outside float32's range is refused, as [`Gpu::assemble`] refuses one
    /// ([`NumericalError::BatchOutOfRange`](crate::NumericalError::BatchOutOfRange)).
    pub fn assemble<T: Element>(
        &self,
        a: &impl AsBatchRef<Elem = T>,
        d: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<Batch<f32>> {
        batched::assemble(&*self.kernels(&options)?, a, d, Poison::No)
    }

    /// Cₚ = Lₚ·Lₚᵀ for C (B, n, n; each lower triangle read, the upper never): L in f32,
    /// (B, n, n), zeros above the diagonal, and INFO per problem (0, or k > 0 when column
    /// k − 1's pivot is not positive; that problem's L is NaN and the others are right). Only
    /// the triangles cross the bus, packed, both ways.
    pub fn cholesky<T: Element>(
        &self,
        c: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<BatchFactor> {
        batched::cholesky(&*self.kernels(&options)?, c, &options, Poison::No)
    }

    /// [`Batched::cholesky`] with L written into `l`, room the caller allocated (B·n·n values,
    /// row-major with the batch outer, such as a `Vec`'s spare capacity: every value is
    /// written on success): INFO per problem. A caller that runs the GPU on another thread
    /// allocates the room on its own, so the results' memory is not the GPU thread's to fault
    /// in afresh on each call. On an error `l` holds NaN.
    ///
    /// ```
    /// use symraster::{Batch, BatchOptions, Gpu};
    /// let gpu = Gpu::new()?;
    /// let c = Batch::new(1, 2, 2, vec![4.0f32, 0.0, 2.0, 5.0])?;
    /// let mut l = Vec::with_capacity(4);
    /// let room = &mut l.spare_capacity_mut()[..4];
    /// let info = gpu.batched().cholesky_into(&c, room, BatchOptions::default())?;
    /// // SAFETY: `cholesky_into` wrote all four values.
    /// unsafe { l.set_len(4) };
    /// assert_eq!(info, vec![0]);
    /// assert_eq!(l, vec![2.0, 0.0, 1.0, 2.0]);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky_into<T: Element>(
        &self,
        c: &impl AsBatchRef<Elem = T>,
        l: &mut [std::mem::MaybeUninit<f32>],
        options: BatchOptions,
    ) -> Result<Vec<i32>> {
        let kernels = match self.kernels(&options) {
            Ok(k) => k,
            Err(e) => {
                l.fill(std::mem::MaybeUninit::new(f32::NAN));
                return Err(e);
            }
        };
        batched::cholesky_into(&kernels, c, l, &options, Poison::No)
    }

    /// Cₚ·xₚ = bₚ for C (B, n, n; lower triangles read) and b (B, n): the f32 factor, both
    /// solves and `options.refinement_steps` refinement steps with the residual in f64, in one
    /// dispatch; x in f64 (see [`BatchSolution`] for what it achieves) and INFO per problem.
    pub fn spd_solve<T: Element>(
        &self,
        c: &impl AsBatchRef<Elem = T>,
        b: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<BatchSolution> {
        batched::spd_solve(&*self.kernels(&options)?, c, b, &options, Poison::No)
    }

    /// [`Batched::spd_solve`] with x in `X`: f32 is x rounded once from the f64 refinement
    /// as the GPU's f64 values come back (no f64 copy on the host), a solved problem whose x
    /// leaves f32's normal range getting INFO −1 and NaN; f64 is [`Batched::spd_solve`].
    ///
    /// ```
    /// use symraster::{Batch, BatchOptions, BatchSolution, Gpu};
    /// let gpu = Gpu::new()?;
    /// let c = Batch::new(1, 2, 2, vec![4.0f32, 0.0, 1.0, 3.0])?;
    /// let b = Batch::vectors(1, 2, vec![1.0f32, 2.0])?;
    /// let s: BatchSolution<f32> = gpu.batched().spd_solve_as(&c, &b, BatchOptions::default())?;
    /// assert!((4.0 * s.x.problem(0)[0] + s.x.problem(0)[1] - 1.0).abs() < 1e-6);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn spd_solve_as<X: Element, T: Element>(
        &self,
        c: &impl AsBatchRef<Elem = T>,
        b: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<BatchSolution<X>> {
        batched::spd_solve_as(&*self.kernels(&options)?, c, b, &options, Poison::No)
    }

    /// min ‖Dₚ(bₚ − Aₚᵀxₚ)‖₂ for A (B, n, k: n unknowns, k ≥ n observations, as
    /// [`Gpu::least_squares`]), d (B, k; the diagonal of D²) and b (B, k), fused in one
    /// dispatch: Aₚ·diag(dₚ)·Aₚᵀ and Aₚ·diag(dₚ)·bₚ formed on chip, factored, both solves and
    /// the refinement steps (residual from A, d and b in f64). x (B, n) in f64 and INFO per
    /// problem.
    pub fn least_squares<T: Element>(
        &self,
        a: &impl AsBatchRef<Elem = T>,
        d: &impl AsBatchRef<Elem = T>,
        b: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<BatchSolution> {
        batched::least_squares(&*self.kernels(&options)?, a, d, b, &options, Poison::No)
    }

    /// [`Batched::least_squares`] with x in `X`, as [`Batched::spd_solve_as`] gives it.
    pub fn least_squares_as<X: Element, T: Element>(
        &self,
        a: &impl AsBatchRef<Elem = T>,
        d: &impl AsBatchRef<Elem = T>,
        b: &impl AsBatchRef<Elem = T>,
        options: BatchOptions,
    ) -> Result<BatchSolution<X>> {
        batched::least_squares_as(&*self.kernels(&options)?, a, d, b, &options, Poison::No)
    }

    /// The kernels themselves, for the benchmarks and the tests of the internals (runs with
    /// NaN-poisoned outputs, resident batches); not API.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn internal_kernels(&self, options: &BatchOptions) -> Result<Rc<BatchedKernels>> {
        self.kernels(options)
    }
}
