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
use std::cell::Cell;
use std::time::{Duration, Instant};

/// How long [`Preheat::run_with`] keeps the GPU busy: at least `min`, then until its rounds of
/// busy work have not got faster for `settle` and run within `top` of the fastest rate any of
/// its runs has seen (the clocks at their working speed); where no run has seen that rate yet,
/// at least `first`; never longer than `max`. A GPU left idle (while a process compiles its
/// kernels, during CPU steps) drops its clocks, and under load brings them back only after a
/// delay: a run that stops when its rate stops rising, before that, leaves the timed runs at
/// the idle clock (`figures/h200/experiments/stability/clock_ramp_runs.csv`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreheatLimits {
    /// The least time busy.
    pub min: Duration,
    /// How long the rate must have stopped rising (by 2% per round).
    pub settle: Duration,
    /// The least time busy while no run has seen the fastest rate (the first run).
    pub first: Duration,
    /// The most time busy.
    pub max: Duration,
    /// How much slower than the fastest rate seen a round may be and count as at speed.
    pub top: f64,
}

impl Default for PreheatLimits {
    fn default() -> Self {
        Self {
            min: Duration::from_millis(100),
            settle: Duration::from_millis(100),
            first: Duration::from_millis(1500),
            max: Duration::from_secs(3),
            top: 1.08,
        }
    }
}

/// Busy work run just before a timed stretch so that the GPU's clocks are at their working
/// speed when it starts: a timer query measures at whatever clock the GPU runs, and a GPU
/// left nearly idle (by a CPU step, by uploads, by short runs with gaps) lowers it. Nothing on
/// software renderers (the CPU is the GPU there) or without compute shaders.
pub struct Preheat {
    // The busy kernel (compiled on first use) and the buffer it could write; `None` where
    // there is nothing to do.
    kernel: Option<(LazyProgram, Buffer<f32>)>,
    // The fastest rate of busy work any run has seen (seconds per unit; infinite before the
    // first run): the rate at the GPU's working clocks.
    fastest: Cell<f64>,
}

impl Preheat {
    /// The busy kernel for `ctx`'s device, compiled on its first run (nothing on software
    /// renderers and devices without compute shaders).
    pub fn new(ctx: &Context) -> Result<Self> {
        let info = DeviceInfo::query(ctx)?;
        if info.software {
            return Ok(Self {
                kernel: None,
                fastest: Cell::new(f64::INFINITY),
            });
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
        Ok(Self {
            kernel,
            fastest: Cell::new(f64::INFINITY),
        })
    }

    /// Whether [`Preheat::run`] does anything here.
    pub fn is_active(&self) -> bool {
        self.kernel.is_some()
    }

    /// Keeps the GPU busy until its clocks are up ([`PreheatLimits::default`]) and waits for
    /// it to finish; returns the time spent.
    pub fn run(&self, ctx: &Context) -> Duration {
        self.run_with(ctx, PreheatLimits::default())
    }

    /// Keeps the GPU busy within `limits` and waits for it to finish; returns the time spent.
    pub fn run_with(&self, ctx: &Context, limits: PreheatLimits) -> Duration {
        let start = Instant::now();
        let Some((Ok(program), sink)) = self.kernel.as_ref().map(|(p, sink)| (p.get(), sink)) else {
            return start.elapsed();
        };
        sink.bind_base(0);
        // The reference this run is held to: the fastest rate earlier runs saw.
        let fastest = self.fastest.get();
        // Rounds of 8 dispatches, each round's work doubled while a round takes under 2 ms.
        let mut iterations = 16u32;
        let (mut best, mut improved) = (f64::INFINITY, start);
        let done = loop {
            let round = Instant::now();
            // Best effort, as the dispatches: a failure ends the busy work.
            if program.set("iterations", Uniform::U32(iterations)).is_err() {
                break start.elapsed();
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
            let settled = now >= limits.min && improved.elapsed() >= limits.settle;
            let at_speed = match fastest.is_finite() {
                true => per_unit <= limits.top * fastest,
                false => now >= limits.first,
            };
            if now >= limits.max || (settled && at_speed) {
                break now;
            }
        };
        if best < fastest {
            self.fastest.set(best);
        }
        done
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
