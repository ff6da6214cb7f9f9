//! Timing of GPU work for the benchmarks and the reproduction: GL_TIME_ELAPSED around a run's
//! passes (uploads and readback excluded, as the paper's Figs 8 and 9), wall time beside it,
//! and medians.

use crate::error::Result;
use crate::execution::Execution;
use crate::gl::{GpuTimer, TexelFormat};
use std::time::{Duration, Instant};

/// GPU time (timer query) and wall time (to the end of glFinish) of a stretch of work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// GL_TIME_ELAPSED.
    pub gpu: Duration,
    /// Wall clock from the first command to the end of glFinish.
    pub wall: Duration,
}

/// Runs the remaining passes of `run` under a timer query and glFinish.
pub fn time_finish<F: TexelFormat>(run: &mut Execution<'_, F>) -> Result<Timing> {
    let ctx = run.context().clone();
    let timer = GpuTimer::new(&ctx)?;
    ctx.finish();
    let start = Instant::now();
    timer.begin();
    run.finish()?;
    timer.end();
    ctx.finish();
    let wall = start.elapsed();
    Ok(Timing {
        gpu: timer.elapsed()?,
        wall,
    })
}

/// The median of `values` (the upper middle one for an even count; NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
