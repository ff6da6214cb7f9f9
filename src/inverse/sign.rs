//! The matrix sign function by the scaled Newton iteration (Benner et al. eq. 1):
//! X₀ = A, X_{k+1} = (μ_k·X_k + X_k⁻¹/μ_k)/2 with Frobenius-norm scaling
//! μ_k = (‖X_k⁻¹‖_F/‖X_k‖_F)^½ (switched off once the iteration is close), each inverse by the
//! general GPU Gauss-Jordan in f32 (A need not be symmetric; a symmetric indefinite iterate
//! goes through general GJE, as the paper advises). By default (`refine_inverses`) the
//! iterates are kept in f64 on the GPU and each f32 inverse is refined in f64 by Newton-Schulz
//! products there ([`double`](super::kernels::double)) so S reaches double accuracy; without it
//! the iterate stays on the GPU in f32 ([`newton`](super::newton)). Either way per step only
//! the pivots, the status and a few partial sums come back. Once the iteration has converged,
//! Newton-Schulz steps X ← X(3I − X²)/2 with f64 products on the GPU make S an involution, and the commutation
//! test ‖A·S − S·A‖ runs there too: no product of the iteration runs on the CPU (only O(s²)
//! scalings and norms do). On GPUs the Newton iteration hands over to those steps once
//! ‖I − X_k²‖_F ≤ ½, before it converges ([`Handover`]; the f32 iteration's first steps
//! after it run in f32, [`schulz`](super::schulz)). A with eigenvalues
//! on or near the imaginary axis makes an iterate singular or the iteration stall:
//! [`NumericalError::SignNotConverged`], never NaN.

pub use super::kernels::double::PolishCorrection;
use super::kernels::double::{DoubleWork, LastStep};
use super::schulz::Schulz;
use super::widened::WidenedInverse;
use super::{Extent, InverseMethod, Inverter, check_general_input};
use super::newton::{self, STOP_SCALING, converged, not_converged};
use crate::cpu::to_faer;
use crate::error::{Error, InputError, NumericalError, Result};
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
    /// Keep the iterates in f64 and refine each f32 inverse in f64 on the GPU (Newton-Schulz
    /// products, two steps from a well-conditioned iterate: four f64 products) so the iteration
    /// runs in effect in double precision: S to double accuracy for well-conditioned iterates.
    /// An f32 inverse too far off to refine hands the iteration to the f64 one on the host
    /// ([`Sign::fallback`]). Off: the iterate stays on the GPU in f32, with the f32 iteration's
    /// accuracy (about κ_sign·u₃₂; the polish makes S an involution but does not remove that
    /// error, which [`Sign::commutation`] shows), faster on a fast GPU at large s
    /// (`figures/h200/experiments/sign_refined_ab.csv`). On by default: S is then right to
    /// about 1e-13 instead of 1e-5.
    pub refine_inverses: bool,
    /// The most Newton-Schulz steps in f64 after the Newton iteration (0: its result as is, and
    /// no [`handover`](SignOptions::handover)). The polish stops once S is an involution to
    /// rounding: two steps from a converged iterate, up to six after a handover at ½ (fewer
    /// than it needs there make the Newton iteration resume).
    pub polish_steps: usize,
    /// When the Newton iteration hands over to the polish before it converges
    /// ([`Handover`]).
    pub handover: Handover,
    /// How each polish step forms its correction S·E (E = I − S² always in f64): by default
    /// an f32 product, one f64 product per step instead of two (`PolishCorrection` says why
    /// that keeps the accuracy).
    pub polish_correction: PolishCorrection,
    /// Where the f32 iteration (`refine_inverses` off) hands over, take Newton-Schulz steps in
    /// f32 on the device (`schulz`) down to f32's rounding before the f64
    /// polish: two f32 products a step, where each polish step above
    /// `SINGLE_CORRECTION_BELOW` takes two
    /// f64 products. S keeps the f32 iteration's accuracy (that iteration's error is already
    /// of f32's order). On by default; the refined iteration polishes in f64 throughout.
    pub schulz_in_f32: bool,
}

