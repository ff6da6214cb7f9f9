//! Weighted least squares min ‖D(b − Aᵀx)‖₂ (section 2) through the normal equations
//! AD²Aᵀx = AD²b (3): AD²Aᵀ and its Cholesky factor on the GPU in single precision, then
//! mixed-precision iterative refinement on the CPU (Algorithm 1, section 5.3).
//!
//! Where each step runs, and in which precision:
//! - GPU, f32: C = AD²Aᵀ (Algorithm 3) and C = LLᵀ (Algorithm 5), C kept on the GPU; A and d
//!   go up (rounded to f32), only L comes back.
//! - CPU, f64: the right side AD²b, and every residual rᵏ = AD²b − A(d∘(Aᵀxᵏ)) from the f64 A, d
//!   and b (never from the f32 C), O(mn) each.
//! - CPU, f32: the triangular solves Ly = single(r), Lᵀz = y (forward, then back substitution)
//!   with the f32 L and f32 arithmetic, as Algorithm 1 has it ("L in single precision"), O(m²).
//! - CPU, f64: the update xᵏ⁺¹ = xᵏ + double(z) and the stopping test ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ ≤ ε.

pub mod normal_equations;

pub use normal_equations::{
    solve_normal_equations_faer, solve_normal_equations_reference, solve_with_factor,
};

use crate::error::{Error, InputError, NumericalError, Result};
use crate::gpu::{CholeskyFactor, Options};
use crate::layout::Format;
use crate::matrix::{Matrix, check_finite, check_finite_vec, check_non_empty};
use std::time::Duration;

/// Options of [`crate::Gpu::solve_weighted_least_squares`]: the GPU's format and method, and
/// Algorithm 1's tolerance ε and iteration limit (the paper's 10⁻⁸ and 100 by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveOptions {
    /// Storage format and method of the GPU assembly and factorization.
    pub gpu: Options,
    /// Stop when ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ ≤ ε.
    pub epsilon: f64,
    /// Stop after this many refinement steps at the latest (at least 1).
    pub max_iterations: usize,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            gpu: Options::default(),
            epsilon: 1e-8,
            max_iterations: 100,
        }
    }
}

impl SolveOptions {
    /// The paper's settings: full format, ε = 10⁻⁸, at most 100 iterations.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options with another storage format.
    pub fn format(mut self, format: Format) -> Self {
        self.gpu.format = format;
        self
    }

    /// The same options with other GPU options.
    pub fn gpu(mut self, gpu: impl Into<Options>) -> Self {
        self.gpu = gpu.into();
        self
    }

    /// The same options with another tolerance ε.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// The same options with another iteration limit.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Checks that ε is finite and not negative and that at least one iteration is allowed.
    pub fn validate(&self) -> Result<()> {
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(Error::from(InputError::InvalidOption(format!(
                "the refinement tolerance ε must be finite and ≥ 0, not {}",
                self.epsilon
            ))));
        }
        if self.max_iterations == 0 {
            return Err(Error::from(InputError::InvalidOption(
                "the iteration limit must be at least 1 (Algorithm 1 always refines once)".into(),
            )));
        }
        Ok(())
    }
}

/// Wall-clock times of one solve, counted as section 5.3 counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Rounding A and d to f32, uploading them, assembling and factoring on the GPU, reading L
    /// back and checking it.
    pub factor: Duration,
    /// `factor` plus AD²b and the two triangular solves: the time to x⁰ (Tables 1-2's "x⁰_sgl").
    pub x0: Duration,
    /// Algorithm 1's loop (Tables 1-2's "Refine").
    pub refine: Duration,
    /// Everything (x⁰ plus refinement; Tables 1-2's GPU "Total").
    pub total: Duration,
}

/// The result of [`crate::Gpu::solve_weighted_least_squares`].
///
/// `converged == false` means the iteration limit was reached first: `x` is then the last
/// iterate, and `criteria` shows how far from ε it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The refined solution x (double precision).
    pub x: Vec<f64>,
    /// The single-precision solution x⁰ from the GPU factor (widened to f64).
    pub x0: Vec<f64>,
    /// Refinement steps taken (k at the end of Algorithm 1).
    pub iterations: usize,
    /// ‖rᵏ‖₂ for k = 0..iterations.
    pub residuals: Vec<f64>,
    /// The stopping quantity ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ for k = 0..iterations.
    pub criteria: Vec<f64>,
    /// Whether the last criterion reached ε within the iteration limit.
    pub converged: bool,
    /// Where the time went.
    pub timings: Timings,
}

