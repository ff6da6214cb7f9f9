//! Weighted least squares min ‖D(b − Aᵀx)‖₂ (section 2) through the normal equations
//! C·x = g with C = AD²Aᵀ and g = AD²b (eq. 3): C and its Cholesky factor on the GPU in single
//! precision, then mixed-precision iterative refinement in double (Algorithm 1, section 5.3).
//!
//! Where each step runs, and in which precision:
//! - GPU, f32: C = AD²Aᵀ and C = LLᵀ, C kept on the GPU; A and d go up (rounded to f32), only
//!   L comes back.
//! - CPU, f64: g = AD²b, and every residual rᵏ = g − A(d∘(Aᵀxᵏ)) from the f64 A, d and b (never
//!   from the f32 C), O(mn) each.
//! - CPU, f32: the triangular solves L·y = single(r), Lᵀ·z = y with the f32 L, as Algorithm 1
//!   has it ("L in single precision"), O(m²).
//! - CPU, f64: the update xᵏ⁺¹ = xᵏ + double(z) and the stopping test ([`Criterion`]).
//!
//! That is the paper's placement ([`SpdFactor::Single`], [`SolveOptions::paper`]). The tiled
//! method forms the residuals and the solves on the GPU, and up to order
//! [`SpdFactor::DOUBLE_UP_TO`] by default it assembles C in f64 there from A and d held in f64,
//! factors it in f64 and forms L⁻¹ beside it: x⁰ and each correction are products with L⁻¹,
//! refined as LAPACK's dporfs ([`SpdFactor::Double`]).
//!
//! **When refinement stops.** By default ([`Criterion::BackwardError`]) when the normwise
//! backward error η = ‖r‖∞ / (‖C‖∞·‖x‖∞ + ‖g‖∞) falls to √m·u (u = 2⁻⁵³), as LAPACK's
//! dsposv decides: a test that does not change when A, d or b are scaled. The paper's rule,
//! ‖r‖₂/‖x‖₂ ≤ ε, is [`Criterion::Paper`]; it depends on the data's scale and is kept for
//! reproducing Tables 1-2. When the corrections stop shrinking (stagnation: C is too
//! ill-conditioned for a single-precision factor) or the iteration limit is reached, the solve
//! falls back to an f64 Cholesky on the CPU and says so in [`Solution::fallback`]; so it does
//! when the f32 factor itself fails (as LAPACK's dsposv does).
//!
//! **No silent wrong answer.** b is scaled by a power of two (exact) and so is every residual
//! before it is rounded to f32, so any finite b solves and x(2^k·b) = 2^k·x(b) exactly; norms
//! propagate NaN; n < m or fewer than m non-zero weights is an error up front; a C singular to
//! double precision is [`NumericalError::SingularToDouble`], never a solution.

mod condition;
pub(crate) mod design;
pub(crate) mod double;
pub mod normal_equations;
mod outcome;
mod refinement;

pub use condition::{
    NormEstimate, estimate_inverse_norm_1, estimate_norm_1, estimate_norm_1_batched,
    independent_vectors,
};
pub use double::DoubleFactor;
pub use normal_equations::{
    solve_normal_equations_faer, solve_normal_equations_reference, solve_with_factor,
};
pub(crate) use outcome::single_factor_failure;
pub(crate) use refinement::SymmetricEquations;

/// g − C·x through any [`refinement::Equations`].
pub(crate) fn refinement_residual(e: &impl refinement::Equations, x: &[f64]) -> Vec<f64> {
    e.residual(x)
}
pub use refinement::{NormalEquations, Refinement, Stop, Stopping, refine};

use crate::error::{Error, InputError, NumericalError, Result};
use crate::layout::Format;
use crate::matrix::{Matrix, MatrixView, check_finite_vec, check_finite_view};
use crate::options::Options;
use crate::scaling::norm2;
use std::time::Duration;

/// The most refinement steps one solve may take: each keeps a few numbers of history, and past
/// a few dozen steps refinement has stagnated anyway (LAPACK's dsposv stops at 30).
pub const MAX_ITERATIONS_LIMIT: usize = 10_000;

/// The test that ends refinement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Criterion {
    /// The normwise backward error η = ‖r‖∞ / (‖C‖∞·‖x‖∞ + ‖g‖∞) ≤ tolerance (default √m·u,
    /// u = 2⁻⁵³, as LAPACK's dsposv). Unchanged when A, d or b are scaled.
    #[default]
    BackwardError,
    /// The paper's ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ ≤ ε (default 10⁻⁸): depends on the scale of the data (scaling
    /// A by 1000 scales it by 10⁶); kept to reproduce Tables 1-2.
    Paper,
}