impl Default for SignOptions {
    fn default() -> Self {
        Self {
            scaling: true,
            max_iterations: 20,
            polish_steps: 8,
            refine_inverses: true,
            polish_correction: PolishCorrection::Single,
            handover: Handover::Auto,
            schulz_in_f32: true,
        }
    }
}

/// Whether the Newton iteration hands over to the polish (Newton-Schulz in f64 products, the
/// hybrid of Higham's *Functions of Matrices* §5.8) once ‖I − X_k²‖_F is small, instead of
/// iterating until its relative change stalls. From there Newton-Schulz converges
/// quadratically as Newton does, and each of its steps is two products where a Newton step
/// is a Gauss-Jordan inverse (and, refined, products besides). ‖I − X_k²‖_F costs one product
/// (f32 in the f32 iteration with [`SignOptions::schulz_in_f32`], else f64) and is tested only
/// after a step whose relative change is below
/// `HANDOVER_CHECK`. If the polish then stalls short of an involution, the Newton iteration
/// resumes from the iterate it handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Handover {
    /// `HANDOVER` on GPUs; off on software renderers (llvmpipe), where an f64 product of
    /// order 512 costs about what a Gauss-Jordan inverse does and the hand-over was slower.
    #[default]
    Auto,
    /// Newton to convergence, as eq. 1.
    Off,
    /// Hand over once ‖I − X_k²‖_F is at most this, in (0, 1) (below 1 Newton-Schulz
    /// converges).
    At(f64),
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
    /// Newton-Schulz steps in f32 on the device between the hand-over and the polish
    /// ([`SignOptions::schulz_in_f32`]).
    pub schulz_steps_f32: usize,
    /// Whether the polish took over from an unconverged Newton iterate and finished it
    /// ([`SignOptions::handover`]); false where the iteration ran to convergence, or resumed
    /// after the polish stalled.
    pub handed_over: bool,
    /// ‖I − S²‖_F at the end. Alone no error measure: an involution far from sign(A) has it
    /// tiny too.
    pub residual: f64,
    /// ‖A·S − S·A‖_F / (‖A‖_F·‖S‖_F): sign(A) commutes with A, and the f32 iteration's error
    /// that the polish leaves shows here (a backward error; S's forward error is at most about
    /// the sign function's condition number times it).
    pub commutation: f64,
    /// Why the f64 Newton iteration on the host computed S (the GPU's f32 iteration failed:
    /// an iterate it could not invert, or no convergence), `None` where the GPU's did.
    pub fallback: Option<String>,
}

/// The power of two 2^k that brings the largest |entry| of `a` into [1, 2): scaling by it is
/// exact, and sign(2^k·A) = sign(A), Lyapunov's X scales by 2^-k. 1 for a zero matrix.
pub fn power_of_two_scale(a: &Matrix<f64>) -> f64 {
    scale_for_largest(a.max_abs())
}

