//! Inversion, the matrix sign function and Lyapunov equations as `Gpu` operations: the
//! compute kernels of [`crate::inverse`] (compiled once per `Gpu`, on first use) in f32, the
//! results refined and returned in f64.

use super::Gpu;
use crate::error::{DeviceError, Error, ErrorKind, NumericalError, Result};
use crate::inverse::{
    InverseMethod, InvertOptions, Inverter, Kind, Lyapunov, LyapunovOptions, Refined, Sign,
    SignOptions,
};
use crate::matrix::{Element, Matrix};
use crate::phases::Phases;
use crate::scaling::{scaled_by, scaled_to_unit, times_power_of_two, unit_exponent};
use crate::tiled::Storage;
use std::borrow::Cow;
use std::rc::Rc;

impl Inverter {
    /// Compiles the kernels on `gpu`'s context (which needs compute shaders, OpenGL ≥ 4.3).
    pub fn new(gpu: &Gpu) -> Result<Self> {
        if !gpu.info().has_compute() {
            return Err(Error::from(DeviceError::Unsupported {
                what: "invert matrices".into(),
                why: format!(
                    "inversion runs in compute shaders (OpenGL 4.3), this context is {}.{}",
                    gpu.info().gl_version.0,
                    gpu.info().gl_version.1
                ),
            }));
        }
        // The tiled kernels' configuration, checked against the device (src/tuning.rs).
        let config = gpu.tiled_kernels()?.config();
        Self::tuned(gpu.context(), config, gpu.tuning())
    }
}

impl Gpu {
    /// The inversion kernels of this context, compiled on first use.
    pub(crate) fn inverter(&self) -> Result<Rc<Inverter>> {
        if let Some(inv) = self.inverter.borrow().as_ref() {
            return Ok(inv.clone());
        }
        let inv = Rc::new(Inverter::new(self)?);
        *self.inverter.borrow_mut() = Some(inv.clone());
        Ok(inv)
    }

