//! Algorithm 1: mixed-precision iterative refinement, with the stopping tests of
//! [`Criterion`] and stagnation detection.

use super::Criterion;
use super::design::Design;
use crate::error::{NumericalError, Result};
use crate::matrix::{Element, Matrix, MatrixView};
use crate::scaling::{norm_inf, norm2};
use crate::symmetric::SymmetricView;

/// The normal equations C·x = g of min ‖D(b − Aᵀx)‖₂, C = AD²Aᵀ and g = AD²b, applied in f64
/// straight from A and d (C is never formed: O(mn) per product).
pub struct NormalEquations<'a> {
    a: Laid<'a>,
    d: &'a [f64],
    g: Vec<f64>,
}

/// A as the equations read it: where it lies, or a row-major copy of a view whose rows and
/// columns both have strides.
enum Laid<'a> {
    Borrowed(Design<'a>),
    Copied(Matrix<f64>),
}

impl<'a> NormalEquations<'a> {
    /// The equations of A (m x n: a `&Matrix`, or a [`MatrixView`] read where it lies when its
    /// rows or its columns are contiguous, else copied row-major first), d and b (n each); the
    /// caller has checked the shapes.
    pub fn new(a: impl Into<MatrixView<'a, f64>>, d: &'a [f64], b: &[f64]) -> Self {
        let a = a.into();
        let a = match Design::of(a) {
            Some(design) => Laid::Borrowed(design),
            None => Laid::Copied(a.to_matrix()),
        };
        let db: Vec<f64> = d.iter().zip(b).map(|(d, b)| d * b).collect();
        let mut equations = Self {
            a,
            d,
            g: Vec::new(),
        };
        equations.g = equations.design().times(&db);
        equations
    }

    fn design(&self) -> Design<'_> {
        match &self.a {
            Laid::Borrowed(design) => *design,
            Laid::Copied(a) => Design::Rows(a.into()),
        }
    }

    /// The order m of C.
    pub fn order(&self) -> usize {
        self.design().shape().0
    }

    /// The right side g = AD²b.
    pub fn rhs(&self) -> &[f64] {
        &self.g
    }

    /// C·x = A(d∘(Aᵀx)).
    /// Both products run over all cores (rayon): they are O(mn) each, the CPU's largest share
    /// of a refinement step when the factor and the solves run on the GPU.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        let a = self.design();
        let mut t = a.transposed_times(x);
        for (t, &dk) in t.iter_mut().zip(self.d) {
            *t *= dk;
        }
        a.times(&t)
    }

    /// The residual g − C·x (Algorithm 1's first line), in f64.
    pub fn residual(&self, x: &[f64]) -> Vec<f64> {
        self.g
            .iter()
            .zip(self.apply(x))
            .map(|(g, cx)| g - cx)
            .collect()
    }
}

/// A system C·x = g that refinement and the f64 fallback work on: C applied in f64 from
/// whatever defines it (A and d for the normal equations, C itself for an SPD solve).
pub(crate) trait Equations {
    /// The order m of C.
    fn order(&self) -> usize;
    /// The right side g.
    fn rhs(&self) -> &[f64];
    /// C·x in f64.
    fn apply(&self, x: &[f64]) -> Vec<f64>;
    /// g − C·x in f64.
    fn residual(&self, x: &[f64]) -> Vec<f64> {
        self.rhs()
            .iter()
            .zip(self.apply(x))
            .map(|(g, cx)| g - cx)
            .collect()
    }
}

impl Equations for NormalEquations<'_> {
    fn order(&self) -> usize {
        NormalEquations::order(self)
    }
    fn rhs(&self) -> &[f64] {
        NormalEquations::rhs(self)
    }
    fn apply(&self, x: &[f64]) -> Vec<f64> {
        NormalEquations::apply(self, x)
    }
}

/// C·x = b for a symmetric C given by its lower triangle, applied in f64 (O(m²) per product,
/// rows over all cores; an f32 C widened as it is read).
pub(crate) struct SymmetricEquations<'a, T: Element> {
    c: &'a SymmetricView<'a, T>,
    b: &'a [f64],
}