/// [`power_of_two_scale`] of a matrix whose largest |entry| is `max`.
pub fn scale_for_largest(max: f64) -> f64 {
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

/// The ‖I − X_k²‖_F of [`Handover::Auto`] on GPUs: from ‖I − S²‖_F = ½ the polish needs at
/// most six steps (‖E'‖ ≤ ¾‖E‖² + ¼‖E‖³).
pub const HANDOVER: f64 = 0.5;

/// The relative change of a Newton step below which a [`Handover`] tests
/// ‖I − X_k²‖_F (in the quadratic phase the change is about ‖I − X_k²‖/2 relative to ‖X‖;
/// above this the test would mostly fail, each failure one product).
pub const HANDOVER_CHECK: f64 = 0.1;

/// sign(A) for a square A without eigenvalues on the imaginary axis.
///
/// A is first scaled by a power of two (exact, [`power_of_two_scale`]) so its largest entry is
/// in [1, 2): sign(cA) = sign(A) for c > 0, and the f32 iteration then neither overflows nor
/// underflows, whatever A's scale; every test of the iteration is relative to ‖A‖.
pub fn sign(inv: &Inverter, a: &Matrix<f64>, options: SignOptions) -> Result<Sign> {
    let extent = check_general_input("A", a)?;
    let handover = handover_limit(inv, &options)?;
    let scale = scale_for_largest(extent.max_abs);
    let a = &*a.scaled(scale);
    let mut work = DoubleWork::new(inv, a.rows())?;
    let on_gpu = if options.refine_inverses {
        refined_on_device(inv, &mut work, a, options, handover)
    } else {
        on_device(inv, &mut work, a, extent.scaled(scale), options, handover)
    };
    let (polished, fallback) = match on_gpu {
        Ok(p) => (p, None),
        // An f32 iterate that cannot be inverted (eigenvalues spanning more than f32
        // resolves, ill-conditioned eigenvectors): the f64 iteration on the host decides, and
        // its failure is the error. Other failures (no convergence: eigenvalues on or near the
        // imaginary axis) stand.
        Err(Error::Numerical(e @ NumericalError::SignNotConverged { .. }))
            if e.to_string().contains(UNINVERTIBLE) =>
        {
            let (s, iterations, residual) = super::sign_double::sign_in_double(a)?;
            // The commutation test reads S on the device.
            work.x.write(&s)?;
            let polished = Polished {
                s,
                polish_steps: 0,
                schulz_steps_f32: 0,
                residual,
                iterations,
                handed_over: false,
            };
            (polished, Some(format!("the GPU's float32 iteration failed: {e}")))
        }
        Err(e) => return Err(e),
    };
    let Polished {
        s,
        polish_steps,
        schulz_steps_f32,
        residual,
        iterations,
        handed_over,
    } = polished;
    if residual.is_nan() || residual > 0.5 {
        return Err(NumericalError::SignNotConverged {
            iterations,
            why: format!("the iterate is no involution: ‖I − S²‖_F = {residual:.2e}"),
        }
        .into());
    }
    // The device iteration left A in `work.m`; the refined one used it for each iterate.
    let commutation = match options.refine_inverses || fallback.is_some() {
        true => work.commutation(inv, a, &s)?,
        false => work.commutation_in_place(inv, a, &s)?,
    };
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
        schulz_steps_f32,
        handed_over,
        residual,
        commutation,
        fallback,
    })
}

/// What [`NumericalError::SignNotConverged`] says of an f32 Newton iterate that could not be
/// inverted: the failure the f64 iteration on the host takes over.
const UNINVERTIBLE: &str = "cannot be inverted";

/// The polished S, the polish's steps (and the f32 Newton-Schulz steps before it) and
/// ‖I − S²‖_F, and the Newton iterations before them.
struct Polished {
    s: Matrix<f64>,
    polish_steps: usize,
    schulz_steps_f32: usize,
    residual: f64,
    iterations: usize,
    handed_over: bool,
}

/// The ‖I − X_k²‖_F of [`SignOptions::handover`] where it applies (polish steps allowed),
/// checked to lie in (0, 1).
fn handover_limit(inv: &Inverter, options: &SignOptions) -> Result<Option<f64>> {
    let limit = match options.handover {
        Handover::At(h) if !(h > 0.0 && h < 1.0) => {
            return Err(InputError::InvalidOption(format!(
                "the sign function's handover must lie in (0, 1) (Newton-Schulz converges \
                 from ‖I − X²‖_F below 1), not {h}"
            ))
            .into());
        }
        Handover::At(h) => Some(h),
        Handover::Off => None,
        Handover::Auto => (!inv.software_renderer()).then_some(HANDOVER),
    };
    Ok(limit.filter(|_| options.polish_steps > 0))
}

/// Whether a polish after a handover reached what the converged f32 iteration would give
/// (‖I − S²‖_F at most √n·ε₃₂); if not, the Newton iteration resumes.
fn polished_after_handover(residual: f64, n: usize) -> bool {
    residual <= (n as f64).sqrt() * f64::from(f32::EPSILON)
}