impl Criterion {
    /// The default tolerance for a system of order m.
    pub fn default_tolerance(self, m: usize) -> f64 {
        match self {
            Criterion::BackwardError => (m.max(1) as f64).sqrt() * UNIT_ROUNDOFF,
            Criterion::Paper => 1e-8,
        }
    }

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::BackwardError => "backward",
            Criterion::Paper => "paper",
        }
    }
}

/// The unit roundoff of f64, 2⁻⁵³ (LAPACK's dlamch('E')).
pub const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// Options of [`crate::Gpu::least_squares`]: the GPU's format and method, the
/// stopping test, the iteration limit and whether to fall back to f64 on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveOptions {
    /// Storage format and method of the GPU assembly and factorization.
    pub gpu: Options,
    /// The stopping test.
    pub criterion: Criterion,
    /// The test's tolerance; `None` takes [`Criterion::default_tolerance`].
    pub tolerance: Option<f64>,
    /// Stop after this many refinement steps at the latest (1 ..= [`MAX_ITERATIONS_LIMIT`]).
    pub max_iterations: usize,
    /// On stagnation, at the iteration limit, or when the f32 factor fails, solve with an f64
    /// Cholesky on the CPU (and, past 2/u₃₂, check C's condition with one).
    pub fallback: bool,
    /// The factor [`crate::Gpu::spd_solve`] and [`crate::Gpu::least_squares`] refine with.
    pub spd_factor: SpdFactor,
}

/// The factor [`crate::Gpu::spd_solve`] and [`crate::Gpu::least_squares`] (whose C = A·D²·Aᵀ
/// is SPD) take x⁰ and its corrections from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpdFactor {
    /// [`SpdFactor::Double`] up to order [`SpdFactor::DOUBLE_UP_TO`], [`SpdFactor::Single`]
    /// past it.
    #[default]
    Auto,
    /// Algorithm 1 as LAPACK's dsposv: C factored in f32, refinement in f64.
    Single,
    /// C factored in f64 on the GPU (dpotrf, one chained launch; least squares assembles C in
    /// f64 there first) and L⁻¹ formed beside it, x⁰ and each correction two f64 products with
    /// L⁻¹ and the residual formed with them, one read a step; refinement in f64 as LAPACK's
    /// dporfs. Where the GPU cannot (not the tiled method in full storage, no compute shaders,
    /// an order one chained launch does not take, C's scale near f64's edges, least squares'
    /// A not held on the GPU in f64), [`SpdFactor::Single`].
    Double,
}

impl SpdFactor {
    /// The largest order [`SpdFactor::Auto`] factors in f64: up to it the f64 factor's solve
    /// is the quicker, past it the f32 factor's
    /// (`figures/h200/experiments/frontdoor/spd_factor_ab.csv`; least squares:
    /// `ls_factor_ab.csv`).
    pub const DOUBLE_UP_TO: usize = 1024;

    /// Whether order m takes the f64 factor.
    pub(crate) fn double(self, m: usize) -> bool {
        match self {
            SpdFactor::Auto => m <= Self::DOUBLE_UP_TO,
            SpdFactor::Single => false,
            SpdFactor::Double => true,
        }
    }
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            gpu: Options::default(),
            criterion: Criterion::default(),
            tolerance: None,
            max_iterations: 100,
            fallback: true,
            spd_factor: SpdFactor::Auto,
        }
    }
}

impl SolveOptions {
    /// The defaults: backward-error test at √m·u, at most 100 steps, f64 fallback on.
    pub fn new() -> Self {
        Self::default()
    }

    /// The paper's settings for Tables 1-2: ‖r‖₂/‖x‖₂ ≤ 10⁻⁸, at most 100 steps, no fallback
    /// (the tables report what refinement itself reaches), the SPD solve's factor in f32
    /// (Algorithm 1).
    pub fn paper() -> Self {
        Self {
            criterion: Criterion::Paper,
            fallback: false,
            spd_factor: SpdFactor::Single,
            ..Self::default()
        }
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

    /// Whether order m asks for the f64 factor ([`SpdFactor::double`] in full storage, the
    /// only format it runs in); the GPU may still decline it.
    pub(crate) fn takes_double_factor(&self, m: usize) -> bool {
        self.spd_factor.double(m) && self.gpu.format == Format::Full
    }

    /// The same options with another factor for the SPD solve.
    pub fn spd_factor(mut self, spd_factor: SpdFactor) -> Self {
        self.spd_factor = spd_factor;
        self
    }

    /// The same options with another stopping test.
    pub fn criterion(mut self, criterion: Criterion) -> Self {
        self.criterion = criterion;
        self
    }

    /// The same options with another tolerance for the stopping test.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = Some(tolerance);
        self
    }

