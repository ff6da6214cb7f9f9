//! The SPD solve and least squares through an f64 factor on the GPU
//! ([`SpdFactor::Double`]): C' = 2^e·C in f64 already there (from C's triangle, or assembled
//! from A and d), factored and L̃⁻¹ formed by chained launches ([`InverseFactor`]), then x⁰
//! and the refinement's steps as products with L̃⁻¹, each step's residual and its correction
//! formed together on the GPU and read back with one wait.
//!
//! [`SpdFactor::Double`]: crate::least_squares::SpdFactor::Double

use super::estimate::{SINGLE_CONDITION_LIMIT, finish_estimate};
use super::{Gpu, Method};
use crate::double::{InverseFactor, SIDES, kernels::DoubleKernels};
use crate::error::{Error, Result};
use crate::gl::Buffer;
use crate::least_squares::{
    Fallback, NormEstimate, Refinement, Solution, SolveOptions, Timings, independent_vectors,
    refine,
};
use crate::phases::Phases;
use crate::scaling::{norm_inf, times_power_of_two};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Where the f64 factor's solve forms r = b − C·x in f64 on the GPU (b the system's right
/// side: the SPD solve's b, least squares' AD²b), queued and not waited on.
pub(super) trait StepResidual {
    /// r ← b − C·x, x and r the entries from the given offsets of their buffers.
    fn residual_at(&self, x: (&Buffer<f64>, usize), r: (&Buffer<f64>, usize)) -> Result<()>;

    /// r ← b − C·x for an x from the host.
    fn residual_of(&self, x: &[f64], r: (&Buffer<f64>, usize)) -> Result<()>;
}

/// What the solve has worked out before it factors: its start, C' = 2^exponent·C (exponent
/// even) in the lower triangle of `square` (order m, row-major, consumed by the factor), ‖C‖₁
/// (asked for once the factor has been waited on: least squares sums C''s columns on the GPU
/// before the factor overwrites them), and the right side b (scaled).
pub(super) struct Prepared<'a> {
    pub start: Instant,
    pub square: Buffer<f64>,
    pub exponent: i32,
    pub norm_c: &'a dyn Fn() -> Result<f64>,
    pub b: &'a [f64],
}

impl Gpu {
    /// The f64 kernels where a solve of order m takes the f64 factor of C' = 2^exponent·C
    /// (exponent even): the tiled method, the options'
    /// [`SpdFactor`](crate::least_squares::SpdFactor) in full storage, compute shaders, an
    /// order and scale [`InverseFactor::runs`] at; `None`: the f32 factor's path. `what` names
    /// the solve where the kernels are refused.
    pub(super) fn double_factor_kernels(
        &self,
        m: usize,
        exponent: i32,
        method: Method,
        options: &SolveOptions,
        what: &str,
    ) -> Option<Rc<DoubleKernels>> {
        if !(method == Method::Tiled && options.takes_double_factor(m)) {
            return None;
        }
        let kernels = self.double_kernels(what).ok()?;
        InverseFactor::runs(&kernels, m, exponent).then_some(kernels)
    }
}

/// The solve's ways out to the CPU: the f64 Cholesky there after refinement stopped short
/// (`double`); past 2/u₃₂ κ₁(C) from that factor's estimate and the ‖C‖₁ it is given, once
/// it has checked that C is not singular to double precision (`check`); and what an error of
/// the GPU's factor becomes (`failed`: the error itself, or least squares' f64 Cholesky on
/// the CPU where the fallback is on).
pub(super) struct OnTheHost<'a> {
    pub double: &'a dyn Fn(Fallback) -> Result<Solution>,
    pub check: &'a dyn Fn(f64) -> Result<f64>,
    pub failed: &'a dyn Fn(Error) -> Result<Solution>,
}

/// The solve again through the f64 Cholesky on the CPU (`double`) where refinement stopped
/// short (`reason`), with that refinement's history and x⁰ kept and the times of the GPU's
/// factor and x⁰ (`start`, `x0_time`, `factor`).
pub(super) fn solve_again_on_host(
    reason: Fallback,
    refinement: Refinement,
    x0: Vec<f64>,
    double: &dyn Fn(Fallback) -> Result<Solution>,
    (start, x0_time, factor): (Instant, Duration, Duration),
) -> Result<Solution> {
    log::warn!(
        "refinement stopped ({reason:?}) at backward error {:.2e}: solving again with an f64 \
         Cholesky on the CPU",
        refinement.backward_error
    );
    let mut solution =
        double(reason)?.after_single(x0, refinement, (x0_time, start.elapsed() - x0_time));
    solution.timings.factor = factor;
    Ok(solution)
}