/// Whether the iterate now in `work.x` may be handed over: ‖I − X²‖_F ≤ `limit` (E left in
/// `work.r` for the polish); the residual if so.
fn ready_for_polish(inv: &Inverter, work: &mut DoubleWork, limit: f64) -> Result<Option<f64>> {
    let r = work.involution(inv)?;
    Ok((r <= limit).then_some(r))
}

/// The polish of the iterate handed over at ‖I − X²‖_F = `r` (in `work.x`, E in `work.r`)
/// after `iterations` Newton steps; where it stalls short of [`polished_after_handover`], the
/// steps it took (the caller resumes the Newton iteration).
fn polish_handed_over(
    inv: &Inverter,
    work: &mut DoubleWork,
    r: f64,
    options: SignOptions,
    iterations: usize,
) -> Result<std::result::Result<Polished, usize>> {
    let (s, taken, residual) =
        work.polish_from(inv, r, options.polish_steps, options.polish_correction)?;
    if polished_after_handover(residual, s.rows()) {
        return Ok(Ok(Polished {
            s,
            polish_steps: taken,
            schulz_steps_f32: 0,
            residual,
            iterations,
            handed_over: true,
        }));
    }
    log::debug!(
        target: "symraster::inverse",
        "sign: the polish after the handover stalled at ‖I − S²‖_F = {residual:.2e}; the Newton \
         iteration resumes"
    );
    Ok(Err(taken))
}

/// A resumed Newton iteration's error counting the `done` steps before the hand-over.
fn resumed_after(done: usize, e: Error) -> Error {
    match e {
        Error::Numerical(NumericalError::SignNotConverged { iterations, why }) => {
            NumericalError::SignNotConverged {
                iterations: done + iterations,
                why: format!(
                    "{why} (resumed after {done} iterations whose hand-over to Newton-Schulz \
                     stalled)"
                ),
            }
            .into()
        }
        e => e,
    }
}

/// The refined iteration ([`iterate_refined`]) and its polish, resumed from the partly
/// polished S where a handover's polish stalls.
fn refined_on_device(
    inv: &Inverter,
    work: &mut DoubleWork,
    a: &Matrix<f64>,
    options: SignOptions,
    handover: Option<f64>,
) -> Result<Polished> {
    let correction = options.polish_correction;
    work.m.write(a)?;
    let run = iterate_refined(inv, work, options, options.max_iterations, handover)?;
    let mut iterations = run.iterations;
    let mut steps = 0;
    if let Some(r) = run.handed_over {
        steps = match polish_handed_over(inv, work, r, options, iterations)? {
            Ok(polished) => return Ok(polished),
            Err(taken) => taken,
        };
        // The Newton iteration resumes from the partly polished S (the same sign: the polish
        // kept ‖I − S²‖_F below 1).
        std::mem::swap(&mut work.m, &mut work.x);
        let left = options.max_iterations.saturating_sub(iterations);
        let resumed = iterate_refined(inv, work, options, left, None)
            .map_err(|e| resumed_after(iterations, e))?;
        iterations += resumed.iterations;
    }
    let (s, taken, residual) = work.polish_in_place(inv, options.polish_steps, correction)?;
    Ok(Polished {
        s,
        polish_steps: steps + taken,
        schulz_steps_f32: 0,
        residual,
        iterations,
        handed_over: false,
    })
}

