//! Timing of GPU work for the benchmarks and the reproduction: GL_TIME_ELAPSED around a run's
//! passes (uploads and readback excluded, as the paper's Figs 8 and 9), wall time beside it,
//! medians, and the busy work that brings a GPU's clocks up before a timed stretch.

use crate::error::Result;
use crate::draw::execution::Execution;
use crate::gl::{
    ComputeKernel,
    Buffer, BufferTarget, BufferUsage, Context, LazyProgram, DeviceInfo, GpuTimer, TexelFormat,
    Uniform,
};
use std::time::{Duration, Instant};

/// [`Preheat::run`] keeps the GPU busy at least this long, and then until its rounds of busy
/// work have not got faster for [`PREHEAT_SETTLE`] (the clocks are up), at most
/// [`PREHEAT_MAX`]. After CPU steps and bursty short runs a GPU's clock falls, making short
/// runs several times slower than back to back, and under full load it takes up to hundreds of
/// milliseconds to come back (measured in docs/results.md).
pub const PREHEAT_MIN: Duration = Duration::from_millis(100);
/// See [`PREHEAT_MIN`].
pub const PREHEAT_SETTLE: Duration = Duration::from_millis(100);
/// See [`PREHEAT_MIN`].
pub const PREHEAT_MAX: Duration = Duration::from_secs(2);

/// Busy work run just before a timed stretch so that the GPU's clocks are at their working
/// speed when it starts: a timer query measures at whatever clock the GPU runs, and a GPU
/// left nearly idle (by a CPU step, by uploads, by short runs with gaps) lowers it. Nothing on
/// software renderers (the CPU is the GPU there) or without compute shaders.
pub struct Preheat {
    // The busy kernel (compiled on first use) and the buffer it could write; `None` where
    // there is nothing to do.
    kernel: Option<(LazyProgram, Buffer<f32>)>,
}

impl Preheat {
    /// The busy kernel for `ctx`'s device, compiled on its first run (nothing on software
    /// renderers and devices without compute shaders).
    pub fn new(ctx: &Context) -> Result<Self> {
        let info = DeviceInfo::query(ctx)?;
        if info.software {
            return Ok(Self { kernel: None });
        }
        Self::on_any_device(ctx)
    }

    /// [`Preheat::new`] that busies software renderers too (for tests of the kernel itself).
    pub fn on_any_device(ctx: &Context) -> Result<Self> {
        let kernel = if DeviceInfo::query(ctx)?.has_compute() {
            Some((
                LazyProgram::new(
                    ctx,
                    &PREHEAT,
                    "",
                    format!("#version 430\n{}", PREHEAT.source),
                ),
                Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &[0.0f32])?,
            ))
        } else {
            None
        };
        Ok(Self { kernel })
    }

    /// Whether [`Preheat::run`] does anything here.
    pub fn is_active(&self) -> bool {
        self.kernel.is_some()
    }

    /// Keeps the GPU busy until its clocks are up ([`PREHEAT_MIN`], [`PREHEAT_SETTLE`],
    /// [`PREHEAT_MAX`]) and waits for it to finish; returns the time spent.
    pub fn run(&self, ctx: &Context) -> Duration {
        self.run_with(ctx, PREHEAT_MIN, PREHEAT_SETTLE, PREHEAT_MAX)
    }

    /// Keeps the GPU busy for at least `min`, then until a round of busy work has not got
    /// faster (per unit of work, by 2%) for `settle`, at most `max`; returns the time spent.
    pub fn run_with(
        &self,
        ctx: &Context,
        min: Duration,
        settle: Duration,
        max: Duration,
    ) -> Duration {
        let start = Instant::now();
        let Some((Ok(program), sink)) = self.kernel.as_ref().map(|(p, sink)| (p.get(), sink)) else {
            return start.elapsed();
        };
        sink.bind_base(0);
        // Rounds of 8 dispatches, each round's work doubled while a round takes under 2 ms.
        let mut iterations = 16u32;
        let (mut best, mut improved) = (f64::INFINITY, start);
        loop {
            let round = Instant::now();
            // Best effort, as the dispatches: a failure ends the busy work.
            if program.set("iterations", Uniform::U32(iterations)).is_err() {
                return start.elapsed();
            }
            for _ in 0..8 {
                // Busy work of a fixed size GL always allows.
                let _ = program.dispatch([1024, 1, 1]);
            }
            ctx.finish();
            let took = round.elapsed();
            let per_unit = took.as_secs_f64() / f64::from(iterations);
            if per_unit < 0.98 * best {
                (best, improved) = (per_unit, Instant::now());
            }
            if took < Duration::from_millis(2) && iterations < 1 << 14 {
                iterations *= 2;
            }
            let now = start.elapsed();
            if now >= max || (now >= min && improved.elapsed() >= settle) {
                return now;
            }
        }
    }
}

/// GPU time (timer query) and wall time (to the end of glFinish) of a stretch of work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// GL_TIME_ELAPSED.
    pub gpu: Duration,
    /// Wall clock from the first command to the end of glFinish.
    pub wall: Duration,
}

/// Runs the remaining passes of `run` under a timer query and glFinish, right after `heat`
/// (the upload before it leaves the GPU idle; `Gpu::preheat`).
pub fn time_finish<F: TexelFormat>(run: &mut Execution<'_, F>, heat: &Preheat) -> Result<Timing> {
    let ctx = run.context().clone();
    let timer = GpuTimer::new(&ctx)?;
    heat.run(&ctx);
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

/// Busy work that brings a GPU's clocks up before timed stretches.
pub static PREHEAT: ComputeKernel = ComputeKernel {
    name: "preheat",
    source: include_str!("../glsl/preheat.comp"),
    buffers: &[("Sink", 0)],
    uniforms: &["iterations"],
    optional: &[],
};
