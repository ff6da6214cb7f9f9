//! Least squares through an f64 factor on the GPU ([`SpdFactor::Double`]): C' = 2^e·A·D²·Aᵀ
//! assembled in f64 from the copies of A and d that the residuals use, its column sums (‖C'‖₁)
//! beside it, then the SPD solve's f64 path ([`super::spd_direct`]) with the residual
//! AD²b − A·D²·Aᵀ·x formed on the GPU.
//!
//! [`SpdFactor::Double`]: crate::least_squares::SpdFactor::Double

use super::Gpu;
use super::estimate::largest;
use super::range::RangeScaling;
use super::residual::DeviceResidual;
use super::spd_direct::{self, OnTheHost, Prepared};
use crate::double::kernels::DoubleKernels;
use crate::error::{Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::least_squares::design::Design;
use crate::least_squares::double::{Scaled, scaled_norm, solve_in_double};
use crate::least_squares::{
    DoubleFactor, Fallback, NormalEquations, Solution, SolveOptions, single_factor_failure,
};
use crate::phases::Phases;
use crate::scaling::times_power_of_two;
use std::cell::OnceCell;
use std::time::Instant;

/// The problem as [`Gpu::least_squares`] has it once it has scaled it: A, d and b (scaled)
/// with their copies on the GPU, the range scaling C' = 2^`scaling.exponent`·C, C''s diagonal,
/// and the solve's start.
pub(super) struct Problem<'a> {
    pub a: Design<'a>,
    pub d: &'a [f64],
    pub b: &'a [f64],
    pub device: &'a DeviceResidual,
    pub scaling: &'a RangeScaling,
    pub scaled_diagonal: &'a [f64],
    pub start: Instant,
}

/// [`Gpu::least_squares`] through the f64 factor, with `kernels` from
/// [`Gpu::double_factor_kernels`].
pub(super) fn solve(
    gpu: &Gpu,
    kernels: &DoubleKernels,
    p: Problem<'_>,
    options: &SolveOptions,
) -> Result<Solution> {
    let mut phase = Phases::named("least squares", Instant::now());
    let ctx = gpu.context();
    let (m, _) = p.a.shape();
    // C' = 2^(2·ea + ed)·C as the f32 factor's path scales it, doubled where that exponent is
    // odd (the f64 factor's L̃ then is 2^(e/2)·L exactly).
    let (ea, ed) = (p.scaling.a.log2() as i32, p.scaling.d.log2() as i32);
    let extra = p.scaling.exponent.rem_euclid(2);
    let exponent = p.scaling.exponent + extra;
    let square =
        Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, m * m)?;
    p.device
        .double_product_into(kernels, &square, (ea, ed + extra))?;
    let sums = Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Stream, m)?;
    gpu.least_squares_kernels()?
        .column_sums(&square, m, m, (&sums, 0))?;
    phase.mark_finished(ctx, "C' = A·D²·Aᵀ in f64 on the GPU, its column sums");

    // ‖C‖₁ from C''s column sums (read once the factor has run), else estimated through
    // products with C in f64.
    let norm_c = || -> Result<f64> {
        let norm = match largest(&sums.download()?) {
            Some(norm) => norm,
            None => scaled_norm(m, exponent, |vs| p.device.apply_each(vs))?,
        };
        Ok(times_power_of_two(norm, -exponent))
    };
    let equations = OnceCell::new();
    let equations = || equations.get_or_init(|| NormalEquations::new(p.a.view(), p.d, p.b));
    let scaled = Scaled {
        exponent: p.scaling.exponent,
        diagonal: p.scaled_diagonal,
    };
    let host_factor = || DoubleFactor::of(p.a.view(), p.d, p.scaling.a, p.scaling.d);
    let double = |reason| -> Result<Solution> {
        let start = p.start;
        solve_in_double(
            equations(),
            &host_factor()?,
            &scaled,
            options,
            reason,
            (start, start.elapsed()),
        )
    };
    let check = |norm_c: f64| -> Result<f64> {
        let factor = host_factor()?;
        let condition =
            times_power_of_two(norm_c, p.scaling.exponent) * factor.inverse_norm_scaled();
        factor.check_singular(p.scaled_diagonal)?;
        Ok(condition)
    };
    // As where the f32 factor fails: with the fallback on, the CPU's f64 Cholesky decides.
    let failed = |e: Error| -> Result<Solution> {
        match single_factor_failure(&e) {
            Some(column) if options.fallback => {
                log::warn!(
                    "the f64 factor failed at column {column}: solving with an f64 Cholesky on \
                     the CPU"
                );
                double(Fallback::SingleFactorFailed { column })
            }
            _ => Err(e),
        }
    };
    let prepared = Prepared {
        start: p.start,
        square,
        exponent,
        norm_c: &norm_c,
        b: p.device.rhs(),
    };
    let host = OnTheHost {
        double: &double,
        check: &check,
        failed: &failed,
    };
    spd_direct::solve(kernels, p.device, prepared, options, host, "least squares")
}
