//! Recording without a display: every pass's frame rendered into an offscreen framebuffer on
//! the headless context and written as numbered PNGs (and optionally one animated GIF).

use super::render::{Renderer, ViewState, read_pixels};
use super::session::{Operation, Problem, Session};
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbaImage};
use std::path::{Path, PathBuf};
use symraster::error::{Error, InputError, Result};
use symraster::gl::{Context, RenderTexture, Rgba8};
use symraster::gpu::{Gpu, Method, Options};
use symraster::internal::GpuInternals;
use symraster::layout::Format;

/// File names of frames: `frame_00000.png` is the state before the first pass, frame p the
/// state after pass p.
pub const FRAME_PREFIX: &str = "frame_";

/// The file name of frame `p`.
pub fn frame_name(p: usize) -> String {
    format!("{FRAME_PREFIX}{p:05}.png")
}

/// What to record.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The operation.
    pub operation: Operation,
    /// The storage format.
    pub format: Format,
    /// The method (one that draws triangles; `Auto` picks the fastest).
    pub method: Method,
    /// Order m.
    pub m: usize,
    /// Seed of the random problem.
    pub seed: u64,
    /// Frame size in pixels.
    pub size: (u32, u32),
    /// Also write an animated GIF of all frames here.
    pub gif: Option<PathBuf>,
    /// Delay between GIF frames, milliseconds.
    pub gif_delay_ms: u32,
}

/// What a recording wrote.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The PNG files in order: passes + 1 of them.
    pub frames: Vec<PathBuf>,
    /// Passes in the plan.
    pub passes: usize,
    /// Relative error of the final result against the CPU f64 reference.
    pub error: Option<f64>,
}

/// An RGBA8 render texture: the frame of the recorder.
pub struct Offscreen {
    ctx: Context,
    target: RenderTexture<Rgba8>,
    size: (u32, u32),
}

impl Offscreen {
    /// Allocates a `size` RGBA8 target.
    pub fn new(ctx: &Context, size: (u32, u32)) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            target: RenderTexture::allocate(ctx, size.0 as usize, size.1 as usize)?,
            size,
        })
    }

    /// Draws `session`'s current state and reads the frame back.
    pub fn render(
        &self,
        renderer: &mut Renderer,
        session: &Session<'_>,
        view: &ViewState,
    ) -> Result<RgbaImage> {
        let snapshot = session.snapshot()?;
        let framebuffer = Some(self.target.framebuffer());
        renderer.draw(&snapshot, view, framebuffer, self.size)?;
        let pixels = read_pixels(&self.ctx, framebuffer, self.size)?;
        Ok(RgbaImage::from_raw(self.size.0, self.size.1, pixels).expect("frame size matches"))
    }
}

/// Renders the state before the first pass and after every pass into `dir` (created if
/// needed) as `frame_00000.png`, `frame_00001.png`, ...; the large view follows the texture
/// each pass writes.
pub fn record(gpu: &Gpu, recording: &Recording, dir: &Path) -> Result<Recorded> {
    let output = |path: &Path, e: &dyn std::fmt::Display| {
        Error::from(InputError::Unsupported(format!(
            "could not write {}: {e}",
            path.display()
        )))
    };
    let problem = Problem::random(recording.m, recording.seed);
    let mut session = Session::new(
        gpu,
        recording.operation,
        Options::new(recording.format).method(recording.method),
        problem,
    )?;
    std::fs::create_dir_all(dir).map_err(|e| output(dir, &e))?;
    let target = Offscreen::new(gpu.context(), recording.size)?;
    let mut renderer = Renderer::new(gpu.context())?;
    let view = ViewState {
        hint: format!(
            "symraster view --record: {} {}, m={}, seed {}",
            recording.operation, recording.format, recording.m, recording.seed
        ),
        ..ViewState::default()
    };
    let mut gif = match &recording.gif {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| output(path, &e))?;
            let mut encoder = GifEncoder::new_with_speed(std::io::BufWriter::new(file), 20);
            encoder
                .set_repeat(Repeat::Infinite)
                .map_err(|e| output(path, &e))?;
            Some((path.clone(), encoder))
        }
        None => None,
    };
    let passes = session.pass_count();
    let mut frames = Vec::with_capacity(passes + 1);
    let mut previous: Option<RgbaImage> = None;
    loop {
        let image = target.render(&mut renderer, &session, &view)?;
        let path = dir.join(frame_name(session.position()));
        image.save(&path).map_err(|e| output(&path, &e))?;
        frames.push(path);
        if let Some((path, encoder)) = gif.as_mut() {
            // Hold the first and last frames longer.
            let ms = if session.position() == 0 || session.is_done() {
                (recording.gif_delay_ms * 4).max(1500)
            } else {
                recording.gif_delay_ms
            };
            // Only the rectangle that changed since the previous frame: keeps the GIF small.
            let (x, y, part) = match &previous {
                Some(prev) => changed_part(prev, &image),
                None => (0, 0, image.clone()),
            };
            encoder
                .encode_frame(Frame::from_parts(
                    part,
                    x,
                    y,
                    Delay::from_numer_denom_ms(ms, 1),
                ))
                .map_err(|e| output(path, &e))?;
            previous = Some(image);
        }
        if !session.step()? {
            break;
        }
    }
    let error = Some(session.result_error()?);
    Ok(Recorded {
        frames,
        passes,
        error,
    })
}

/// The bounding box of the pixels of `next` that differ from `prev` (at least one pixel), as
/// its corner and contents.
fn changed_part(prev: &RgbaImage, next: &RgbaImage) -> (u32, u32, RgbaImage) {
    let (w, h) = next.dimensions();
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for (x, y, p) in next.enumerate_pixels() {
        if prev.get_pixel(x, y) != p {
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x + 1);
            y1 = y1.max(y + 1);
        }
    }
    if x0 >= x1 {
        (x0, y0, x1, y1) = (0, 0, 1, 1);
    }
    // Unchanged pixels inside it become transparent, so the previous frame shows through and
    // the long runs compress well.
    let part = RgbaImage::from_fn(x1 - x0, y1 - y0, |x, y| {
        let p = *next.get_pixel(x0 + x, y0 + y);
        if *prev.get_pixel(x0 + x, y0 + y) == p {
            image::Rgba([0, 0, 0, 0])
        } else {
            p
        }
    });
    (x0, y0, part)
}