/// The f32 iteration on the device ([`newton::iterate_until`](super::newton::iterate_until)),
/// after a hand-over its f32 Newton-Schulz steps ([`SignOptions::schulz_in_f32`]), and its
/// polish, resumed where a handover's polish stalls.
fn on_device(
    inv: &Inverter,
    work: &mut DoubleWork,
    a: &Matrix<f64>,
    extent: Extent,
    options: SignOptions,
    handover: Option<f64>,
) -> Result<Polished> {
    let n = a.rows();
    let v = crate::tiled::View::row_major(n, n);
    let correction = options.polish_correction;
    // A up once in f64 (the commutation test reads it there), X₀ narrowed from it on the device.
    work.m.write(a)?;
    let x0 = inv.single_square("the Newton iterate", n)?;
    inv.narrow(x0.op(v), work.m.op(false), 1.0)?;
    let start = newton::Start {
        norm: extent.norm,
        max_abs: extent.max_abs,
    };
    // With the f32 steps, the hand-over is tested in f32 too (one f32 product).
    let mut schulz = handover
        .filter(|_| options.schulz_in_f32)
        .map(|_| Schulz::new(inv, n))
        .transpose()?;
    let mut handed = None;
    let mut test = |x: &super::kernels::DeviceSquare, delta: f64| -> Result<bool> {
        // At trace level every step's ‖I − X²‖_F is formed and logged beside its change.
        let traced = log::log_enabled!(target: "symraster::inverse", log::Level::Trace);
        if traced && let Some(schulz) = &schulz {
            let r = schulz.involution(inv, x)?;
            log::trace!(target: "symraster::inverse", "sign: change {delta:.3e}, ‖I − X²‖_F {r:.3e} (f32)");
        }
        let Some(limit) = handover.filter(|_| delta < HANDOVER_CHECK) else {
            return Ok(false);
        };
        handed = match &schulz {
            Some(schulz) => Some(schulz.involution(inv, x)?).filter(|&r| r <= limit),
            None => {
                inv.widen(work.x.op(false), x.op(v), 1.0, None)?;
                ready_for_polish(inv, work, limit)?
            }
        };
        Ok(handed.is_some())
    };
    let (scaling, most) = (options.scaling, options.max_iterations);
    let hooks = newton::Hooks {
        handover: &mut test,
        meanwhile: None,
    };
    let mut run = newton::iterate_until(inv, x0, start, most, scaling, false, hooks)?;
    let mut iterations = run.iterations;
    let (mut steps, mut single) = (0, 0);
    if let Some(r) = handed {
        let r = match schulz.as_mut() {
            Some(schulz) => {
                (single, _) = schulz.steps(inv, &mut run.x, r, super::schulz::MAX_STEPS)?;
                if single > 0 {
                    run.last = schulz.start(inv, &run.x)?;
                }
                inv.widen(work.x.op(false), run.x.op(v), 1.0, None)?;
                work.involution(inv)?
            }
            None => r,
        };
        steps = match polish_handed_over(inv, work, r, options, iterations)? {
            Ok(polished) => {
                inv.recycle_single(run.x);
                if let Some(schulz) = schulz {
                    schulz.recycle(inv);
                }
                return Ok(Polished {
                    schulz_steps_f32: single,
                    ..polished
                });
            }
            Err(taken) => taken,
        };
        let left = most.saturating_sub(iterations);
        run = newton::iterate_from(inv, run.x, run.last, left, scaling, false)
            .map_err(|e| resumed_after(iterations, e))?;
        iterations += run.iterations;
    }
    if let Some(schulz) = schulz {
        schulz.recycle(inv);
    }
    // The f32 iterate widened into the polish's f64 S on the device.
    inv.widen(work.x.op(false), run.x.op(v), 1.0, None)?;
    inv.recycle_single(run.x);
    let (s, taken, residual) = work.polish_in_place(inv, options.polish_steps, correction)?;
    Ok(Polished {
        s,
        polish_steps: steps + taken,
        schulz_steps_f32: single,
        residual,
        iterations,
        handed_over: false,
    })
}

/// What [`iterate_refined`] ended with: its steps, and ‖I − X²‖_F where a handover ended it.
struct RefinedRun {
    iterations: usize,
    handed_over: Option<f64>,
}