/// What Algorithm 1 returns: the refined x and its history.
#[derive(Clone, Debug, PartialEq)]
pub struct Refinement {
    /// The last iterate.
    pub x: Vec<f64>,
    /// Steps taken.
    pub iterations: usize,
    /// ‖rᵏ‖₂ per step.
    pub residuals: Vec<f64>,
    /// ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ per step.
    pub criteria: Vec<f64>,
    /// Whether a criterion reached ε.
    pub converged: bool,
}

/// Checks a least-squares problem: A non-empty, d and b with one entry per column of A, all
/// finite.
pub fn check_problem(a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<()> {
    check_non_empty("A", a)?;
    let (m, n) = a.shape();
    for (name, v) in [("d", d), ("b", b)] {
        if v.len() != n {
            return Err(Error::shape(format!(
                "A is {m}x{n}, so {name} needs {n} entries (one per column of A), but has {}",
                v.len()
            )));
        }
    }
    check_finite("A", a)?;
    check_finite_vec("d", d)?;
    check_finite_vec("b", b)
}

/// AD²b in f64: the right side of the normal equations (3).
pub fn normal_rhs(a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Vec<f64> {
    let db: Vec<f64> = d.iter().zip(b).map(|(d, b)| d * b).collect();
    (0..a.rows()).map(|i| dot(a.row(i), &db)).collect()
}

/// rᵏ = AD²b − A(d∘(Aᵀx)) in f64 from A and d themselves (Algorithm 1's first line), O(mn).
/// `g` is AD²b.
pub fn normal_residual(a: &Matrix<f64>, d: &[f64], g: &[f64], x: &[f64]) -> Vec<f64> {
    let (m, n) = a.shape();
    let mut t = vec![0.0; n];
    for (i, &xi) in x.iter().enumerate().take(m) {
        for (t, &aik) in t.iter_mut().zip(a.row(i)) {
            *t += aik * xi;
        }
    }
    for (t, &dk) in t.iter_mut().zip(d) {
        *t *= dk;
    }
    (0..m).map(|i| g[i] - dot(a.row(i), &t)).collect()
}

/// Algorithm 1, mixed-precision iterative refinement: from x⁰, repeat rᵏ = g − AD²Aᵀxᵏ in f64,
/// solve LLᵀz = single(rᵏ) in f32, xᵏ⁺¹ = xᵏ + double(z), until ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ ≤ ε or
/// `max_iterations` steps. `g` is AD²b, `factor` the single-precision factor.
///
/// Reaching the limit is reported (`converged == false`); a non-finite residual or iterate is
/// [`NumericalError::RefinementDiverged`].
pub fn refine(
    a: &Matrix<f64>,
    d: &[f64],
    g: &[f64],
    factor: &CholeskyFactor,
    x0: &[f64],
    epsilon: f64,
    max_iterations: usize,
) -> Result<Refinement> {
    let mut x = x0.to_vec();
    let mut residuals = Vec::new();
    let mut criteria = Vec::new();
    let mut converged = false;
    for k in 0..max_iterations {
        let r = normal_residual(a, d, g, &x);
        let r_norm = norm(&r);
        if !r_norm.is_finite() {
            return Err(Error::from(NumericalError::RefinementDiverged {
                iteration: k,
                residual: r_norm,
            }));
        }
        let z = factor.solve(&to_single(&r))?;
        for (x, &z) in x.iter_mut().zip(&z) {
            *x += f64::from(z);
        }
        let x_norm = norm(&x);
        if !x_norm.is_finite() {
            return Err(Error::from(NumericalError::RefinementDiverged {
                iteration: k,
                residual: r_norm,
            }));
        }
        let criterion = if r_norm == 0.0 { 0.0 } else { r_norm / x_norm };
        residuals.push(r_norm);
        criteria.push(criterion);
        if criterion <= epsilon {
            converged = true;
            break;
        }
    }
    Ok(Refinement {
        x,
        iterations: residuals.len(),
        residuals,
        criteria,
        converged,
    })
}

/// The tolerance under which a single-precision pivot ratio L(j,j)²/C(j,j) means AD²Aᵀ is
/// numerically singular: 32·2⁻²⁴ ≈ 1.9e-6. A pivot of an exactly singular C (say, two equal
/// rows of A) is rounding noise of a few 2⁻²⁴·C(j,j); the paper's ill-conditioned problems keep
/// ratios near 1e-4 at every size (measured up to m = 512), so this separates the two with
/// margins of about ten and fifty. It does not depend on m: an m-scaled tolerance such as
/// 8·m·2⁻²⁴ would reject those ill-conditioned problems from m ≈ 256 on.
pub fn pivot_tolerance() -> f64 {
    32.0 * f64::from(f32::EPSILON) / 2.0
}

/// The diagonal of AD²Aᵀ in f64: Σₖ A(j,k)² d(k), O(mn).
pub fn product_diagonal(a: &Matrix<f64>, d: &[f64]) -> Vec<f64> {
    (0..a.rows())
        .map(|j| a.row(j).iter().zip(d).map(|(a, d)| a * a * d).sum())
        .collect()
}

/// Rejects a factor whose pivot ratio L(j,j)²/C(j,j) is at or below [`pivot_tolerance`]:
/// [`NumericalError::NumericallySingular`] with the first such column.
pub fn check_pivots(factor: &CholeskyFactor, diagonal: &[f64]) -> Result<()> {
    let (l, m) = (factor.l(), factor.order());
    let tolerance = pivot_tolerance();
    for (j, &c) in diagonal.iter().enumerate().take(m) {
        let pivot = f64::from(l[(j, j)]);
        let ratio = pivot * pivot / c;
        if ratio.is_nan() || ratio <= tolerance {
            return Err(Error::from(NumericalError::NumericallySingular {
                column: j,
                ratio,
                tolerance,
            }));
        }
    }
    Ok(())
}

/// ‖x − y‖₂/‖y‖₂ for vectors (‖x − y‖₂ when y = 0), as section 5.3 measures x against x_CPU.
pub fn relative_error_vec(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "relative_error_vec: lengths differ");
    let diff: Vec<f64> = x.iter().zip(y).map(|(x, y)| x - y).collect();
    let base = norm(y);
    if base == 0.0 {
        norm(&diff)
    } else {
        norm(&diff) / base
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|v| v * v).sum::<f64>().sqrt()
}

pub(crate) fn to_single(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&v| v as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::random_least_squares;
    use crate::reference;

    #[test]
    fn residual_matches_explicit_product() {
        let p = random_least_squares(3, 5);
        let x: Vec<f64> = (0..5).map(|i| i as f64 - 2.0).collect();
        let g = normal_rhs(&p.a, &p.d, &p.b);
        let c = reference::assemble(&p.a, &p.d).symmetric_from_lower();
        let r = normal_residual(&p.a, &p.d, &g, &x);
        for i in 0..5 {
            let cx: f64 = (0..5).map(|j| c[(i, j)] * x[j]).sum();
            assert!((r[i] - (g[i] - cx)).abs() <= 1e-12 * g[i].abs().max(1.0));
        }
    }

    #[test]
    fn refinement_with_single_factor_reaches_double_accuracy() {
        // The CPU stand-in for the GPU factor: the f64 factor rounded to f32.
        let p = random_least_squares(7, 24);
        let c = reference::assemble(&p.a, &p.d);
        let l = CholeskyFactor::new(reference::cholesky(&c).unwrap().to_f32());
        let g = normal_rhs(&p.a, &p.d, &p.b);
        let x_ref = normal_equations::solve_with_factor(&reference::cholesky(&c).unwrap(), &g);
        let x0: Vec<f64> = l
            .solve(&to_single(&g))
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let out = refine(&p.a, &p.d, &g, &l, &x0, 1e-8, 100).unwrap();
        assert!(out.converged, "{:?}", out.criteria);
        assert_eq!(out.iterations, out.residuals.len());
        assert!(relative_error_vec(&x0, &x_ref) > 1e-9);
        assert!(relative_error_vec(&out.x, &x_ref) < 1e-10);
    }

    #[test]
    fn options_are_validated() {
        assert!(SolveOptions::new().validate().is_ok());
        assert!(matches!(
            SolveOptions::new().epsilon(f64::NAN).validate(),
            Err(Error::Input(InputError::InvalidOption(_)))
        ));
        assert!(matches!(
            SolveOptions::new().max_iterations(0).validate(),
            Err(Error::Input(InputError::InvalidOption(_)))
        ));
    }

    #[test]
    fn problems_are_validated() {
        let p = random_least_squares(1, 3);
        assert!(check_problem(&p.a, &p.d, &p.b).is_ok());
        assert!(matches!(
            check_problem(&p.a, &p.d[..5], &p.b),
            Err(Error::Input(InputError::Shape(_)))
        ));
        let mut b = p.b.clone();
        b[2] = f64::INFINITY;
        assert!(matches!(
            check_problem(&p.a, &p.d, &b),
            Err(Error::Input(InputError::NonFinite { .. }))
        ));
        let empty = Matrix::<f64>::zeros(0, 4);
        assert!(matches!(
            check_problem(&empty, &p.d[..4], &p.b[..4]),
            Err(Error::Input(InputError::Empty { .. }))
        ));
    }
}
