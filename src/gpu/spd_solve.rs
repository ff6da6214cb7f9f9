//! C·x = b for a symmetric positive definite C in f64, as LAPACK's dsposv: the factor in f32
//! on the GPU, then Algorithm 1's refinement in f64 with the least-squares solve's stopping
//! tests, fallback to an f64 Cholesky and diagnostics ([`crate::least_squares`]).

use super::estimate::{
    SINGLE_CONDITION_LIMIT, double_vec, finish_estimate, solve_carrying, start_estimate,
    x0_with_first_solves,
};
use super::least_squares::with_scaled_rhs;
use super::spd_device::SpdDevice;
use super::spd_direct::{self, OnTheHost, Prepared, solve_again_on_host};
use super::{Cholesky, Gpu, Method};
use crate::error::{Error, NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::layout::Format;
use crate::least_squares::double::{Scaled, solve_in_double};
use crate::least_squares::{
    DoubleFactor, Fallback, Solution, SolveOptions, SymmetricEquations, Timings, check_pivots,
    refine, single_factor_failure,
};
use crate::matrix::{Element, Matrix, check_finite_vec, check_non_empty, check_square};
use crate::phases::Phases;
use crate::scaling::{
    equilibration_exponents, exponent_of, norm_inf, scale_exponent, times_power_of_two,
};
use crate::symmetric::SymmetricView;
use std::time::Instant;

impl Gpu {
    /// Solves C·x = b for a symmetric positive definite C (only its lower triangle is read),
    /// f64 (or f32, widened exactly) in and f64 out, as LAPACK's dsposv: C scaled by a power of
    /// four and rounded to f32 once, factored on the GPU (`options.gpu` picks the method and
    /// format), x⁰ from that factor, then Algorithm 1's mixed-precision refinement with
    /// residuals in f64 until `options`' test holds (with the tiled method in full storage,
    /// C's stored triangle goes up once, in f64 or an f32 C's own values: the f32 copy is made
    /// from it and the residuals are formed on the GPU). Stagnation, the iteration limit, or an f32 factor that fails (C
    /// may still be SPD in f64) hand over to an f64 Cholesky on the CPU unless
    /// `options.fallback` is off; [`Solution::fallback`] says so. x carries f64 accuracy up to
    /// κ(C) ([`Solution::forward_error_estimate`]).
    ///
    /// A C that is not positive definite is
    /// [`NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite) (or, with the
    /// fallback on, [`SingularToDouble`](crate::NumericalError::SingularToDouble) where it is
    /// singular in f64 too); b is scaled by a power of two, so any finite b works.
    ///
    /// ```
    /// use symraster::{Gpu, Matrix, SolveOptions};
    /// let gpu = Gpu::new()?;
    /// let c = Matrix::from_row_major(3, 3, vec![4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0])?;
    /// let b = [1.0, 2.0, 3.0];
    /// let s = gpu.spd_solve(&c, &b, SolveOptions::default())?;
    /// let r: Vec<f64> = c.mul_vec(&s.x)?.iter().zip(&b).map(|(cx, b)| cx - b).collect();
    /// assert!(s.converged && r.iter().all(|r| r.abs() < 1e-13));
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn spd_solve<T: Element>(
        &self,
        c: &Matrix<T>,
        b: &[T],
        options: SolveOptions,
    ) -> Result<Solution> {
        check_non_empty("C", c)?;
        check_square("C", c, "(a symmetric matrix)")?;
        self.spd_solve_view(SymmetricView::lower(c), &double_vec(b), options)
    }

    /// [`Gpu::spd_solve`] of C borrowed where it lies, by the triangle `c` names (as LAPACK's
    /// UPLO): no copy of C is made (a caller's array, a numpy array, a block of a larger
    /// matrix); the triangle not named is never read. An f32 C is widened to f64 exactly
    /// where it is read, so x is the same as for C widened first.
    ///
    /// ```
    /// use symraster::{Gpu, SolveOptions, SymmetricView, Triangle};
    /// let gpu = Gpu::new()?;
    /// // C = [[4, 1], [1, 3]] by its upper triangle; the lower one is garbage.
    /// let data = [4.0, 1.0, f64::NAN, 3.0];
    /// let c = SymmetricView::new(&data, 2, 2, Triangle::Upper)?;
    /// let s = gpu.spd_solve_view(c, &[5.0, 4.0], SolveOptions::default())?;
    /// assert!((s.x[0] - 1.0).abs() < 1e-14 && (s.x[1] - 1.0).abs() < 1e-14);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn spd_solve_view<T: Element>(
        &self,
        c: SymmetricView<'_, T>,
        b: &[f64],
        options: SolveOptions,
    ) -> Result<Solution> {
        let options = &options;
        options.validate()?;
        let m = c.order();
        // ‖C‖₁ in one pass over the stored triangle: a finite norm bounds every entry, so only
        // where it is not finite is C searched for the entry to name.
        let norm_c = (m > 0).then(|| c.norm_1());
        if !norm_c.is_some_and(f64::is_finite) {
            c.check("C")?;
        }
        if b.len() != m {
            return Err(Error::shape(format!(
                "C is {m}x{m}, so b needs {m} entries, but has {}",
                b.len()
            )));
        }
        check_finite_vec("b", b)?;
        if let Some(k) = equilibration(&c) {
            return self.spd_solve_equilibrated(&c, b, &k, options);
        }
        // b by a power of two into [1, 2) (exact), as the least-squares solve does.
        with_scaled_rhs(b, |scaled_b| {
            self.spd_solve_scaled(&c, scaled_b, options, norm_c)
        })
    }

    /// [`Gpu::spd_solve`] of a graded C (LAPACK's dposvx rule: a diagonal spanning more than
    /// a factor of 100): S·C·S·y = S·b with S = diag(2^k_j) bringing C's diagonal near 1
    /// (dpoequ with powers of two, exact), then x = S·y. The refinement's normwise test then
    /// holds for every unknown whatever its units, as LAPACK's expert driver judges it;
    /// [`Solution`]'s residuals, backward error and condition are the equilibrated system's.
    /// Costs one f64 copy of C's lower triangle.
    fn spd_solve_equilibrated<T: Element>(
        &self,
        c: &SymmetricView<'_, T>,
        b: &[f64],
        k: &[i32],
        options: &SolveOptions,
    ) -> Result<Solution> {
        let m = c.order();
        let scaled = Matrix::from_fn(m, m, |i, j| {
            if i >= j {
                times_power_of_two(c.get(i, j), k[i] + k[j])
            } else {
                0.0
            }
        });
        let scaled = SymmetricView::lower(&scaled);
        let b: Vec<f64> = b
            .iter()
            .zip(k)
            .map(|(&b, &k)| times_power_of_two(b, k))
            .collect();
        let mut s = with_scaled_rhs(&b, |scaled_b| {
            self.spd_solve_scaled(&scaled, scaled_b, options, None)
        })?;
        let back = |y: &[f64]| -> Vec<f64> {
            y.iter()
                .zip(k)
                .map(|(&y, &k)| times_power_of_two(y, k))
                .collect()
        };
        s.x = back(&s.x);
        s.x0 = back(&s.x0);
        if let Some(index) = s.x.iter().position(|v| !v.is_finite()) {
            return Err(NumericalError::SolutionOutOfRange {
                index,
                value: s.x[index],
            }
            .into());
        }
        Ok(s)
    }

    /// [`Gpu::spd_solve`] for b already scaled (max |b| in [1, 2) or b = 0); `norm_c` is
    /// ‖C‖₁ where the caller has it.
    fn spd_solve_scaled<T: Element>(
        &self,
        c: &SymmetricView<'_, T>,
        b: &[f64],
        options: &SolveOptions,
        norm_c: Option<f64>,
    ) -> Result<Solution> {
        let start = Instant::now();
        let mut phase = Phases::named("SPD solve", start);
        let m = c.order();
        let equations = SymmetricEquations::new(c, b);
        // C' = 4^s·C with its largest diagonal entry near 1 (exact): the matrix the factors
        // belong to.
        let s = scale_exponent((0..m).map(|j| c.get(j, j)));
        let exponent = 2 * s;
        let scale = times_power_of_two(1.0, exponent);
        let scaled_diagonal: Vec<f64> = (0..m).map(|j| c.get(j, j) * scale).collect();
        let scaled = Scaled {
            exponent,
            diagonal: &scaled_diagonal,
        };
        let double = |reason| -> Result<Solution> {
            let factor = DoubleFactor::of_symmetric(c, scale)?;
            solve_in_double(
                &equations,
                &factor,
                &scaled,
                options,
                reason,
                (start, start.elapsed()),
            )
        };
        // ‖C‖₁ exactly, in one pass over the lower triangle: it also bounds every entry.
        let norm_c = norm_c.unwrap_or_else(|| c.norm_1());
        let norm_c_scaled = times_power_of_two(norm_c, exponent);
        phase.mark("checks, ‖C‖₁");
        let method = self.check_problem_size(m, 0, options.gpu)?;
        if let Some(kernels) =
            self.double_factor_kernels(m, exponent, method, options, "the SPD solve's f64 factor")
        {
            kernels.start_spd_programs(!T::DOUBLE, true);
            match SpdDevice::upload(kernels.clone(), c, b, true) {
                Ok(device) => {
                    phase.mark_finished(self.context(), "C's triangle and b up");
                    let square = Buffer::<f64>::uninitialized(
                        self.context(),
                        BufferTarget::Storage,
                        BufferUsage::Static,
                        m * m,
                    )?;
                    device.double_into(&square, exponent)?;
                    phase.mark_finished(self.context(), "C' in f64 on the GPU");
                    let check = |norm_c: f64| -> Result<f64> {
                        let factor = DoubleFactor::of_symmetric(c, scale)?;
                        factor.check_singular(&scaled_diagonal)?;
                        Ok(times_power_of_two(norm_c, exponent) * factor.inverse_norm_scaled())
                    };
                    let prepared = Prepared {
                        start,
                        square,
                        exponent,
                        norm_c: &|| Ok(norm_c),
                        b,
                    };
                    let host = OnTheHost {
                        double: &double,
                        check: &check,
                        failed: &Err,
                    };
                    return spd_direct::solve(
                        &kernels,
                        &device,
                        prepared,
                        options,
                        host,
                        "SPD solve",
                    );
                }
                Err(e) => log::info!("the SPD solve's factor in f32: {e}"),
            }
        }
        // No entry of C' can leave f32's range where ‖C'‖₁ does not (it bounds each).
        let tiled = method == Method::Tiled && norm_c_scaled <= f64::from(f32::MAX);
        if tiled {
            self.start_spd_solve_programs(m, options.gpu.format == Format::Full, !T::DOUBLE);
        }
        // C's stored triangle (in f64, or an f32 C's own values) and b in f64 on the GPU for the
        // tiled method in full storage: the f32 copy is made there and the residuals formed
        // there.
        let device = match tiled && options.gpu.format == Format::Full {
            true => match self
                .double_kernels("the SPD solve's residual in f64")
                .and_then(|k| SpdDevice::upload(k, c, b, false))
            {
                Ok(d) => Some(d),
                Err(e) => {
                    log::info!("the SPD solve's residuals on the CPU: {e}");
                    None
                }
            },
            false => None,
        };
        phase.mark_finished(self.context(), "C's triangle and b up");
        let factored = (|| {
            // L's diagonal comes back with the tiled factor's status.
            let (l, diagonal) = if tiled {
                let format = options.gpu.format;
                let made_on_device = match &device {
                    Some(d) => self.cholesky_tiled_filled(
                        m,
                        |single| d.single_into(single, exponent),
                        |i, j| c.get(i, j),
                    )?,
                    None => None,
                };
                let (f, diagonal) = match made_on_device {
                    Some(made) => made,
                    // Rows scaled and rounded over all cores straight into the GPU's storage;
                    // L stays there.
                    None => self.cholesky_tiled_rows(
                        m,
                        format,
                        |rows, ld, out| {
                            c.lower_rows_into(rows, ld, out, |v| (v * scale) as f32);
                        },
                        |i, j| c.get(i, j),
                    )?,
                };
                (Cholesky::device(f, format), Some(diagonal))
            } else {
                let lower = c.to_lower().map(|v| v * scale);
                let c32 = crate::matrix::to_single_precision(
                    "C (scaled and rounded to single precision for the GPU)",
                    &lower,
                )?;
                (self.cholesky_single(&c32, options.gpu)?, None)
            };
            let diagonal = match diagonal {
                Some(d) => d,
                None => factor_diagonal(&l)?,
            };
            check_pivots(&diagonal, &scaled_diagonal)?;
            Ok::<_, Error>(l)
        })();
        let l = match factored.map_err(|e| (single_factor_failure(&e), e)) {
            Ok(l) => l,
            Err((Some(column), _)) if options.fallback => {
                log::warn!(
                    "the f32 factor failed at column {column}: solving with an f64 Cholesky on \
                     the CPU"
                );
                return double(Fallback::SingleFactorFailed { column });
            }
            Err((_, e)) => return Err(e),
        };
        let factor = start.elapsed();
        phase.mark("C rounded, up, factored, pivots checked");
        // z = C⁻¹·r through `solve` with the f32 factor of C' = 2^e·C: r by 2^t into [1, 2)
        // before rounding (residuals shrink by orders of magnitude per step), z =
        // 2^(e−t)·C'⁻¹·(2^t·r).
        let correct_through = |r: &[f64], solve: &mut dyn FnMut(&[f32]) -> Result<Vec<f32>>| {
            let r_max = norm_inf(r);
            let t = if r_max > 0.0 && r_max.is_finite() {
                -exponent_of(r_max)
            } else {
                0
            };
            let single: Vec<f32> = r.iter().map(|&v| times_power_of_two(v, t) as f32).collect();
            Ok::<_, Error>(
                solve(&single)?
                    .into_iter()
                    .map(|z| times_power_of_two(f64::from(z), exponent - t))
                    .collect(),
            )
        };
        let solve_each = |vs: &[&[f32]]| l.solve_each_single(vs);
        let (x0, first_solves) =
            x0_with_first_solves(m, |solve| correct_through(b, solve), solve_each)?;
        let x0_time = start.elapsed();
        phase.mark("x⁰, with the ‖C⁻¹‖₁ estimate's first two solves");
        // ‖C'⁻¹‖₁ through the f32 factor (a digit or two is enough), its solves beside the
        // refinement's corrections.
        let estimate = start_estimate(m, first_solves, solve_each)?;
        let correct =
            |r: &[f64]| correct_through(r, &mut |v| solve_carrying(&estimate, v, solve_each));
        let tolerance = options.tolerance_for(m);
        let refinement = refine(
            |x| match &device {
                Some(d) => d.residual(x),
                None => Ok(crate::least_squares::refinement_residual(&equations, x)),
            },
            correct,
            &x0,
            norm_c,
            norm_inf(b),
            options.stopping(m),
        )?;
        let refine_time = start.elapsed() - x0_time;
        phase.mark("refinement");
        if let Some(reason) = Fallback::after(refinement.stop, options.fallback) {
            let times = (start, x0_time, factor);
            return solve_again_on_host(reason, refinement, x0, &double, times);
        }
        let inverse_norm = finish_estimate(estimate, solve_each)?;
        let mut condition = norm_c_scaled * inverse_norm;
        if options.fallback && (condition.is_nan() || condition >= SINGLE_CONDITION_LIMIT) {
            // Past 2/u₃₂ an f64 factor decides whether C is singular, and its estimate counts.
            let factor = DoubleFactor::of_symmetric(c, scale)?;
            condition = norm_c_scaled * factor.inverse_norm_scaled();
            factor.check_singular(&scaled_diagonal)?;
        }
        phase.mark("‖C⁻¹‖₁ estimate");
        let timings = Timings {
            factor,
            x0: x0_time,
            refine: refine_time,
            total: start.elapsed(),
        };
        Solution::refined(refinement, x0, options, tolerance, condition, None, timings)
    }

    /// Hands the programs a tiled SPD solve of order `m` reaches (with `on_device`, its f64
    /// residual's, for C packed in f32 where `single`) to the driver together, so that they compile side by side where it
    /// compiles in its own threads; a failure here is met again, and reported, where the
    /// program is used.
    fn start_spd_solve_programs(&self, m: usize, on_device: bool, single: bool) {
        if let Ok(k) = self.tiled_kernels() {
            k.start_chained(m, true);
        }
        if on_device && let Ok(k) = self.double_kernels("the SPD solve's residual in f64") {
            k.start_spd_programs(single, false);
        }
    }
}