    /// M⁻¹ of the square `a` (after Benner et al.): `options` say what M is (for an SPD M only
    /// the lower triangle is read), the method (by default chosen by kind and order:
    /// [`InverseMethod::resolve`]; Gauss-Jordan, Cholesky or LU), the storage and
    /// how many Newton-Schulz steps in f64 follow the f32 GPU inverse. The result is f64: with
    /// refinement to about double accuracy for a well-conditioned M, else the f32 inverse
    /// widened (f32 accuracy, about κ(M)·2⁻²⁴).
    ///
    /// Every inverse is checked: one whose residual ‖I − M·X‖_F reaches 1/2 is
    /// [`IllConditioned`](crate::NumericalError::IllConditioned), never a result; with
    /// refinement asked for, faer's f64 inverse on the CPU is the fallback
    /// ([`Refined::fallback`]). An SPD M by Cholesky in full storage with refinement asked for
    /// (`InvertOptions::spd()`) is inverted in f64 on the GPU instead
    /// ([`Gpu::spd_inverse_double`]: dpotrf and dpotri, nothing to refine; its residual is
    /// judged on M equilibrated), unless the GPU cannot take it in f64 (no compute shaders, M
    /// past a storage buffer, device memory exhausted). Needs compute shaders (OpenGL 4.3).
    ///
    /// ```
    /// use symraster::{Gpu, InvertOptions, Matrix};
    /// let gpu = Gpu::new()?;
    /// let m = Matrix::from_row_major(2, 2, vec![4.0, 1.0, 2.0, 3.0])?;
    /// let x = gpu.invert(&m, InvertOptions::default())?.x;
    /// let e = m.matmul(&x)?;
    /// assert!((e[(0, 0)] - 1.0).abs() < 1e-12 && e[(0, 1)].abs() < 1e-12);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn invert<T: Element>(&self, a: &Matrix<T>, options: InvertOptions) -> Result<Refined> {
        crate::inverse::check_method(options.kind, options.method, options.storage)?;
        let options = InvertOptions {
            method: options.method.resolve(options.kind, a.rows()),
            ..options
        };
        if options.kind == Kind::Spd
            && options.method == InverseMethod::Cholesky
            && options.storage == Storage::Full
            && options.refine_steps > 0
            && a.rows() == a.cols()
        {
            // f64 asked for: dpotrf and dpotri in f64 on the GPU (no f32 inverse to refine),
            // an f64 M read where it lies.
            crate::matrix::check_square("M", a, "(a symmetric positive definite matrix)")?;
            let widened;
            let a = match T::as_double(a) {
                Some(a) => a,
                None => {
                    widened = a.map(Into::into);
                    &widened
                }
            };
            let view = crate::symmetric::SymmetricView::lower(a);
            match self.spd_inverse_double(view, Default::default()) {
                Ok((x, residual)) => {
                    return Ok(Refined {
                        x,
                        residuals: vec![residual],
                        refined: false,
                        fallback: None,
                    });
                }
                // No compute shaders, M larger than a storage buffer in f64, or the device's
                // memory exhausted: the f32 inverse refined below.
                Err(e) if matches!(e.kind(), ErrorKind::Device | ErrorKind::OutOfMemory) => {}
                Err(e) => return Err(e),
            }
        }
        let a: Cow<'_, Matrix<f64>> = match T::as_double(a) {
            Some(a) => Cow::Borrowed(a),
            None => Cow::Owned(a.par_map(Into::into)),
        };
        if options.kind == Kind::Spd
            && a.rows() == a.cols()
            && let Some(k) =
                super::spd_solve::equilibration(&crate::symmetric::SymmetricView::lower(&a))
        {
            // A graded SPD M (dposvx's rule): M⁻¹ = S·(S·M·S)⁻¹·S with S = diag(2^k_j) bringing
            // M's diagonal near 1 (exact), so that the residual test and the refinement judge
            // the equilibrated inverse, as they would a well-scaled one.
            let n = a.rows();
            let scaled = Matrix::from_fn(n, n, |i, j| {
                if i >= j {
                    times_power_of_two(a[(i, j)], k[i] + k[j])
                } else {
                    0.0
                }
            });
            let mut refined = self.invert(&scaled, options)?;
            let x = Matrix::from_fn(n, n, |i, j| {
                times_power_of_two(refined.x[(i, j)], k[i] + k[j])
            });
            refined.x = unscaled(x, 0, "A⁻¹")?;
            return Ok(refined);
        }
        // (2^-e·A)⁻¹ = 2^e·A⁻¹: A of any scale, within float32's range once scaled. Refined on
        // the device, A is scaled as it is narrowed and X as it is widened (no copy of either);
        // else a scaled copy of A goes in and X is scaled back.
        let mut phases = Phases::named("inverse in f64", std::time::Instant::now());
        let e = unit_exponent(&*a);
        let on_device = crate::inverse::refines_on_device(
            options.kind,
            options.method,
            options.storage,
            options.refine_steps,
        ) && e.abs() <= SCALED_ON_DEVICE;
        // The exponent the host takes out of a copy of A (A itself borrowed where 0).
        let on_host = if on_device { 0 } else { e };
        let a = scaled_by(&*a, on_host);
        if !on_device {
            phases.mark("A scaled");
        }
        let mut refined = crate::inverse::invert_f64_scaled(
            &*self.inverter()?,
            &a,
            e - on_host,
            options.kind,
            options.method,
            options,
            options.refine_steps,
        )?;
        if !on_device {
            phases.mark("the f64 inverse");
            refined.x = unscaled(refined.x, -on_host, "A⁻¹")?;
            phases.mark("X scaled back");
        }
        Ok(refined)
    }

    /// sign(A) by the scaled Newton iteration on GPU inverses (eq. 1), polished in f64;
    /// A of any scale (scaled by a power of two first). An eigenvalue on or too near the
    /// imaginary axis is an error. With `options.refine_inverses` (the default) S is right to
    /// about 1e-13 for a well-conditioned problem; without, to f32's accuracy
    /// ([`Sign::commutation`] shows it).
    ///
    /// ```
    /// use symraster::{Gpu, Matrix};
    /// let gpu = Gpu::new()?;
    /// let a = Matrix::from_row_major(2, 2, vec![-3.0, 1.0, 0.0, 2.0])?;
    /// let s = gpu.sign(&a, Default::default())?.s;
    /// assert!((s[(0, 0)] + 1.0).abs() < 1e-10 && (s[(1, 1)] - 1.0).abs() < 1e-10);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn sign<T: Element>(&self, a: &Matrix<T>, options: SignOptions) -> Result<Sign> {
        // sign(c·A) = sign(A) for c > 0: A of any scale.
        let (a, _) = scaled_to_unit(a);
        crate::inverse::sign(&*self.inverter()?, &a, options)
    }

    /// X with A·X + X·Aᵀ = Q for stable A (scipy's `solve_continuous_lyapunov(a, q)`), through
    /// the sign function on the GPU, then refined in f64 (`options.refine_steps`); A and Q of
    /// any scale. X is f64, to about double accuracy for a well-conditioned equation
    /// ([`Lyapunov::residuals`] shows the relative residual per step).
    ///
    /// ```
    /// use symraster::{Gpu, Matrix};
    /// let gpu = Gpu::new()?;
    /// let a = Matrix::from_row_major(2, 2, vec![-2.0, 0.0, 0.0, -1.0])?;
    /// let q = Matrix::from_row_major(2, 2, vec![4.0, 0.0, 0.0, 2.0])?;
    /// let x = gpu.lyapunov(&a, &q, Default::default())?.x; // X = −diag(1, 1)
    /// assert!((x[(0, 0)] + 1.0).abs() < 1e-10 && (x[(1, 1)] + 1.0).abs() < 1e-10);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn lyapunov<T: Element>(
        &self,
        a: &Matrix<T>,
        q: &Matrix<T>,
        options: LyapunovOptions,
    ) -> Result<Lyapunov> {
        // (2^-a·A)·X' + X'·(2^-a·A)ᵀ = 2^-q·Q has X' = 2^(a-q)·X: A and Q of any scale.
        let (a, ea) = scaled_to_unit(a);
        let (q, eq) = scaled_to_unit(q);
        let mut solved = crate::inverse::solve_continuous_lyapunov(
            &*self.inverter()?,
            &a,
            &q,
            options.refine_steps,
        )?;
        solved.x = unscaled(solved.x, eq - ea, "X")?;
        Ok(solved)
    }
}

