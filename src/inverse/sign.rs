//! The matrix sign function by the scaled Newton iteration (Benner et al. eq. 1):
//! X₀ = A, X_{k+1} = (μ_k·X_k + X_k⁻¹/μ_k)/2 with Frobenius-norm scaling
//! μ_k = (‖X_k⁻¹‖_F/‖X_k‖_F)^½ (switched off once the iteration is close), each inverse by the
//! general GPU Gauss-Jordan in f32 (A need not be symmetric; a symmetric indefinite iterate
//! goes through general GJE, as the paper advises). By default (`refine_inverses`) the
//! iterates are kept in f64 and each GPU inverse is refined in f64 by Newton-Schulz products
//! on the GPU ([`double`](super::double)) so S reaches double accuracy; without it the
//! iterate stays on the GPU in f32 ([`newton`](super::newton): per step only the pivots and a
//! few partial sums come back). Once the iteration has converged, Newton-Schulz steps
//! X ← X(3I − X²)/2 with f64 products on the GPU make S an involution, and the commutation
//! test ‖A·S − S·A‖ runs there too: no product of the iteration runs on the CPU (only O(s²)
//! scalings and norms do). A with eigenvalues
//! on or near the imaginary axis makes an iterate singular or the iteration stall:
//! [`NumericalError::SignNotConverged`], never NaN.

pub use super::double::PolishCorrection;
use super::double::DoubleWork;
use super::{InverseMethod, Inverter, Kind, check_input};
use crate::baseline::to_faer;
use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;

/// How to run the iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignOptions {
    /// Frobenius-norm scaling (Higham); off gives eq. 1 exactly.
    pub scaling: bool,
    /// The most Newton iterations on the GPU. The iteration needs about log₂(1/d) + 5 of them
    /// for an eigenvalue at relative distance d from the imaginary axis, and one on the axis
    /// wanders until rounding pushes it off (to an arbitrary side), so more than this is
    /// refused as "on or too near the axis" (20: d below about 1e-5, too close for f32 inverses).
    pub max_iterations: usize,
    /// Refine each GPU inverse in f64 (Newton-Schulz, `refine_inverse`) so the iteration runs
    /// in effect in double precision: S to double accuracy for well-conditioned iterates, at
    /// 4s³ CPU flops per iteration. Off: the iterate stays on the GPU in f32, with the f32
    /// iteration's accuracy (about κ_sign·u₃₂; the polish makes S an involution but does not
    /// remove that error, which [`Sign::commutation`] shows). On by default: on llvmpipe
    /// (s = 64, 128) as fast as the f32 device iteration, and S is then right to about
    /// 1e-13 instead of 1e-5; on a fast GPU at large s the f32 device iteration is faster.
    pub refine_inverses: bool,
    /// Newton-Schulz steps in f64 after the f32 iteration (0: the f32 result as is).
    pub polish_steps: usize,
    /// How each polish step forms its correction S·E (E = I − S² always in f64): by default
    /// an f32 product, one f64 product per step instead of two ([`PolishCorrection`] says why
    /// that keeps the accuracy).
    pub polish_correction: PolishCorrection,
}

impl Default for SignOptions {
    fn default() -> Self {
        Self {
            scaling: true,
            max_iterations: 20,
            polish_steps: 6,
            refine_inverses: true,
            polish_correction: PolishCorrection::Single,
        }
    }
}

/// sign(A) and how it was reached.
#[derive(Clone, Debug)]
pub struct Sign {
    /// sign(A).
    pub s: Matrix<f64>,
    /// Newton iterations (GPU inverses).
    pub iterations: usize,
    /// Newton-Schulz steps in f64.
    pub polish_steps: usize,
    /// ‖I − S²‖_F at the end. Alone no error measure: an involution far from sign(A) has it
    /// tiny too.
    pub residual: f64,
    /// ‖A·S − S·A‖_F / (‖A‖_F·‖S‖_F): sign(A) commutes with A, and the f32 iteration's error
    /// that the polish leaves shows here (a backward error; S's forward error is at most about
    /// the sign function's condition number times it).
    pub commutation: f64,
}

