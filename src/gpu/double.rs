//! The f64 Cholesky factor and SPD inverse on the GPU as `Gpu` operations
//! ([`crate::double`]), for callers that need them to f64's accuracy.

use super::Gpu;
use crate::double::{DoubleCholeskyOptions, kernels::DoubleKernels};
use crate::error::{DeviceError, Error, NumericalError, Result};
use crate::matrix::Matrix;
use crate::symmetric::SymmetricView;
use std::rc::Rc;

impl Gpu {
    /// The f64 factorizations' kernels of this context, compiled on first use.
    pub(crate) fn double_kernels(&self, what: &str) -> Result<Rc<DoubleKernels>> {
        if !self.info().has_compute() {
            return Err(Error::from(DeviceError::Unsupported {
                what: what.into(),
                why: format!(
                    "the f64 factorizations run in compute shaders (OpenGL 4.3), this context \
                     is {}.{}",
                    self.info().gl_version.0,
                    self.info().gl_version.1
                ),
            }));
        }
        if let Some(k) = self.double.borrow().as_ref() {
            return Ok(k.clone());
        }
        let k = Rc::new(DoubleKernels::new(
            self.context(),
            crate::double::kernels::ChainShape::of(self.tuning()),
        )?);
        *self.double.borrow_mut() = Some(k.clone());
        Ok(k)
    }

    /// L with C = L·Lᵀ in f64 on the GPU (LAPACK's dpotrf, to f64's accuracy), zeros above
    /// the diagonal, from the stored triangle of the symmetric positive definite `c` (read
    /// where it lies). Each row and column is scaled by a power of two first, so C of any
    /// scale and grading factors wherever L fits f64. A pivot that is not positive is
    /// [`NumericalError::NotPositiveDefinite`] with its column (0-based) and the pivot in C's
    /// units. Needs compute shaders (OpenGL 4.3).
    ///
    /// ```
    /// use symraster::{Gpu, SymmetricView, Triangle};
    /// let gpu = Gpu::new()?;
    /// let data = [4.0, f64::NAN, 2.0, 3.0]; // the lower triangle of [[4, 2], [2, 3]]
    /// let c = SymmetricView::new(&data, 2, 2, Triangle::Lower)?;
    /// let l = gpu.cholesky_double(c, Default::default())?;
    /// assert_eq!((l[(0, 0)], l[(1, 0)], l[(0, 1)]), (2.0, 1.0, 0.0));
    /// assert!((l[(1, 1)] - 2f64.sqrt()).abs() < 1e-15);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky_double(
        &self,
        c: SymmetricView<'_>,
        options: DoubleCholeskyOptions,
    ) -> Result<Matrix<f64>> {
        self.factor_double(c, options, false)
    }

    /// U = Lᵀ with C = Uᵀ·U (LAPACK's dpotrf with UPLO = 'U'), zeros below the diagonal:
    /// [`Gpu::cholesky_double`]'s factor turned over on the GPU, so that U comes back
    /// row-major with no transposition on the host.
    ///
    /// ```
    /// use symraster::{Gpu, SymmetricView, Triangle};
    /// let gpu = Gpu::new()?;
    /// let data = [4.0, 2.0, f64::NAN, 3.0]; // the upper triangle of [[4, 2], [2, 3]]
    /// let c = SymmetricView::new(&data, 2, 2, Triangle::Upper)?;
    /// let u = gpu.cholesky_double_upper(c, Default::default())?;
    /// assert_eq!((u[(0, 0)], u[(0, 1)], u[(1, 0)]), (2.0, 1.0, 0.0));
    /// assert!((u[(1, 1)] - 2f64.sqrt()).abs() < 1e-15);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky_double_upper(
        &self,
        c: SymmetricView<'_>,
        options: DoubleCholeskyOptions,
    ) -> Result<Matrix<f64>> {
        self.factor_double(c, options, true)
    }

    /// [`Gpu::cholesky_double`]'s L, or with `upper` [`Gpu::cholesky_double_upper`]'s U,
    /// written into its triangle of `square` (order n, row-major, diagonal included), and the
    /// rest of each row handed to `other(i, j0, row)` (row i from column j0: above L's
    /// diagonal, below U's) to fill as the caller likes, as scipy's `cho_factor` keeps `a`'s
    /// entries there. `other` runs over all cores while the GPU factors, so the fill costs
    /// no time of its own. On an error `square` holds no factor, and `other` may not have run.
    /// Needs compute shaders (OpenGL 4.3).
    ///
    /// ```
    /// use symraster::{Gpu, SymmetricView, Triangle};
    /// let gpu = Gpu::new()?;
    /// let a = [4.0, 2.0, 2.0, 3.0];
    /// let c = SymmetricView::new(&a, 2, 2, Triangle::Lower)?;
    /// let mut square = [0.0; 4];
    /// gpu.cholesky_double_into(c, Default::default(), false, &mut square, |i, j0, row| {
    ///     row.copy_from_slice(&a[i * 2 + j0..i * 2 + j0 + row.len()]); // a's upper triangle
    /// })?;
    /// assert_eq!((square[0], square[1], square[2]), (2.0, 2.0, 1.0));
    /// assert!((square[3] - 2f64.sqrt()).abs() < 1e-15);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky_double_into(
        &self,
        c: SymmetricView<'_>,
        options: DoubleCholeskyOptions,
        upper: bool,
        square: &mut [f64],
        other: impl Fn(usize, usize, &mut [f64]) + Sync,
    ) -> Result<()> {
        options.validate()?;
        c.check("C")?;
        let kernels = self.double_kernels("factor C in f64")?;
        crate::double::cholesky_into(&kernels, &c, options, upper, square, other)
    }

    /// [`Gpu::cholesky_double`], or with `upper` [`Gpu::cholesky_double_upper`].
    fn factor_double(
        &self,
        c: SymmetricView<'_>,
        options: DoubleCholeskyOptions,
        upper: bool,
    ) -> Result<Matrix<f64>> {
        options.validate()?;
        c.check("C")?;
        let kernels = self.double_kernels("factor C in f64")?;
        crate::double::cholesky(&kernels, &c, options, upper)
    }

    /// C⁻¹ of the symmetric positive definite `c` in f64 on the GPU (LAPACK's dpotrf then
    /// dpotri), from its stored triangle, with ‖I − C̃·C̃⁻¹‖_F of C scaled to a unit diagonal
    /// (the residual LAPACK's expert drivers would judge), estimated from four random ±1
    /// probes. An inverse whose residual reaches 1/2 is [`NumericalError::IllConditioned`].
    /// Needs compute shaders (OpenGL 4.3).
    pub fn spd_inverse_double(
        &self,
        c: SymmetricView<'_>,
        options: DoubleCholeskyOptions,
    ) -> Result<(Matrix<f64>, f64)> {
        options.validate()?;
        c.check("C")?;
        let kernels = self.double_kernels("invert C in f64")?;
        let (x, residual) = crate::double::spd_inverse(&kernels, &c, options)?;
        if residual.is_nan() || residual >= 0.5 {
            let norm = |m: &Matrix<f64>| m.as_slice().iter().map(|v| v * v).sum::<f64>().sqrt();
            return Err(NumericalError::IllConditioned {
                precision: "double",
                residual,
                after: "the f64 Cholesky inverse on the GPU, C scaled to a unit diagonal".into(),
                condition: norm(&c.to_lower()) * norm(&x),
                advice: "it is singular or nearly so",
            }
            .into());
        }
        Ok((x, residual))
    }
}
