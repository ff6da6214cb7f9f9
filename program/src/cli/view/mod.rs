//! `symraster view`: the visual debugger. `--record DIR` renders frames headless (EGL, no
//! window); otherwise a window (winit, in [`window`], only with the `window` feature) shows
//! the same frames live with keyboard and mouse controls.

#[cfg(feature = "window")]
mod window;

use super::{FormatArg, MethodArg};
use crate::debugger::{self, Operation, Recording};
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use symraster::Format;

/// The largest m the viewer accepts: it reads every texture back after each pass.
const MAX_ORDER: usize = 1024;

/// Options of `symraster view`.
#[derive(Args, Clone, Debug)]
pub struct ViewArgs {
    /// Order m of the matrix (A is m x 2m for assembly).
    #[arg(short, default_value_t = 12)]
    pub m: usize,
    /// The operation to watch.
    #[arg(long, value_enum, default_value_t = OpArg::Cholesky)]
    pub op: OpArg,
    /// Storage format.
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    pub format: FormatArg,
    /// How to compute: the viewer steps the faithful method (auto means faithful here) or the
    /// blocked one (4x4 blocks, each texel shown opened into its block); the tiled one draws
    /// nothing.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Seed of the random problem (R in the window picks the next one).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Render the frames headless (EGL, no window) into DIR as frame_00000.png (before the
    /// first pass), frame_00001.png (after pass 1), ...
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// With --record: also write all frames as one animated GIF.
    #[arg(long, value_name = "FILE", requires = "record")]
    pub gif: Option<PathBuf>,
    /// With --gif: milliseconds between frames.
    #[arg(long, default_value_t = 300)]
    pub gif_delay_ms: u32,
    /// Frame (or initial window) size, WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Window: run this many passes before showing the first frame.
    #[arg(long, value_name = "N")]
    pub auto_steps: Option<usize>,
    /// Window: after --auto-steps, save the window's own framebuffer as a PNG and exit.
    #[arg(long, value_name = "FILE", requires = "auto_steps")]
    pub screenshot: Option<PathBuf>,
    /// Window: passes per second when playing (Up/Down change it).
    #[arg(long, default_value_t = 4.0)]
    pub speed: f64,
}

/// The operation, for the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OpArg {
    /// Algorithm 3: C = A·diag(d)·Aᵀ.
    Assembly,
    /// Algorithm 5: C = L·Lᵀ.
    Cholesky,
}

impl From<OpArg> for Operation {
    fn from(o: OpArg) -> Self {
        match o {
            OpArg::Assembly => Operation::Assembly,
            OpArg::Cholesky => Operation::Cholesky,
        }
    }
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected WIDTHxHEIGHT such as 1280x800 (each 320 to 8192), got {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(320..=8192).contains(&w) || !(240..=8192).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// Runs `symraster view`.
pub fn run(args: ViewArgs) -> Result<()> {
    if args.m == 0 || args.m > MAX_ORDER {
        bail!(
            "the viewer shows m from 1 to {MAX_ORDER} (it reads every texture back after each \
             pass); got m = {}",
            args.m
        );
    }
    match &args.record {
        Some(dir) => record(&args, dir.clone()),
        None => open_window(args),
    }
}

fn record(args: &ViewArgs, dir: PathBuf) -> Result<()> {
    let gpu = super::open_gpu()?;
    let recording = Recording {
        operation: args.op.into(),
        format: Format::from(args.format),
        method: args.method.into(),
        m: args.m,
        seed: args.seed,
        size: args.size,
        gif: args.gif.clone(),
        gif_delay_ms: args.gif_delay_ms,
    };
    let done = debugger::record(&gpu, &recording, &dir).with_context(|| {
        format!(
            "recording {} {} m={}",
            recording.operation, recording.format, recording.m
        )
    })?;
    say!(
        "wrote {} frames ({} passes + the initial state) to {}{}; final relative error vs CPU \
         f64 {:.2e} ({})",
        done.frames.len(),
        done.passes,
        dir.display(),
        args.gif
            .as_ref()
            .map(|g| format!(" and {}", g.display()))
            .unwrap_or_default(),
        done.error.unwrap_or(f64::NAN),
        gpu.info().renderer
    );
    Ok(())
}

/// Why no window can be opened, with what to do instead, on one line.
pub fn no_display(reason: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot open the viewer window: {reason}; without a display, record the frames as PNG \
         files (`symraster view --record frames/ [--gif run.gif]`) or give the window a virtual \
         X server (`xvfb-run -a -s '-screen 0 1280x800x24' symraster view`; Debian: apt-get \
         install xvfb)"
    )
}

/// Checks DISPLAY before any event loop is made: winit panics without one.
fn check_display() -> Result<()> {
    let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if set("DISPLAY") {
        return Ok(());
    }
    if set("WAYLAND_DISPLAY") {
        return Err(no_display(
            "WAYLAND_DISPLAY is set but DISPLAY is not, and this build opens its window \
             through X11 (XWayland)",
        ));
    }
    Err(no_display(
        "no display: neither DISPLAY nor WAYLAND_DISPLAY is set",
    ))
}

#[cfg(feature = "window")]
fn open_window(args: ViewArgs) -> Result<()> {
    check_display()?;
    window::run(args)
}

#[cfg(not(feature = "window"))]
fn open_window(_args: ViewArgs) -> Result<()> {
    check_display()?;
    bail!(
        "this symraster was built without the `window` feature, so it cannot open a window; \
         use --record DIR, or rebuild with default features"
    )
}
