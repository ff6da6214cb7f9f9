//! Weighted least squares through the GPU's factor (section 5.3); Algorithm 1's refinement
//! itself is in [`crate::least_squares`].

use super::{CholeskyFactor, Gpu};
use crate::error::Result;
use crate::least_squares::{
    Criterion, Fallback, NormalEquations, Solution, SolveOptions, Stop, Timings, check_pivots,
    check_problem, estimate_inverse_norm_1, estimate_norm_1, norm_inf, norm2, product_diagonal,
    refine, solve_normal_equations_faer, solve_with_factor, to_single,
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
        let a32 = a.to_f32();
        let d32 = to_single(d);
        check_finite("A (rounded to single precision for the GPU)", &a32)?;
        check_finite_vec("d (rounded to single precision for the GPU)", &d32)?;
        let l = self.factor_product(&a32, &d32, options.gpu)?;
        check_pivots(&l, &product_diagonal(a, d))?;
        let factor = start.elapsed();

        let equations = NormalEquations::new(a, d, b);
        let m = equations.order();
        let x0 = solve_single(&l, equations.rhs())?;
        let x0_time = start.elapsed();

        let norm_c = estimate_norm_1(m, |v| equations.apply(v));
        let tolerance = options.tolerance_for(m);
        let refinement = refine(
            |x| Ok(equations.residual(x)),
            |r| solve_single(&l, r),
            &x0,
            norm_c,
            norm_inf(equations.rhs()),
            options.criterion,
            tolerance,
            options.max_iterations,
        )?;
        let refine_time = start.elapsed() - x0_time;

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
                let eta = norm_inf(&equations.residual(&x))
                    / (norm_c * norm_inf(&x) + norm_inf(equations.rhs()));
                (x, eta)
            }
        };
        let converged = match (fallback, options.criterion) {
            (None, _) => refinement.stop == Stop::Converged,
            (Some(_), Criterion::BackwardError) => backward_error <= tolerance,
            (Some(_), Criterion::Paper) => norm2(&equations.residual(&x)) <= tolerance * norm2(&x),
        };
        let l64 = l.l().to_f64();
        let condition = norm_c * estimate_inverse_norm_1(m, |v| solve_with_factor(&l64, v));
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

/// z = (LLᵀ)⁻¹·r in single precision (Algorithm 1's solve), widened back to f64.
fn solve_single(l: &CholeskyFactor, r: &[f64]) -> Result<Vec<f64>> {
    Ok(l.solve(&to_single(r))?.into_iter().map(f64::from).collect())
}