/// The power of two 2^k that brings the largest |entry| of `a` into [1, 2): scaling by it is
/// exact, and sign(2^k·A) = sign(A), Lyapunov's X scales by 2^-k. 1 for a zero matrix.
pub fn power_of_two_scale(a: &Matrix<f64>) -> f64 {
    let max = a.max_abs();
    if max == 0.0 || !max.is_finite() {
        return 1.0;
    }
    let k = -(max.log2().floor() as i32);
    // Exact powers of two in the normal range (max ≥ 2^-1074 needs at most 2^1074: two factors).
    let pow = |e: i32| f64::from_bits(((e.clamp(-1022, 1023) + 1023) as u64) << 52);
    let scale = pow(k / 2) * pow(k - k / 2);
    // log2 may round across a power of two: one step back keeps max·scale in [1, 2).
    if max * scale >= 2.0 {
        scale * 0.5
    } else if max * scale < 1.0 {
        scale * 2.0
    } else {
        scale
    }
}

/// ‖A·S − S·A‖_F / (‖A‖_F·‖S‖_F) in f64 on the CPU (the reference for the device's, which
/// [`sign`] uses).
pub fn commutation(a: &Matrix<f64>, s: &Matrix<f64>) -> f64 {
    let (fa, fs) = (to_faer(a), to_faer(s));
    let d = &fa * &fs - &fs * &fa;
    d.norm_l2() / (fa.norm_l2() * fs.norm_l2()).max(f64::MIN_POSITIVE)
}

/// The commutation residual ‖AS − SA‖_F/(‖A‖_F‖S‖_F) above which S is no sign function (its
/// error is at least about this large).
const NOT_COMMUTING: f64 = 1e-2;

/// The relative change below which the f32 Newton iteration has converged.
const CONVERGED: f64 = 1e-4;
use super::newton::STOP_SCALING;

/// One iterate's GPU inverse refined in f64 on the device; a singular iterate is the sign
/// function's failure.
fn iterate_inverse(
    inv: &Inverter,
    work: &mut DoubleWork,
    x: &Matrix<f64>,
    k: usize,
) -> Result<Matrix<f64>> {
    let options = super::InvertOptions::default();
    match super::invert_unchecked(inv, &x.to_f32(), Kind::General, InverseMethod::Gje, options) {
        Ok(y) => Ok(work.refine_inverse(inv, x, &y.to_f64(), 3)?.x),
        Err(Error::Numerical(e)) => Err(NumericalError::SignNotConverged {
            iterations: k,
            why: format!("Newton iterate {k} cannot be inverted ({e})"),
        }
        .into()),
        Err(e) => Err(e),
    }
}

/// The scaling μ = (‖Y‖_F/‖X‖_F)^½ for X and Y = X⁻¹.
fn scaling(x: &Matrix<f64>, y: &Matrix<f64>) -> f64 {
    (y.frobenius_norm() / x.frobenius_norm()).sqrt()
}

/// ‖a − b‖_F / ‖a‖_F.
fn change(a: &Matrix<f64>, b: &Matrix<f64>) -> f64 {
    let d: f64 = a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| (x - y) * (x - y))
        .sum();
    d.sqrt() / a.frobenius_norm().max(f64::MIN_POSITIVE)
}

/// The Newton iteration's error after `iterations` steps without converging (`previous`, the
/// last relative change), on the host and on the device alike.
pub(crate) fn not_converged(iterations: usize, previous: f64) -> Error {
    NumericalError::SignNotConverged {
        iterations,
        why: format!(
            "the Newton iteration did not converge in {iterations} iterations (last relative \
             change {previous:.2e}; an eigenvalue at relative distance d from the axis needs \
             about log2(1/d) + 5)"
        ),
    }
    .into()
}

