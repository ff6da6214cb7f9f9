//! Weighted least squares through the GPU's factor (section 5.3); Algorithm 1's refinement
//! itself is in [`crate::least_squares`].

use super::{CholeskyFactor, Gpu, Method, TiledFactor};
use crate::error::{NumericalError, Result};
use crate::least_squares::{
    Criterion, Fallback, NormalEquations, Solution, SolveOptions, Stop, Timings, check_pivots,
    check_problem, estimate_inverse_norm_1, estimate_norm_1, norm_inf, norm2, product_diagonal,
    refine, solve_normal_equations_faer,
};
use crate::matrix::{Matrix, check_finite, check_finite_vec};
use std::time::Instant;

impl Gpu {
    /// Solves min ‖D(b − Aᵀx)‖₂ (section 2): C = AD²Aᵀ and its factor L on the GPU in single
    /// precision, x⁰ by forward and back substitution, then Algorithm 1's mixed-precision
    /// refinement until the options' test holds (see the [module docs](crate::least_squares)
    /// for where each step runs and when it stops). Stagnation or the iteration limit hand over
    /// to an f64 Cholesky on the CPU unless `options.fallback` is off; the solution says so.
    ///
    /// `a` is m x n (m ≤ n for a unique solution), `d` the n diagonal entries of D² (the
    /// paper's texture d), `b` the n observations. A singular or numerically singular AD²Aᵀ
    /// gives [`NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite) or
    /// [`NumericallySingular`](crate::NumericalError::NumericallySingular).
    pub fn solve_weighted_least_squares(
        &self,
        a: &Matrix<f64>,
        d: &[f64],
        b: &[f64],
        options: &SolveOptions,
    ) -> Result<Solution> {
        options.validate()?;
        check_problem(a, d, b)?;
        let start = Instant::now();
        let mut phase = Phases::new(start);
        // C's diagonal, once: it sets the range scaling and checks the factor's pivots.
        let diagonal = product_diagonal(a, d);
        let scaling = RangeScaling::of(&diagonal, d)?;
        let d32: Vec<f32> = d.iter().map(|&v| (v * scaling.d) as f32).collect();
        check_finite_vec(
            "d (scaled and rounded to single precision for the GPU)",
            &d32,
        )?;
        let method = self.check_problem_size(a.rows(), a.cols(), options.gpu)?;
        phase.mark("diagonal, scaling");
        // The tiled method keeps everything on the GPU: A goes up once in f64 (residuals) and
        // is rounded to f32 there for the factor; C and L stay there, corrections are solved
        // there; only L's diagonal comes back, for the pivot check. Where the device cannot
        // hold A in f64, residuals run on the CPU and A goes up in f32.
        let device_residual = match method {
            Method::Tiled => match self.device_residual(a, d, b) {
                Ok(r) => Some(r),
                Err(e) => {
                    log::info!("residuals on the CPU: {e}");
                    None
                }
            },
            _ => None,
        };
        phase.mark("A, d, b to the GPU in f64, AD²b");
        let single_a = || {
            let a32 = a.map(|v| (v * scaling.a) as f32);
            check_finite(
                "A (scaled and rounded to single precision for the GPU)",
                &a32,
            )?;
            Ok::<_, crate::Error>(a32)
        };
        let format = options.gpu.format;
        let factor_l = match (method, &device_residual) {
            (Method::Tiled, Some(device)) if scaling.fits_single(max_abs(a)) => {
                let exponent = scaling.a.log2() as i32;
                let a32 = device.single_precision_a(exponent)?;
                Factor::Device(self.factor_product_tiled_on_device(a32, a.shape(), &d32, format)?)
            }
            (Method::Tiled, _) => {
                Factor::Device(self.factor_product_tiled(&single_a()?, &d32, format)?)
            }
            _ => {
                Factor::Host(self.factor_product(&single_a()?, &d32, options.gpu.method(method))?)
            }
        };
        phase.mark("assembly, Cholesky (queued)");
        let pivots = match &factor_l {
            Factor::Device(f) => self.tiled_diagonal(f)?,
            Factor::Host(l) => (0..l.order()).map(|j| l.l()[(j, j)]).collect(),
        };
        let c_scale = scaling.a * scaling.a * scaling.d;
        let scaled_diagonal: Vec<f64> = diagonal.iter().map(|c| c * c_scale).collect();
        check_pivots(&pivots, &scaled_diagonal)?;
        let factor = start.elapsed();
        phase.mark("factor done, pivots checked");

        // The CPU's products, only where the GPU does not form them.
        let host_equations = std::cell::OnceCell::new();
        let equations = || host_equations.get_or_init(|| NormalEquations::new(a, d, b));
        let rhs: &[f64] = match &device_residual {
            Some(device) => device.rhs(),
            None => equations().rhs(),
        };
        let m = a.rows();
        let correct = |r: &[f64]| scaling.correct_with(r, |v| factor_l.solve(v));
        let x0 = correct(rhs)?;
        let x0_time = start.elapsed();
        phase.mark("x⁰");

        let mut failure = None;
        let norm_c = estimate_norm_1(m, |v| match &device_residual {
            Some(device) => device.apply(v).unwrap_or_else(|e| {
                failure.get_or_insert(e);
                vec![f64::NAN; m]
            }),
            None => equations().apply(v),
        });
        if let Some(e) = failure {
            return Err(e);
        }
        phase.mark("‖C‖₁ estimate");
        let tolerance = options.tolerance_for(m);
        let refinement = refine(
            |x| match &device_residual {
                Some(device) => device.residual(x),
                None => Ok(equations().residual(x)),
            },
            correct,
            &x0,
            norm_c,
            norm_inf(rhs),
            options.criterion,
            tolerance,
            options.max_iterations,
        )?;
        let refine_time = start.elapsed() - x0_time;
        phase.mark("refinement");

        let fallback = match refinement.stop {
            Stop::Converged => None,
            _ if !options.fallback => None,
            Stop::Stagnated { iteration } => Some(Fallback::Stagnated { iteration }),
            Stop::IterationLimit => Some(Fallback::IterationLimit),
        };
        let (x, backward_error) = match fallback {
            None => (refinement.x, refinement.backward_error),
            Some(reason) => {
                log::warn!(
                    "refinement stopped ({reason:?}) at backward error {:.2e}: solving again \
                     with an f64 Cholesky on the CPU",
                    refinement.backward_error
                );
                let x = solve_normal_equations_faer(a, d, b)?;
                let eta =
                    norm_inf(&equations().residual(&x)) / (norm_c * norm_inf(&x) + norm_inf(rhs));
                (x, eta)
            }
        };
        let converged = match (fallback, options.criterion) {
            (None, _) => refinement.stop == Stop::Converged,
            (Some(_), Criterion::BackwardError) => backward_error <= tolerance,
            (Some(_), Criterion::Paper) => {
                norm2(&equations().residual(&x)) <= tolerance * norm2(&x)
            }
        };
        // ‖C⁻¹‖ = 4^e·2^f·‖C'⁻¹‖, C' the scaled matrix the factor belongs to; the estimate's
        // few solves run where the factor is (its accuracy needs only a digit or two).
        let mut failure = None;
        let inverse_norm = estimate_inverse_norm_1(m, |v| {
            let single: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            match factor_l.solve(&single) {
                Ok(z) => z.into_iter().map(f64::from).collect(),
                Err(e) => {
                    failure.get_or_insert(e);
                    vec![f64::NAN; m]
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let condition = norm_c * c_scale * inverse_norm;
        phase.mark("‖C⁻¹‖₁ estimate");
        Ok(Solution {
            x,
            x0,
            iterations: refinement.iterations,
            residuals: refinement.residuals,
            criteria: refinement.criteria,
            criterion: options.criterion,
            tolerance,
            converged,
            backward_error,
            condition,
            forward_error_estimate: condition * backward_error,
            fallback,
            timings: Timings {
                factor,
                x0: x0_time,
                refine: refine_time,
                total: start.elapsed(),
            },
        })
    }
}

/// The single-precision factor of C', kept on the GPU (tiled) or read back (the rasterizing
/// methods): where x⁰, the corrections and the condition estimate's solves run.
enum Factor {
    Device(TiledFactor),
    Host(CholeskyFactor),
}

impl Factor {
    /// L·Lᵀ·x = b where the factor is.
    fn solve(&self, b: &[f32]) -> Result<Vec<f32>> {
        match self {
            Factor::Device(f) => f.solve(b),
            Factor::Host(l) => l.solve(b),
        }
    }
}

/// Powers of two that bring A and d, and so C = A·diag(d)·Aᵀ, into f32's range for the GPU:
/// A' = 2^e·A and d' = 2^f·d give C' = 4^e·2^f·C. Scaling by powers of two is exact, so
/// wherever the unscaled data would have fit, every f32 result is the exact scaled image of
/// the unscaled one (the paper's tables do not change); where it would not, the solve works
/// instead of overflowing or flushing to zero. The refinement itself runs on the unscaled
/// f64 data.
struct RangeScaling {
    /// 2^e.
    a: f64,
    /// 2^f.
    d: f64,
}

impl RangeScaling {
    /// Scales so the largest |d| and the largest diagonal entry of C' are near 1. Fails when
    /// the diagonal's own spread exceeds f32's range (no common scale fits it).
    /// `c_diagonal` is the diagonal of the unscaled C = A·diag(d)·Aᵀ.
    fn of(c_diagonal: &[f64], d: &[f64]) -> Result<Self> {
        let power = |x: f64| {
            if x > 0.0 {
                2f64.powi(-(x.log2().round() as i32))
            } else {
                1.0
            }
        };
        let d_scale = power(d.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
        let diagonal: Vec<f64> = c_diagonal.iter().map(|c| c * d_scale).collect();
        let c_max = diagonal.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
        // sqrt keeps it a power of two: A is scaled by 2^e, C by 4^e.
        let a_scale = power(c_max).sqrt();
        let a_scale = 2f64.powi(a_scale.log2().round() as i32);
        let c_scale = a_scale * a_scale;
        if let Some((j, &c)) = diagonal
            .iter()
            .enumerate()
            .find(|(_, c)| **c != 0.0 && (c.abs() * c_scale) < f64::from(f32::MIN_POSITIVE))
        {
            return Err(NumericalError::OutOfRange {
                what: "C = A·diag(d)·Aᵀ",
                row: j,
                col: j,
                value: c / d_scale,
                why: format!(
                    "more than float32's range ({:.0e}) below its largest diagonal entry \
                     {:.3e}",
                    f64::from(f32::MAX) / f64::from(f32::MIN_POSITIVE),
                    c_max / d_scale
                ),
                fix: "scale the rows of A to similar norms",
            }
            .into());
        }
        Ok(Self {
            a: a_scale,
            d: d_scale,
        })
    }

    /// Whether 2^e·max|A| rounds to a finite single-precision number.
    fn fits_single(&self, max_abs_a: f64) -> bool {
        max_abs_a * self.a < f64::from(f32::MAX)
    }

    /// z = C⁻¹·r through `solve`, the single-precision factor of C' (Algorithm 1's solve, on
    /// the CPU or the GPU): C·z = r ⇔ C'·(z/2^e) = 2^e·2^f·r.
    fn correct_with(
        &self,
        r: &[f64],
        solve: impl FnOnce(&[f32]) -> Result<Vec<f32>>,
    ) -> Result<Vec<f64>> {
        let into = self.a * self.d;
        let single: Vec<f32> = r.iter().map(|&v| (v * into) as f32).collect();
        Ok(solve(&single)?
            .into_iter()
            .map(|v| f64::from(v) * self.a)
            .collect())
    }
}

/// max |A(i,j)|, on all cores.
fn max_abs(a: &Matrix<f64>) -> f64 {
    use rayon::prelude::*;
    a.as_slice()
        .par_chunks(1 << 16)
        .map(|c| c.iter().fold(0.0f64, |m, v| m.max(v.abs())))
        .reduce(|| 0.0, f64::max)
}

/// Debug-level timing of the solve's phases (`RUST_LOG=symraster=debug`): where the time goes.
struct Phases {
    last: Instant,
}

impl Phases {
    fn new(start: Instant) -> Self {
        Self { last: start }
    }

    /// Logs the time since the last mark under `name`.
    fn mark(&mut self, name: &str) {
        let now = Instant::now();
        log::debug!(
            "least squares: {name}: {:.2} ms",
            (now - self.last).as_secs_f64() * 1e3
        );
        self.last = now;
    }
}
