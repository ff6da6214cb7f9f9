//! The SPD solve through an f64 factor on the GPU ([`SpdFactor::Double`]): C' = 2^e·C made
//! in f64 from C's triangle already there, factored and L̃⁻¹ formed by chained launches
//! ([`InverseFactor`]), then x⁰ and the refinement's steps as products with L̃⁻¹, each step's
//! residual and its correction formed together on the GPU and read back with one wait.
//!
//! [`SpdFactor::Double`]: crate::least_squares::SpdFactor::Double

use super::least_squares::{SINGLE_CONDITION_LIMIT, finish_estimate};
use super::spd_device::SpdDevice;
use crate::double::{InverseFactor, SIDES, kernels::DoubleKernels};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::least_squares::{
    Fallback, NormEstimate, Refinement, Solution, SolveOptions, Timings, independent_vectors,
    refine,
};
use crate::phases::Phases;
use crate::scaling::{norm_inf, times_power_of_two};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// What the SPD solve has worked out before it factors: its start, C' = 2^exponent·C, ‖C‖₁
/// and ‖C'‖₁, and b (scaled).
pub(super) struct Prepared<'a> {
    pub start: Instant,
    pub exponent: i32,
    pub norm_c: f64,
    pub norm_c_scaled: f64,
    pub b: &'a [f64],
}

/// The solve's ways out to the CPU: the f64 Cholesky there after refinement stopped short
/// (`double`), and past 2/u₃₂ the condition estimate of that factor, once it has checked
/// that C is not singular to double precision (`check`).
pub(super) struct OnTheHost<'a> {
    pub double: &'a dyn Fn(Fallback) -> Result<Solution>,
    pub check: &'a dyn Fn() -> Result<f64>,
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

/// [`crate::Gpu::spd_solve`] through the f64 factor, C's triangle and b already on the GPU in
/// `device`.
pub(super) fn solve(
    kernels: &DoubleKernels,
    device: &SpdDevice,
    p: Prepared<'_>,
    options: &SolveOptions,
    host: OnTheHost<'_>,
) -> Result<Solution> {
    let m = p.b.len();
    let ctx = kernels.context();
    let mut phase = Phases::named("SPD solve", Instant::now());
    let square =
        Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, m * m)?;
    device.double_into(&square, p.exponent)?;
    phase.mark_finished(ctx, "C' in f64 on the GPU");
    let f = InverseFactor::queue(kernels, square, m, p.exponent, [false; 2])?;
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
    if f.settle()? {
        queue_x0()?;
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
        device.write_x(x)?;
        device.residual_at((device.x(), 0), (v, 0))?;
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
    let tolerance = options.tolerance_for(m);
    let refinement = refine(
        residual,
        correct,
        &x0,
        p.norm_c,
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
    let mut condition = p.norm_c_scaled * inverse_norm;
    if options.fallback && (condition.is_nan() || condition >= SINGLE_CONDITION_LIMIT) {
        // Past 2/u₃₂, the rule the f32 factor's solve keeps: the f64 factor on the CPU decides
        // whether C is singular to double precision, and its estimate is the one reported.
        condition = (host.check)()?;
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