/// The Newton iteration with f64 iterates on the device, from X₀ in `work.m`: each iterate
/// narrowed to f32 and inverted there (Gauss-Jordan), the inverse widened and refined in f64
/// by Newton-Schulz products ([`DoubleWork::refine_inverse_in_place`]), and the step
/// X ← (μX + Y/μ)/2 formed in f64 with its norms, at most `max_iterations` steps. Only the
/// pivots, the status and per-group sums come back. The last iterate is left in `work.x`; where
/// ‖I − X²‖_F ≤ `handover` ended it, E = I − X² in `work.r`. An f32 inverse too far off to
/// refine (‖I − X·Y‖_F ≥ ½) is the iteration's failure as a singular iterate is: the f64
/// iteration on the host takes over ([`UNINVERTIBLE`]).
fn iterate_refined(
    inv: &Inverter,
    work: &mut DoubleWork,
    options: SignOptions,
    max_iterations: usize,
    handover: Option<f64>,
) -> Result<RefinedRun> {
    let n = work.m.n;
    let inverse = WidenedInverse::new(inv, n, InverseMethod::Gje, inv.general_block(n))?;
    let uninvertible = |k: usize, why: String| -> Error {
        NumericalError::SignNotConverged {
            iterations: k,
            why: format!("Newton iterate {k} {UNINVERTIBLE} ({why})"),
        }
        .into()
    };
    // An inverse's refinement step whose bound is below n·ε is taken unmeasured (its
    // residual is then at f64's rounding).
    let trusted = n as f64 * f64::EPSILON;
    // ‖X₀‖_F from one f64 pass that rewrites X₀ as it is.
    let mut norm_x = inv.combine(&work.m, 1.0, &work.m, 0.0)?.sqrt();
    let mut scale = options.scaling;
    let mut previous = f64::INFINITY;
    let mut iterations = 0;
    let mut handed_over = None;
    let result = loop {
        if iterations == max_iterations {
            break Err(not_converged(iterations, previous));
        }
        // X_k's f32 inverse widened into `work.x` and refined there against X_k.
        match inverse.invert(inv, &work.m, 1.0, &work.x) {
            Ok(()) => {}
            Err(Error::Numerical(e)) => break Err(uninvertible(iterations, e.to_string())),
            Err(e) => break Err(e),
        }
        let (residuals, _) = work.refine_inverse_in_place(inv, 3, LastStep::Bound(trusted))?;
        let first = residuals[0];
        if first.is_nan() || first >= 0.5 {
            break Err(uninvertible(
                iterations,
                format!("accurately enough to refine: ‖I − X·Y‖_F = {first:.2e} in f32"),
            ));
        }
        // μ from ‖Y‖_F, then X_{k+1} = (μX_k + Y/μ)/2 into `work.x` and X_{k+1} − X_k into
        // `work.m`, each pass with its Σ of squares.
        let yy = inv.combine(&work.x, 1.0, &work.x, 0.0)?;
        let mu = if scale {
            newton::norm_scaling(yy, norm_x)
        } else {
            1.0
        };
        let xx = inv.combine(&work.x, 0.5 / mu, &work.m, 0.5 * mu)?;
        let dd = inv.combine(&work.m, -1.0, &work.x, 1.0)?;
        std::mem::swap(&mut work.m, &mut work.x);
        iterations += 1;
        let delta = dd.sqrt() / xx.sqrt().max(f64::MIN_POSITIVE);
        log::trace!(target: "symraster::inverse", "sign (refined): step {iterations}, change {delta:.3e}, μ {mu:.4}, ‖I − X·Y‖_F {residuals:?}");
        if !delta.is_finite() || !mu.is_finite() {
            break Err(NumericalError::SignNotConverged {
                iterations,
                why: "an iterate is not finite".into(),
            }
            .into());
        }
        norm_x = xx.sqrt();
        if delta < STOP_SCALING {
            scale = false;
        }
        if converged(delta, previous) {
            break Ok(());
        }
        if let Some(limit) = handover.filter(|_| delta < HANDOVER_CHECK) {
            std::mem::swap(&mut work.m, &mut work.x);
            if let Some(r) = ready_for_polish(inv, work, limit)? {
                handed_over = Some(r);
                break Ok(());
            }
            std::mem::swap(&mut work.m, &mut work.x);
        }
        previous = delta;
    };
    inverse.recycle(inv);
    result?;
    if handed_over.is_none() {
        std::mem::swap(&mut work.m, &mut work.x);
    }
    Ok(RefinedRun {
        iterations,
        handed_over,
    })
}