    /// The paper's rule with tolerance ε (shorthand for `.criterion(Paper).tolerance(ε)`).
    pub fn epsilon(self, epsilon: f64) -> Self {
        self.criterion(Criterion::Paper).tolerance(epsilon)
    }

    /// The same options with another iteration limit.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// The same options with the f64 fallback on or off.
    pub fn fallback(mut self, fallback: bool) -> Self {
        self.fallback = fallback;
        self
    }

    /// The tolerance used for a system of order m.
    pub fn tolerance_for(&self, m: usize) -> f64 {
        self.tolerance
            .unwrap_or_else(|| self.criterion.default_tolerance(m))
    }

    /// When refinement of a system of order m stops: the test, its tolerance, the most steps.
    pub fn stopping(&self, m: usize) -> Stopping {
        Stopping {
            criterion: self.criterion,
            tolerance: self.tolerance_for(m),
            max_iterations: self.max_iterations,
        }
    }

    /// Checks that the tolerance is finite and not negative and the iteration limit in range.
    pub fn validate(&self) -> Result<()> {
        if let Some(t) = self.tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(InputError::InvalidOption(format!(
                "the refinement tolerance must be finite and ≥ 0, not {t}"
            ))
            .into());
        }
        if !(1..=MAX_ITERATIONS_LIMIT).contains(&self.max_iterations) {
            return Err(InputError::InvalidOption(format!(
                "the iteration limit must be between 1 (Algorithm 1 always refines once) and \
                 {MAX_ITERATIONS_LIMIT}, not {}",
                self.max_iterations
            ))
            .into());
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
    /// Everything (x⁰, refinement, and the fallback if it ran; Tables 1-2's GPU "Total").
    pub total: Duration,
}

/// Why refinement handed over to the f64 CPU solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fallback {
    /// The corrections stopped shrinking at this step (0-based).
    Stagnated {
        /// The step at which stagnation was seen.
        iteration: usize,
    },
    /// The iteration limit was reached first.
    IterationLimit,
    /// The GPU's f32 Cholesky failed (not positive definite, or a pivot at rounding level, in
    /// single precision) at this column (0-based), though C may be SPD in f64 (or, with
    /// [`SpdFactor::Double`], least squares' f64 factor on the GPU failed there): x comes from
    /// an f64 Cholesky on the CPU, refined in f64.
    SingleFactorFailed {
        /// The GPU factor's failing column.
        column: usize,
    },
}

/// The result of [`crate::Gpu::least_squares`].
///
/// `converged == false` means the test was not met even after the fallback (if enabled): `x`
/// is then the best iterate, and `backward_error` shows how far from the tolerance it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The solution x (double precision): refined, or from the f64 fallback.
    pub x: Vec<f64>,
    /// The single-precision solution x⁰ from the GPU factor (widened to f64), or the f64
    /// factor's first solution where the f32 factor failed ([`Fallback::SingleFactorFailed`]).
    pub x0: Vec<f64>,
    /// Refinement steps taken.
    pub iterations: usize,
    /// ‖rᵏ‖₂ for each step.
    pub residuals: Vec<f64>,
    /// The stopping test's value for each step (η for the backward-error test, ‖rᵏ‖₂/‖xᵏ⁺¹‖₂
    /// for the paper's).
    pub criteria: Vec<f64>,
    /// The test and tolerance used.
    pub criterion: Criterion,
    /// The tolerance the test used.
    pub tolerance: f64,
    /// Whether the final x meets the test.
    pub converged: bool,
    /// The normwise backward error η of the final x.
    pub backward_error: f64,
    /// An estimate of κ₁(C) = ‖C‖₁·‖C⁻¹‖₁ (Hager's estimator through the factor: the f64
    /// one wherever it ran, which it does with the fallback on past 2/u₃₂).
    pub condition: f64,
    /// An estimate of the relative forward error ‖x − x*‖∞/‖x‖∞, about κ₁(C)·η.
    pub forward_error_estimate: f64,
    /// Set when the f64 CPU solve produced x, with the reason.
    pub fallback: Option<Fallback>,
    /// Where the time went.
    pub timings: Timings,
}

/// Checks a least-squares problem: A non-empty, d and b with one entry per column of A, all
/// finite. A is a `&Matrix` or any [`MatrixView`] (read where it lies, once).
pub fn check_problem<'a>(a: impl Into<MatrixView<'a, f64>>, d: &[f64], b: &[f64]) -> Result<()> {
    let a = a.into();
    check_shapes(a, d, b)?;
    check_finite_view("A", a)?;
    check_finite_vec("d", d)?;
    check_finite_vec("b", b)
}

