//! Weighted least squares through the GPU's factor (section 5.3); Algorithm 1's refinement
//! itself is in [`crate::least_squares`].

use super::Gpu;
use crate::error::Result;
use crate::least_squares::{
    Solution, SolveOptions, Timings, check_pivots, check_problem, normal_rhs, product_diagonal,
    refine, to_single,
};
use crate::matrix::{Matrix, check_finite, check_finite_vec};
use std::time::Instant;

impl Gpu {
    /// Solves min ‖D(b − Aᵀx)‖₂ (section 2): C = AD²Aᵀ and its factor L on the GPU in single
    /// precision, x⁰ by forward and back substitution, then Algorithm 1's mixed-precision
    /// refinement to ε (see the [module docs](crate::least_squares) for where each step runs).
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

        let g = normal_rhs(a, d, b);
        let x0: Vec<f64> = l
            .solve(&to_single(&g))?
            .into_iter()
            .map(f64::from)
            .collect();
        let x0_time = start.elapsed();

        let refinement = refine(a, d, &g, &l, &x0, options.epsilon, options.max_iterations)?;
        let total = start.elapsed();
        Ok(Solution {
            x: refinement.x,
            x0,
            iterations: refinement.iterations,
            residuals: refinement.residuals,
            criteria: refinement.criteria,
            converged: refinement.converged,
            timings: Timings {
                factor,
                x0: x0_time,
                refine: total - x0_time,
                total,
            },
        })
    }
}