impl<'a, T: Element> SymmetricEquations<'a, T> {
    /// The system of C (its stored triangle read) and b; the caller has checked the shapes.
    pub(crate) fn new(c: &'a SymmetricView<'a, T>, b: &'a [f64]) -> Self {
        Self { c, b }
    }
}

impl<T: Element> Equations for SymmetricEquations<'_, T> {
    fn order(&self) -> usize {
        self.c.order()
    }
    fn rhs(&self) -> &[f64] {
        self.b
    }
    fn apply(&self, x: &[f64]) -> Vec<f64> {
        self.c.apply(x, |v| v)
    }
}

/// Why refinement stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The test was met.
    Converged,
    /// The corrections stopped shrinking (‖zᵏ‖∞ > ½‖zᵏ⁻¹‖∞, as LAPACK's dgerfsx judges it).
    Stagnated {
        /// The step (0-based) at which it was seen.
        iteration: usize,
    },
    /// The iteration limit came first.
    IterationLimit,
}

/// What [`refine`] returns: the last iterate and its history.
#[derive(Clone, Debug, PartialEq)]
pub struct Refinement {
    /// The last iterate.
    pub x: Vec<f64>,
    /// Steps taken (corrections applied).
    pub iterations: usize,
    /// ‖rᵏ‖₂ per step (the residual the step corrected).
    pub residuals: Vec<f64>,
    /// The test's value per step.
    pub criteria: Vec<f64>,
    /// The normwise backward error of the last iterate.
    pub backward_error: f64,
    /// Why it stopped.
    pub stop: Stop,
}

/// Corrections must shrink at least by this factor per step, else refinement has stagnated.
const STAGNATION_RATIO: f64 = 0.5;

/// The most steps [`refine`] takes past its backward test for the forward error: each gains
/// about −log₁₀ ρ digits, and near ρ = 1/2 further ones gain too little to pay.
const FORWARD_STEPS: usize = 2;

/// Whether another step would still shrink x's forward error past f64's rounding once the
/// backward error is small (LAPACK's xGERFSX estimate): the corrections contract by
/// ρ = ‖zᵏ‖/‖zᵏ⁻¹‖ per step (about κ(C)·u₃₂), so the error left is about ρ/(1 − ρ)·‖zᵏ‖. For a
/// well-conditioned C that is far below rounding at once; for κ(C) near 1/u₃₂ the backward
/// test holds while x may still gain two digits.
fn forward_still_improving(correction: f64, last_correction: f64, x_norm: f64) -> bool {
    let ratio = correction / last_correction;
    ratio < STAGNATION_RATIO && ratio / (1.0 - ratio) * correction > 2.0 * f64::EPSILON * x_norm
}

/// When [`refine`] stops: its test at a tolerance, or a number of steps
/// ([`SolveOptions::stopping`](super::SolveOptions::stopping) for a system of order m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stopping {
    /// The test.
    pub criterion: Criterion,
    /// Its tolerance.
    pub tolerance: f64,
    /// The most steps.
    pub max_iterations: usize,
}