/// Whether the Newton loop should stop at relative change `delta` after `previous`.
pub(crate) fn converged(delta: f64, previous: f64) -> bool {
    delta <= CONVERGED || (delta < STOP_SCALING && delta > 0.5 * previous)
}

/// sign(A) for a square A without eigenvalues on the imaginary axis.
///
/// A is first scaled by a power of two (exact, [`power_of_two_scale`]) so its largest entry is
/// in [1, 2): sign(cA) = sign(A) for c > 0, and the f32 iteration then neither overflows nor
/// underflows, whatever A's scale; every test of the iteration is relative to ‖A‖.
pub fn sign(inv: &Inverter, a: &Matrix<f64>, options: SignOptions) -> Result<Sign> {
    check_input("A", a, Kind::General)?;
    let scale = power_of_two_scale(a);
    let a = &*a.scaled(scale);
    let mut work = DoubleWork::new(inv, a.rows())?;
    let (s, polish_steps, residual, iterations) = if options.refine_inverses {
        let (x, iterations) = iterate_on_host(inv, &mut work, a, options)?;
        let (s, steps, residual) =
            work.polish(inv, &x, options.polish_steps, options.polish_correction)?;
        (s, steps, residual, iterations)
    } else {
        let run = super::newton::iterate(inv, a, options.max_iterations, options.scaling, false)?;
        // The f32 iterate widened into the polish's f64 S on the device.
        let v = crate::tiled::View::row_major(run.x.n, run.x.n);
        inv.widen(work.x.op(false), run.x.op(v), 1.0, None)?;
        inv.recycle_single(run.x);
        let (s, steps, residual) =
            work.polish_in_place(inv, options.polish_steps, options.polish_correction)?;
        (s, steps, residual, run.iterations)
    };
    if residual.is_nan() || residual > 0.5 {
        return Err(NumericalError::SignNotConverged {
            iterations,
            why: format!("the iterate is no involution: ‖I − S²‖_F = {residual:.2e}"),
        }
        .into());
    }
    let commutation = work.commutation(inv, a, &s)?;
    work.recycle(inv);
    if commutation.is_nan() || commutation > NOT_COMMUTING {
        return Err(NumericalError::SignNotConverged {
            iterations,
            why: format!(
                "S does not commute with A: ‖A·S − S·A‖_F/(‖A‖_F·‖S‖_F) = {commutation:.2e}, \
                 above {NOT_COMMUTING:.0e}"
            ),
        }
        .into());
    }
    Ok(Sign {
        s,
        iterations,
        polish_steps,
        residual,
        commutation,
    })
}

/// The Newton iteration with f64 iterates on the CPU and each GPU inverse refined in f64:
/// the last iterate and the iterations taken.
fn iterate_on_host(
    inv: &Inverter,
    work: &mut DoubleWork,
    a: &Matrix<f64>,
    options: SignOptions,
) -> Result<(Matrix<f64>, usize)> {
    let n = a.rows();
    let mut x = a.clone();
    let mut scale = options.scaling;
    let mut previous = f64::INFINITY;
    let mut iterations = 0;
    loop {
        if iterations == options.max_iterations {
            return Err(not_converged(iterations, previous));
        }
        let y = iterate_inverse(inv, work, &x, iterations)?;
        let mu = if scale { scaling(&x, &y) } else { 1.0 };
        let next = Matrix::from_fn(n, n, |i, j| 0.5 * (mu * x[(i, j)] + y[(i, j)] / mu));
        iterations += 1;
        let delta = change(&next, &x);
        x = next;
        if !delta.is_finite() {
            return Err(NumericalError::SignNotConverged {
                iterations,
                why: "an iterate is not finite".into(),
            }
            .into());
        }
        if delta < STOP_SCALING {
            scale = false;
        }
        if converged(delta, previous) {
            break;
        }
        previous = delta;
    }
    Ok((x, iterations))
}
