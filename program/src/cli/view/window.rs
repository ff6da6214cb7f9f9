//! The viewer's window: winit 0.30 with a glutin (EGL or GLX) context on which both the
//! library's passes and the heatmaps are drawn, since GL objects belong to one context.

use super::{ViewArgs, no_display};
use crate::debugger::{
    FrameLayout, Operation, Problem, Renderer, Selection, Session, Snapshot, ViewState,
    other_format, read_pixels,
};
use anyhow::{Context as _, Result, anyhow};
use glutin::config::{ConfigTemplateBuilder, GlConfig};
use glutin::context::{
    ContextApi, ContextAttributesBuilder, GlProfile, NotCurrentGlContext, PossiblyCurrentContext,
    Version,
};
use glutin::display::{GetGlDisplay, GlDisplay};
use glutin::surface::{GlSurface, Surface, WindowSurface};
use glutin_winit::{DisplayBuilder, GlWindow};
use raw_window_handle::HasWindowHandle;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use symraster::InputError;
use symraster::gl::{Context, DeviceInfo};
use symraster::internal::GpuInternals;
use symraster::{Error, Format, Gpu, Options};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, ModifiersState, NamedKey};
use winit::window::{Window, WindowId};

/// Opens the window and runs until it is closed (or the screenshot is written).
pub fn run(args: ViewArgs) -> Result<()> {
    // winit panics (rather than failing) when it cannot reach the display: turn both into the
    // same message, without printing the panic.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let event_loop = std::panic::catch_unwind(EventLoop::new);
    std::panic::set_hook(hook);
    let event_loop = match event_loop {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => return Err(no_display(&format!("winit could not start ({e})"))),
        Err(_) => {
            return Err(no_display(&format!(
                "winit could not connect to DISPLAY={}",
                std::env::var("DISPLAY").unwrap_or_default()
            )));
        }
    };
    let mut app = App {
        args,
        running: None,
        result: Ok(()),
    };
    event_loop
        .run_app(&mut app)
        .context("running the window's event loop")?;
    app.result
}

struct App {
    args: ViewArgs,
    running: Option<Running>,
    result: Result<()>,
}

/// The window and what draws in it. Field order is drop order: GL objects go before the
/// context and the window.
struct Running {
    viewer: Viewer,
    surface: Surface<WindowSurface>,
    context: PossiblyCurrentContext,
    window: Window,
}