/// Algorithm 1 from x⁰: repeat rᵏ = g − C·xᵏ in f64 (`residual`), zᵏ ≈ C⁻¹·rᵏ through the
/// single-precision factor (`correct`), xᵏ⁺¹ = xᵏ + zᵏ, until `stopping`'s test holds, the
/// corrections stagnate, or its number of steps have run. `norm_c` and `norm_g` are ‖C‖∞ (an
/// estimate) and ‖g‖∞ for the backward error η = ‖r‖∞/(‖C‖∞‖x‖∞ + ‖g‖∞).
///
/// A non-finite residual or iterate is [`NumericalError::RefinementDiverged`].
pub fn refine(
    mut residual: impl FnMut(&[f64]) -> Result<Vec<f64>>,
    mut correct: impl FnMut(&[f64]) -> Result<Vec<f64>>,
    x0: &[f64],
    norm_c: f64,
    norm_g: f64,
    stopping: Stopping,
) -> Result<Refinement> {
    let Stopping {
        criterion,
        tolerance,
        max_iterations,
    } = stopping;
    let eta = |r: &[f64], x: &[f64]| {
        let denominator = norm_c * norm_inf(x) + norm_g;
        if denominator == 0.0 {
            0.0
        } else {
            norm_inf(r) / denominator
        }
    };
    let mut x = x0.to_vec();
    let mut r = residual(&x)?;
    let mut residuals = Vec::new();
    let mut criteria = Vec::new();
    let mut last_correction = f64::INFINITY;
    let mut stop = Stop::IterationLimit;
    let mut forward_steps = 0;
    for k in 0..max_iterations {
        let r_norm = norm2(&r);
        let diverged = |residual| NumericalError::RefinementDiverged {
            iteration: k,
            residual,
        };
        if !r_norm.is_finite() {
            return Err(diverged(r_norm).into());
        }
        let z = correct(&r)?;
        for (x, z) in x.iter_mut().zip(&z) {
            *x += z;
        }
        let x_norm = norm2(&x);
        if !x_norm.is_finite() {
            return Err(diverged(r_norm).into());
        }
        r = residual(&x)?;
        let value = match criterion {
            Criterion::Paper if r_norm == 0.0 => 0.0,
            Criterion::Paper => r_norm / x_norm,
            Criterion::BackwardError => eta(&r, &x),
        };
        residuals.push(r_norm);
        criteria.push(value);
        let correction = norm_inf(&z);
        // Past the test, a step taken for the forward error never turns it into a failure.
        let converged = value <= tolerance;
        if converged {
            stop = Stop::Converged;
            if !(criterion == Criterion::BackwardError
                && forward_steps < FORWARD_STEPS
                && forward_still_improving(correction, last_correction, norm_inf(&x)))
            {
                break;
            }
            forward_steps += 1;
        } else {
            stop = Stop::IterationLimit;
        }
        if correction > STAGNATION_RATIO * last_correction {
            if !converged {
                stop = Stop::Stagnated { iteration: k };
            }
            break;
        }
        last_correction = correction;
    }
    Ok(Refinement {
        backward_error: eta(&r, &x),
        iterations: residuals.len(),
        x,
        residuals,
        criteria,
        stop,
    })
}