/// C·x = b through the f64 factor of C' (`p`), the residuals formed by `device`; `what` names
/// the operation in the phases' log.
pub(super) fn solve(
    kernels: &DoubleKernels,
    device: &dyn StepResidual,
    p: Prepared<'_>,
    options: &SolveOptions,
    host: OnTheHost<'_>,
    what: &'static str,
) -> Result<Solution> {
    let m = p.b.len();
    let mut phase = Phases::named(what, Instant::now());
    let f = InverseFactor::queue(kernels, p.square, m, p.exponent, [false; 2])?;
    // C'⁻¹·v from C⁻¹·v = 2^e·C'⁻¹·v, for the ‖C'⁻¹‖₁ estimate.
    let unscaled = |w: &[f64]| -> Vec<f64> {
        w.iter()
            .map(|&v| times_power_of_two(v, -p.exponent))
            .collect()
    };
    let (v, w) = (f.sides(), f.solutions());
    // Behind the factor and Z: x⁰ = C⁻¹·b with the estimate's first two right sides (columns
    // 0-2), then r⁰ = b − C·x⁰ (V's column 3) and its correction, all before one wait.
    let [start, alternative] = independent_vectors(m);
    let queue_x0 = || -> Result<()> {
        for (c, side) in [p.b, &start, &alternative].into_iter().enumerate() {
            v.write(c * m, side)?;
        }
        f.launch(0, 3)?;
        device.residual_at((w, 0), (v, 3 * m))?;
        f.launch(3, 1)
    };
    queue_x0()?;
    match f.settle() {
        Ok(true) => queue_x0()?,
        Ok(false) => {}
        Err(e) => return (host.failed)(e),
    }
    let factor = p.start.elapsed();
    let r0 = f.column(v, 3)?;
    let solved = w.download_range(0, SIDES * m)?;
    let mut columns = solved.chunks(m).map(<[f64]>::to_vec);
    let mut next = || columns.next().expect("SIDES columns");
    let (x0, y, alt, z0) = (next(), next(), next(), next());
    let x0_time = p.start.elapsed();
    phase.mark(
        "factored, L̃⁻¹, x⁰, r⁰ and its correction, with the ‖C⁻¹‖₁ estimate's first two \
         solves",
    );
    let estimate = RefCell::new(NormEstimate::new(unscaled(&y), unscaled(&alt)));
    // Each step's residual and its correction (beside it the estimate's pending solve) in
    // one wait: `residual` forms both, `correct` hands over the correction of the residual
    // it is given, which is always the one `residual` just returned.
    let first = RefCell::new(Some(r0));
    let ahead = RefCell::new(Some(z0));
    let residual = |x: &[f64]| -> Result<Vec<f64>> {
        if let Some(r) = first.borrow_mut().take() {
            return Ok(r);
        }
        device.residual_of(x, (v, 0))?;
        let mut estimate = estimate.borrow_mut();
        let pending = estimate.pending().map(<[f64]>::to_vec);
        if let Some(side) = &pending {
            v.write(m, side)?;
        }
        let count = 1 + usize::from(pending.is_some());
        f.launch(0, count)?;
        let r = f.column(v, 0)?;
        let solved = w.download_range(0, count * m)?;
        if pending.is_some() {
            estimate.give(unscaled(&solved[m..]));
        }
        *ahead.borrow_mut() = Some(solved[..m].to_vec());
        Ok(r)
    };
    let correct = |r: &[f64]| -> Result<Vec<f64>> {
        match ahead.borrow_mut().take() {
            Some(z) => Ok(z),
            None => Ok(f.solve_each(&[r])?.remove(0)),
        }
    };
    let norm_c = (p.norm_c)()?;
    let norm_c_scaled = times_power_of_two(norm_c, p.exponent);
    phase.mark("‖C‖₁");
    let tolerance = options.tolerance_for(m);
    let refinement = refine(
        residual,
        correct,
        &x0,
        norm_c,
        norm_inf(p.b),
        options.stopping(m),
    )?;
    let refine_time = p.start.elapsed() - x0_time;
    phase.mark("refinement");
    if let Some(reason) = Fallback::after(refinement.stop, options.fallback) {
        let times = (p.start, x0_time, factor);
        return solve_again_on_host(reason, refinement, x0, host.double, times);
    }
    let inverse_norm = finish_estimate(estimate, |vs: &[&[f64]]| {
        Ok(f.solve_each(vs)?.iter().map(|w| unscaled(w)).collect())
    })?;
    let mut condition = norm_c_scaled * inverse_norm;
    if condition.is_nan() || condition >= SINGLE_CONDITION_LIMIT {
        // Past 2/u₃₂, the rule the f32 factor's solve keeps with its fallback on, here with it
        // off too (an f64 factor's refinement converges on a consistent singular C as well):
        // the f64 factor on the CPU decides whether C is singular to double precision, and its
        // estimate is the one reported.
        condition = (host.check)(norm_c)?;
    }
    phase.mark("‖C⁻¹‖₁ estimate");
    let timings = Timings {
        factor,
        x0: x0_time,
        refine: refine_time,
        total: p.start.elapsed(),
    };
    Solution::refined(refinement, x0, options, tolerance, condition, None, timings)
}