/// What is shown and how it is controlled.
struct Viewer {
    gpu: &'static Gpu,
    session: Session<'static>,
    snapshot: Snapshot,
    renderer: Renderer,
    view: ViewState,
    layout: Option<FrameLayout>,
    m: usize,
    seed: u64,
    playing: bool,
    speed: f64,
    next_tick: Instant,
    message: String,
    modifiers: ModifiersState,
    drag: Option<([f32; 2], [f32; 2])>,
    screenshot: Option<(PathBuf, u32)>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        match open(event_loop, &self.args) {
            Ok(running) => {
                running.window.request_redraw();
                say!("{}", running.viewer.snapshot.status());
                self.running = Some(running);
            }
            Err(e) => {
                self.result = Err(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = self.running.as_mut() else {
            return;
        };
        let redraw = match event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                false
            }
            WindowEvent::Resized(size) => {
                if let (Some(w), Some(h)) =
                    (NonZeroU32::new(size.width), NonZeroU32::new(size.height))
                {
                    r.surface.resize(&r.context, w, h);
                }
                true
            }
            WindowEvent::RedrawRequested => {
                match r.draw() {
                    Ok(true) => event_loop.exit(),
                    Ok(false) => {}
                    Err(e) => {
                        self.result = Err(e);
                        event_loop.exit();
                    }
                }
                false
            }
            WindowEvent::ModifiersChanged(m) => {
                r.viewer.modifiers = m.state();
                false
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                if r.viewer.key(&event.logical_key) {
                    event_loop.exit();
                }
                true
            }
            WindowEvent::CursorMoved { position, .. } => {
                let p = [position.x as f32, position.y as f32];
                let v = &mut r.viewer;
                v.view.cursor = Some(p);
                if let Some((start, pan)) = v.drag {
                    v.view.pan = [pan[0] - (p[0] - start[0]), pan[1] - (p[1] - start[1])];
                }
                true
            }
            WindowEvent::CursorLeft { .. } => {
                r.viewer.view.cursor = None;
                r.viewer.drag = None;
                true
            }
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => {
                let v = &mut r.viewer;
                v.drag = match (state, v.view.cursor) {
                    (ElementState::Pressed, Some(c)) => Some((c, v.view.pan)),
                    _ => None,
                };
                false
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                r.viewer.zoom(1.25f32.powf(lines));
                true
            }
            _ => false,
        };
        if redraw {
            r.window.set_title(&r.viewer.title());
            r.window.request_redraw();
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(r) = self.running.as_mut() else {
            return;
        };
        let v = &mut r.viewer;
        if !v.playing {
            event_loop.set_control_flow(ControlFlow::Wait);
            return;
        }
        let now = Instant::now();
        if now >= v.next_tick {
            // At high speeds several passes per frame; never more than 60 frames a second.
            let passes = (v.speed / 60.0).ceil().max(1.0) as usize;
            let interval = Duration::from_secs_f64(passes as f64 / v.speed);
            v.act(|v| {
                for _ in 0..passes {
                    if !v.session.step()? {
                        break;
                    }
                }
                Ok(())
            });
            if v.session.is_done() {
                v.playing = false;
                say!("{}", v.snapshot.status());
            }
            v.next_tick = now + interval;
            r.window.set_title(&v.title());
            r.window.request_redraw();
        }
        event_loop.set_control_flow(ControlFlow::WaitUntil(v.next_tick));
    }
}

/// The window, its surface and a current OpenGL 3.3+ core context on it.
type WindowContext = (
    Window,
    Surface<WindowSurface>,
    PossiblyCurrentContext,
    glutin::display::Display,
);

/// Creates the window and makes a GL context on it current (the newest core version offered).
fn window_and_context(event_loop: &ActiveEventLoop, args: &ViewArgs) -> Result<WindowContext> {
    let attributes = Window::default_attributes()
        .with_title("symraster view")
        .with_inner_size(PhysicalSize::new(args.size.0, args.size.1));
    let (window, config) = DisplayBuilder::new()
        .with_window_attributes(Some(attributes))
        .build(event_loop, ConfigTemplateBuilder::new(), |configs| {
            // No multisampling: a texel must stay a crisp block of one colour.
            configs
                .min_by_key(|c| (c.num_samples(), c.srgb_capable()))
                .expect("the display offers at least one config")
        })
        .map_err(|e| anyhow!("could not create the window and its GL config: {e}"))?;
    let window = window.context("the display made no window")?;
    let handle = window.window_handle().ok().map(|h| h.as_raw());
    let display = config.display();
    let mut refused = Vec::new();
    let mut not_current = None;
    for (major, minor) in [(4, 5), (4, 3), (3, 3)] {
        let attributes = ContextAttributesBuilder::new()
            .with_profile(GlProfile::Core)
            .with_context_api(ContextApi::OpenGl(Some(Version::new(major, minor))))
            .build(handle);
        match unsafe { display.create_context(&config, &attributes) } {
            Ok(c) => {
                not_current = Some(c);
                break;
            }
            Err(e) => refused.push(format!("{major}.{minor}: {e}")),
        }
    }
    let not_current = not_current.with_context(|| {
        format!(
            "no OpenGL 3.3+ core context for the window ({})",
            refused.join("; ")
        )
    })?;
    let surface_attributes = window
        .build_surface_attributes(Default::default())
        .map_err(|e| anyhow!("window surface attributes: {e}"))?;
    let surface = unsafe { display.create_window_surface(&config, &surface_attributes) }
        .context("creating the window surface")?;
    let context = not_current
        .make_current(&surface)
        .context("making the window's GL context current")?;
    Ok((window, surface, context, display))
}

/// Creates the window, its GL context and the viewer on it.
fn open(event_loop: &ActiveEventLoop, args: &ViewArgs) -> Result<Running> {
    let (window, surface, context, display) = window_and_context(event_loop, args)?;
    let ctx = Context::load(&display);
    let info = DeviceInfo::query(&ctx)?;
    say!(
        "window: {}x{} on {} ({}, {})",
        window.inner_size().width,
        window.inner_size().height,
        info.renderer,
        info.version,
        display.version_string()
    );
    // The kernels live as long as the process: sessions borrow them for the window's life.
    let gpu: &'static Gpu = Box::leak(Box::new(
        Gpu::builder()
            .vars(std::env::vars())?
            .build_on(ctx.clone(), info)?,
    ));
    let problem = Problem::random(args.m, args.seed);
    let operation: Operation = args.op.into();
    let options = crate::cli::options(args.format, args.method);
    let format = options.format;
    let mut session = Session::new(gpu, operation, options, problem).with_context(|| {
        format!(
            "starting {operation} in {format} format with m = {}",
            args.m
        )
    })?;
    if let Some(n) = args.auto_steps {
        session.seek(n)?;
    }
    let snapshot = session.snapshot()?;
    let mut viewer = Viewer {
        gpu,
        session,
        snapshot,
        renderer: Renderer::new(&ctx)?,
        view: ViewState::default(),
        layout: None,
        m: args.m,
        seed: args.seed,
        playing: false,
        speed: args.speed.clamp(0.25, 10_000.0),
        next_tick: Instant::now(),
        message: String::new(),
        modifiers: ModifiersState::empty(),
        drag: None,
        screenshot: args.screenshot.clone().map(|p| (p, 2)),
    };
    viewer.update_hint();
    window.set_title(&viewer.title());
    Ok(Running {
        viewer,
        surface,
        context,
        window,
    })
}