/// A·v, one row per task over all cores.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::least_squares::{UNIT_ROUNDOFF, relative_error_vec, to_single};
    use crate::problems::random_least_squares;
    use crate::reference;

    #[test]
    fn symmetric_products_read_only_the_lower_triangle() {
        for m in [1, 2, 3, 7, 8, 9, 17, 130] {
            let full = Matrix::from_fn(m, m, |i, j| {
                let (i, j) = (i.max(j), i.min(j));
                ((i * 7 + j * 3) % 11) as f64 - 5.0 + if i == j { 20.0 } else { 0.0 }
            });
            // Garbage above the diagonal, which must not be read.
            let c = Matrix::from_fn(m, m, |i, j| if j > i { f64::NAN } else { full[(i, j)] });
            let x: Vec<f64> = (0..m).map(|i| (i as f64 * 0.37).sin()).collect();
            let c = SymmetricView::lower(&c);
            let y = c.apply(&x, |v| v);
            let norm: f64 = (0..m)
                .map(|j| (0..m).map(|i| full[(i, j)].abs()).sum::<f64>())
                .fold(0.0, f64::max);
            assert!((c.norm_1() - norm).abs() <= 1e-12 * norm, "m {m}");
            for i in 0..m {
                let want: f64 = (0..m).map(|k| full[(i, k)] * x[k]).sum();
                assert!((y[i] - want).abs() <= 1e-12 * norm, "m {m} row {i}");
            }
        }
    }

    #[test]
    fn residual_matches_explicit_product() {
        let p = random_least_squares(3, 5);
        let x: Vec<f64> = (0..5).map(|i| i as f64 - 2.0).collect();
        let eq = NormalEquations::new(&p.a, &p.d, &p.b);
        let c = reference::assemble(&p.a, &p.d).symmetric_from_lower();
        let r = eq.residual(&x);
        for i in 0..5 {
            let cx: f64 = (0..5).map(|j| c[(i, j)] * x[j]).sum();
            let g = eq.rhs()[i];
            assert!((r[i] - (g - cx)).abs() <= 1e-12 * g.abs().max(1.0));
        }
    }

    /// The CPU stand-in for the GPU factor: the f64 factor rounded to f32.
    fn single_factor(p: &crate::problems::LeastSquaresProblem) -> Matrix<f32> {
        let c = reference::assemble(&p.a, &p.d);
        reference::cholesky(&c).unwrap().to_f32()
    }

    /// x with L·Lᵀ·x = b by forward and back substitution in f32, as the GPU solves.
    fn solve_single(l: &Matrix<f32>, b: &[f32]) -> Vec<f32> {
        let m = b.len();
        let mut y = b.to_vec();
        for i in 0..m {
            let s: f32 = (0..i).map(|k| l[(i, k)] * y[k]).sum();
            y[i] = (y[i] - s) / l[(i, i)];
        }
        for i in (0..m).rev() {
            let s: f32 = (i + 1..m).map(|k| l[(k, i)] * y[k]).sum();
            y[i] = (y[i] - s) / l[(i, i)];
        }
        y
    }

    fn run(criterion: Criterion, tolerance: f64, max: usize) -> (Refinement, Vec<f64>, Vec<f64>) {
        let p = random_least_squares(7, 24);
        let eq = NormalEquations::new(&p.a, &p.d, &p.b);
        let l = single_factor(&p);
        let x_ref =
            crate::least_squares::solve_normal_equations_reference(&p.a, &p.d, &p.b).unwrap();
        let x0: Vec<f64> = solve_single(&l, &to_single(eq.rhs()))
            .into_iter()
            .map(f64::from)
            .collect();
        let norm_c = super::super::estimate_norm_1(eq.order(), |v| eq.apply(v));
        let out = refine(
            |x| Ok(eq.residual(x)),
            |r| {
                Ok(solve_single(&l, &to_single(r))
                    .into_iter()
                    .map(f64::from)
                    .collect())
            },
            &x0,
            norm_c,
            norm_inf(eq.rhs()),
            Stopping {
                criterion,
                tolerance,
                max_iterations: max,
            },
        )
        .unwrap();
        (out, x0, x_ref)
    }

    #[test]
    fn refinement_with_single_factor_reaches_double_accuracy() {
        for (criterion, tolerance) in [
            (Criterion::Paper, 1e-8),
            (Criterion::BackwardError, 5.0 * UNIT_ROUNDOFF),
        ] {
            let (out, x0, x_ref) = run(criterion, tolerance, 100);
            assert_eq!(
                out.stop,
                Stop::Converged,
                "{criterion:?}: {:?}",
                out.criteria
            );
            assert_eq!(out.iterations, out.residuals.len());
            assert!(relative_error_vec(&x0, &x_ref) > 1e-9);
            assert!(relative_error_vec(&out.x, &x_ref) < 1e-10, "{criterion:?}");
            assert!(out.backward_error < 1e-14, "{:e}", out.backward_error);
        }
    }

    #[test]
    fn an_unreachable_tolerance_stagnates_instead_of_running_on() {
        let (out, _, x_ref) = run(Criterion::BackwardError, 0.0, 1000);
        assert!(matches!(out.stop, Stop::Stagnated { .. }), "{:?}", out.stop);
        assert!(out.iterations < 20, "{} steps", out.iterations);
        assert!(relative_error_vec(&out.x, &x_ref) < 1e-10);
    }

    #[test]
    fn the_limit_is_reported() {
        let (out, _, _) = run(Criterion::Paper, 1e-300, 1);
        assert_eq!((out.stop, out.iterations), (Stop::IterationLimit, 1));
    }
}