/// [`check_problem`]'s shapes alone: A non-empty, d and b with one entry per column of A.
pub(crate) fn check_shapes(a: MatrixView<'_, f64>, d: &[f64], b: &[f64]) -> Result<()> {
    let (m, n) = a.shape();
    if m == 0 || n == 0 {
        return Err(InputError::Empty {
            input: "A".into(),
            rows: m,
            cols: n,
        }
        .into());
    }
    for (name, v) in [("d", d), ("b", b)] {
        if v.len() != n {
            return Err(Error::shape(format!(
                "A is {m}x{n}, so {name} needs {n} entries (one per column of A), but has {}",
                v.len()
            )));
        }
    }
    Ok(())
}

/// Refuses, before any work, an AD²Aᵀ that is singular by its shape or weights: n < m, or
/// fewer than m non-zero entries of d ([`NumericalError::SingularProduct`]).
pub fn check_rank<'a>(a: impl Into<MatrixView<'a, f64>>, d: &[f64]) -> Result<()> {
    let (m, n) = a.into().shape();
    let nonzero = d.iter().filter(|&&v| v != 0.0).count();
    if n < m || nonzero < m {
        return Err(NumericalError::SingularProduct { m, n, nonzero }.into());
    }
    Ok(())
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
    use rayon::prelude::*;
    (0..a.rows())
        .into_par_iter()
        .map(|j| a.row(j).iter().zip(d).map(|(a, d)| a * a * d).sum())
        .collect()
}

/// Rejects a factor whose pivot ratio L(j,j)²/C(j,j) is at or below [`pivot_tolerance`]:
/// [`NumericalError::NumericallySingular`] with the first such column. `pivots` is L's
/// diagonal (read alone from a factor kept on the GPU), `diagonal` C's.
pub fn check_pivots(pivots: &[f32], diagonal: &[f64]) -> Result<()> {
    let tolerance = pivot_tolerance();
    for (j, (&c, &pivot)) in diagonal.iter().zip(pivots).enumerate() {
        let pivot = f64::from(pivot);
        let ratio = pivot * pivot / c;
        if ratio.is_nan() || ratio <= tolerance {
            return Err(NumericalError::NumericallySingular {
                column: j,
                ratio,
                tolerance,
            }
            .into());
        }
    }
    Ok(())
}

/// ‖x − y‖₂/‖y‖₂ for vectors (‖x − y‖₂ when y = 0), as section 5.3 measures x against x_CPU.
pub fn relative_error_vec(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "relative_error_vec: lengths differ");
    let diff: Vec<f64> = x.iter().zip(y).map(|(x, y)| x - y).collect();
    let base = norm2(y);
    if base == 0.0 {
        norm2(&diff)
    } else {
        norm2(&diff) / base
    }
}

#[cfg(test)]
pub(crate) fn to_single(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&v| v as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::random_least_squares;

    #[test]
    fn options_are_validated() {
        assert!(SolveOptions::new().validate().is_ok());
        for bad in [
            SolveOptions::new().tolerance(f64::NAN),
            SolveOptions::new().tolerance(-1.0),
            SolveOptions::new().max_iterations(0),
            SolveOptions::new().max_iterations(MAX_ITERATIONS_LIMIT + 1),
        ] {
            assert!(
                matches!(
                    bad.validate(),
                    Err(Error::Input(InputError::InvalidOption(_)))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn default_tolerances() {
        assert_eq!(Criterion::Paper.default_tolerance(100), 1e-8);
        let t = Criterion::BackwardError.default_tolerance(100);
        assert!((t - 10.0 * UNIT_ROUNDOFF).abs() < 1e-30);
        let o = SolveOptions::new().epsilon(1e-6);
        assert_eq!((o.criterion, o.tolerance_for(9)), (Criterion::Paper, 1e-6));
    }

    #[test]
    fn singular_shapes_and_weights_are_refused() {
        let p = random_least_squares(2, 3);
        assert!(check_rank(&p.a, &p.d).is_ok());
        let mut d = p.d.clone();
        d[..4].fill(0.0);
        assert!(matches!(
            check_rank(&p.a, &d),
            Err(Error::Numerical(NumericalError::SingularProduct {
                m: 3,
                n: 6,
                nonzero: 2
            }))
        ));
        let wide = Matrix::<f64>::zeros(3, 2);
        let e = check_rank(&wide, &[1.0, 1.0]).unwrap_err();
        assert!(e.to_string().contains("because n < m"), "{e}");
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