impl Running {
    /// Draws a frame; true when the screenshot was written and the viewer should exit.
    fn draw(&mut self) -> Result<bool> {
        let size = self.window.inner_size();
        let size = (size.width.max(1), size.height.max(1));
        let v = &mut self.viewer;
        v.layout = Some(v.renderer.draw(&v.snapshot, &v.view, None, size)?);
        let mut exit = false;
        let gpu = v.gpu;
        let status = v.snapshot.status();
        if let Some((path, frames_left)) = v.screenshot.as_mut() {
            // Read back the window's own back buffer, after a frame or two so it is mapped.
            *frames_left = frames_left.saturating_sub(1);
            if *frames_left == 0 {
                let pixels = read_pixels(gpu.context(), None, size)?;
                let image =
                    image::RgbaImage::from_raw(size.0, size.1, pixels).expect("frame size matches");
                image
                    .save(&*path)
                    .with_context(|| format!("writing the screenshot {}", path.display()))?;
                say!(
                    "screenshot {} ({}x{}): {}",
                    path.display(),
                    size.0,
                    size.1,
                    status
                );
                exit = true;
            } else {
                self.window.request_redraw();
            }
        }
        self.surface
            .swap_buffers(&self.context)
            .context("presenting the frame")?;
        Ok(exit)
    }
}

impl Viewer {
    fn title(&self) -> String {
        format!("symraster view - {} - H: help", self.snapshot.status())
    }

    fn update_hint(&mut self) {
        let play = if self.playing {
            format!("playing at {} passes/s (Space: pause)", self.speed)
        } else {
            format!("paused, {} passes/s (Space: play)", self.speed)
        };
        let sep = if self.message.is_empty() { "" } else { " | " };
        self.view.hint = format!("{}{sep}H: help | {play} | seed {}", self.message, self.seed);
    }

    /// Runs a change of the session, then reads the textures back; an error stops playback
    /// and shows in the status line.
    fn act(&mut self, f: impl FnOnce(&mut Self) -> symraster::Result<()>) {
        let result = f(self).and_then(|()| self.session.snapshot());
        match result {
            Ok(s) => self.snapshot = s,
            Err(e) => {
                self.playing = false;
                self.message = e.to_string();
                crate::cli::print::stderr_line(format_args!("{e}"));
            }
        }
        self.update_hint();
    }

    fn zoom(&mut self, factor: f32) {
        self.view.zoom = (self.view.zoom * factor).clamp(0.25, 64.0);
    }