/// Per-row exponents k_j with 4^k_j·C(j,j) near 1 where C's diagonal spans more than a
/// factor of 100 (LAPACK's dposvx equilibrates below scond = 0.1) or lies where one power of
/// four for all of C leaves f64, else `None`.
pub(crate) fn equilibration<T: Element>(c: &SymmetricView<'_, T>) -> Option<Vec<i32>> {
    let diagonal = (0..c.order()).map(|j| c.get(j, j));
    let (low, high) = diagonal
        .clone()
        .fold((f64::INFINITY, 0.0f64), |(l, h), d| (l.min(d), h.max(d)));
    // One power of four for the whole of C must itself be an f64 (C near f64's edges:
    // 1e-310·C's 4^k would overflow), else each row takes its own.
    let one_fits = times_power_of_two(1.0, 2 * scale_exponent(std::iter::once(high))).is_normal();
    if !(low > 0.0 && high <= f64::MAX && (high > 100.0 * low || !one_fits)) {
        return None;
    }
    Some(equilibration_exponents(diagonal))
}

/// L's diagonal from L on the host.
fn factor_diagonal(l: &Cholesky) -> Result<Vec<f32>> {
    let l = l.l()?;
    Ok((0..l.rows()).map(|j| l[(j, j)]).collect())
}
