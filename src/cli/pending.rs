//! The two library calls the command line needs that other branches add: the weighted least
//! squares solve and the RFP export of a factor.
//!
//! MERGE: this file is the ONE place to change when those land. Replace the body of each
//! function below with the library call written in its comment; nothing else in the CLI
//! changes, and the `#[ignore]`d end-to-end tests in tests/cli.rs (`solve_*` and
//! `factor_rfp_*`) then check the real results against the CPU reference.

use anyhow::{Result, bail};
use symraster::{Format, Gpu, Matrix};

/// Settings of the refined solve, as the command line reads them.
#[derive(Clone, Copy, Debug)]
pub struct SolveSettings {
    /// Storage format of the factor on the GPU.
    pub format: Format,
    /// Stop when the relative residual falls below this.
    pub tol: f64,
    /// At most this many refinement iterations.
    pub max_iter: usize,
}

/// What the solve gives back: x, the refinement history and whether it reached the tolerance.
#[derive(Clone, Debug)]
pub struct SolveOutcome {
    /// The solution, length m.
    pub x: Vec<f64>,
    /// Refinement iterations done.
    pub iterations: usize,
    /// The residual after each iteration (the last is the final residual).
    pub residuals: Vec<f64>,
    /// Whether the last residual is below the tolerance.
    pub converged: bool,
}

/// Weighted least squares, min ‖D(b − Aᵀx)‖ (paper eq. 2), through the GPU's Cholesky factor of
/// A·D²·Aᵀ and refinement in f64. `d` holds the diagonal of D².
pub fn solve_weighted_least_squares(
    gpu: &Gpu,
    a: &Matrix<f64>,
    d: &[f64],
    b: &[f64],
    settings: SolveSettings,
) -> Result<SolveOutcome> {
    // MERGE: replace the body with
    //   let s = gpu.solve_weighted_least_squares(a, d, b, &symraster::SolveOptions {
    //       format: settings.format, tol: settings.tol, max_iter: settings.max_iter })?;
    //   Ok(SolveOutcome { x: s.x, iterations: s.iterations, residuals: s.residuals,
    //                     converged: s.converged })
    let _ = (gpu, a, d, b);
    log::debug!(
        "solve asked for: {} format, tol {:e}, at most {} iterations",
        settings.format,
        settings.tol,
        settings.max_iter
    );
    bail!(
        "`solve` is not available in this build: this version of the symraster library has no \
         weighted least squares solve"
    )
}

/// The lower-triangular factor `l` as LAPACK's rectangular full packed array (TRANSR='N',
/// UPLO='L'), one-dimensional, m(m+1)/2 values.
pub fn rfp_of_lower(l: &Matrix<f32>) -> Result<Vec<f32>> {
    Ok(symraster::rfp::from_lower(l)?)
}