    /// Replaces the session (another operation, format or matrix); keeps the old one and
    /// says why when the new one cannot start (e.g. packed format not supported).
    fn switch(
        &mut self,
        operation: Operation,
        format: Format,
        problem: Problem,
        at_step: Option<usize>,
    ) {
        let options = self.session.options();
        match Session::new(self.gpu, operation, options_with(options, format), problem) {
            Ok(session) => {
                self.session = session;
                self.message.clear();
                self.view.selection = Selection::Follow;
                if let Some(k) = at_step {
                    // Land on the same step k of the new plan, to compare formats.
                    let p = self
                        .session
                        .plan()
                        .passes
                        .iter()
                        .position(|p| p.step >= k)
                        .unwrap_or(0);
                    self.act(|v| v.session.seek(p));
                } else {
                    self.act(|_| Ok(()));
                }
                say!("{}", self.snapshot.status());
            }
            Err(e) => {
                let why = match &e {
                    Error::Input(InputError::Unsupported(_)) => format!(
                        "{format} {operation}: {e} (staying in {} format)",
                        self.session.format()
                    ),
                    _ => format!("cannot start {operation} in {format} format: {e}"),
                };
                crate::cli::print::stderr_line(format_args!("{why}"));
                self.message = why;
                self.update_hint();
            }
        }
    }

    /// Handles a key; true to quit.
    fn key(&mut self, key: &Key) -> bool {
        let shift = self.modifiers.shift_key();
        let position = self.session.position();
        let step_k = self.snapshot.last_pass.as_ref().map(|p| p.step);
        match key {
            Key::Named(NamedKey::Escape) => return true,
            Key::Named(NamedKey::ArrowRight) => self.act(|v| v.session.step().map(|_| ())),
            Key::Named(NamedKey::ArrowLeft) => {
                self.act(|v| v.session.seek(position.saturating_sub(1)))
            }
            Key::Named(NamedKey::Home) => self.act(|v| v.session.seek(0)),
            Key::Named(NamedKey::End) => self.act(|v| v.session.seek(usize::MAX)),
            Key::Named(NamedKey::Space) => {
                self.playing = !self.playing && !self.session.is_done();
                self.next_tick = Instant::now();
                self.update_hint();
            }
            Key::Named(NamedKey::ArrowUp) => {
                self.speed = (self.speed * 2.0).min(10_000.0);
                self.update_hint();
            }
            Key::Named(NamedKey::ArrowDown) => {
                self.speed = (self.speed / 2.0).max(0.25);
                self.update_hint();
            }
            Key::Named(NamedKey::Tab) => {
                let n = self.snapshot.panels.len();
                self.view.selection = match (self.view.selection, shift) {
                    (Selection::Follow, false) => Selection::Panel(0),
                    (Selection::Follow, true) => Selection::Panel(n - 1),
                    (Selection::Panel(i), false) if i + 1 < n => Selection::Panel(i + 1),
                    (Selection::Panel(i), true) if i > 0 => Selection::Panel(i - 1),
                    _ => Selection::Follow,
                };
            }
            Key::Named(NamedKey::F1) => self.view.help = !self.view.help,
            Key::Character(c) => match c.to_lowercase().as_str() {
                "q" => return true,
                "n" => self.act(|v| v.session.step().map(|_| ())),
                "p" => self.act(|v| v.session.seek(position.saturating_sub(1))),
                "h" | "?" => self.view.help = !self.view.help,
                "+" | "=" => self.zoom(1.25),
                "-" | "_" => self.zoom(0.8),
                "0" => {
                    self.view.zoom = 1.0;
                    self.view.pan = [0.0, 0.0];
                }
                "f" => {
                    let s = &self.session;
                    let (op, fmt, pb) =
                        (s.operation(), other_format(s.format()), s.problem().clone());
                    self.switch(op, fmt, pb, step_k);
                }
                "o" => {
                    let s = &self.session;
                    let (op, fmt, pb) = (s.operation().other(), s.format(), s.problem().clone());
                    self.switch(op, fmt, pb, None);
                }
                "r" => {
                    self.seed += 1;
                    let problem = Problem::random(self.m, self.seed);
                    let s = &self.session;
                    let (op, fmt) = (s.operation(), s.format());
                    self.switch(op, fmt, problem, None);
                }
                _ => {}
            },
            _ => {}
        }
        if !self.playing {
            say!("{}", self.snapshot.status());
        }
        false
    }
}

/// The same options in another format (the method stays).
fn options_with(options: Options, format: Format) -> Options {
    Options { format, ..options }
}
