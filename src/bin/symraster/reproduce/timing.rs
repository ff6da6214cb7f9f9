//! Timing of GPU runs: GL_TIME_ELAPSED around the passes (uploads and readback excluded, as
//! the paper's Figs 8 and 9), with wall-clock time beside it.

use std::time::{Duration, Instant};
use symraster::error::Result;
use symraster::execution::Execution;
use symraster::gl::{GpuTimer, TexelFormat};

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

/// The median of `values` (sorted copy; the upper middle for even counts).
pub fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "median of nothing");
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