/// The largest |e| (A's entries below 2^(e+1)) at which the general inverse refined on the
/// device takes A unscaled: its entries then lie well inside f32's range and its f64
/// refinement far from f64's limits, so scaling by 2^-e as A is narrowed (and X widened)
/// gives the bits the host's scaled copy gave.
const SCALED_ON_DEVICE: i32 = 64;

/// `x`·2^e, the result of a scaled problem in the data's units; one that leaves f64's range
/// there (an entry ±inf, or everything flushed to zero) is an error naming `what`. Entries far
/// below the largest may flush to zero, as they would in an unscaled f64 computation.
fn unscaled(x: Matrix<f64>, e: i32, what: &'static str) -> Result<Matrix<f64>> {
    use rayon::prelude::*;
    // Where e = 0 only the check passes over x; every pass on all cores.
    let before = if e == 0 { 0.0 } else { x.max_abs() };
    let back = match e {
        0 => x,
        _ => x.par_map(|v| times_power_of_two(v, e)),
    };
    let overflow = back
        .as_slice()
        .par_iter()
        .position_first(|v| !v.is_finite());
    let all_lost = before > 0.0 && back.max_abs() == 0.0;
    match overflow.or(all_lost.then_some(0)) {
        Some(p) => Err(NumericalError::ResultOutOfRange {
            what,
            row: p / back.cols(),
            col: p % back.cols(),
            value: back.as_slice()[p],
        }
        .into()),
        None => Ok(back),
    }
}
