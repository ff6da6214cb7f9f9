//! The cloneable GL context handle every GL object keeps, the context-wide state the draws
//! set (viewport, scissor, clearing, reading pixels back), and the device's description.

use super::pod;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// A cloneable handle to one GL context: its function table, its identity, and (for the
/// contexts symraster makes itself) the means to make it current again.
///
/// Every GL object keeps a clone, and every GL call goes through `Context::gl`, which makes
/// this context current first if another one is (several `Gpu`s on one thread). A headless
/// context lives as long as its last clone, so an object that outlives its `Gpu` still works
/// on its own context and never on another's objects.
///
/// Not `Send`: a GL context is current on one thread, and so is everything made from it.
#[derive(Clone)]
pub struct Context {
    inner: Rc<Inner>,
}

/// Makes a context current on this thread again.
pub(crate) type MakeCurrent = Box<dyn Fn() -> std::result::Result<(), String>>;

struct Inner {
    gl: glow::Context,
    // Unique among the contexts of this process.
    id: u64,
    // Makes the context current again; `None` for contexts made by the caller (a window's),
    // which must stay current while used. Owns the EGL context of a headless one, which is
    // destroyed with the last clone of the handle.
    make_current: Option<MakeCurrent>,
    // Whether large uploads into new buffers go through a mapping (the tuning's choice).
    mapped_uploads: Cell<bool>,
    // The size in bytes from which transfers are staged (see `Context::staged_from`).
    staged_from: Cell<usize>,
    // The bytes per staged chunk where tuned (see `Context::staging_chunk`).
    staging_chunk: Cell<Option<usize>>,
    // Whether the driver compiles shaders in its own threads (see
    // `Context::compiles_in_parallel`).
    parallel_compile: bool,
    // Large buffers freed and kept for reuse (see `Context::take_spare`).
    spares: RefCell<Vec<Spare>>,
    // Staging buffers of large transfers (immutable storage, `usage` holding their storage
    // flags), at most one per flags, kept for the next transfer of at most their size.
    staging: RefCell<Vec<Spare>>,
}

/// A freed buffer's storage kept for a later buffer of the same size and usage.
struct Spare {
    raw: glow::Buffer,
    bytes: i32,
    usage: u32,
}

/// Buffers of at least this many bytes are kept for reuse when freed: allocating fresh GPU
/// storage costs time in proportion to its size (measured in docs/results.md; the refined
/// solves allocate A's f32 copy, C and the panels on every call), where reusing it costs
/// nothing. Debug builds (the tests)
/// keep buffers from 64 KiB and hand them out filled with NaN ([`Buffer::uninitialized`]), so
/// that code relying on fresh storage being zero fails there.
///
/// [`Buffer::uninitialized`]: super::Buffer::uninitialized
#[cfg(not(debug_assertions))]
pub(crate) const SPARE_MIN_BYTES: i32 = 8 << 20;
#[cfg(debug_assertions)]
pub(crate) const SPARE_MIN_BYTES: i32 = 64 << 10;

/// The most freed buffers kept at once (the oldest goes first).
const SPARE_COUNT: usize = 8;

/// The most bytes the kept buffers hold in all.
const SPARE_TOTAL_BYTES: i64 = 4 << 30;

thread_local! {
    // The identity of the context current on this thread (0: none of ours).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The kept buffers go with the context: ours is made current first; a caller's only
        // where it is current (else its storage goes when the caller destroys it).
        let mut spares = std::mem::take(self.spares.get_mut());
        spares.append(self.staging.get_mut());
        let current = || match &self.make_current {
            Some(make_current) => make_current().is_ok(),
            None => CURRENT.with(|c| c.get() == self.id),
        };
        if !spares.is_empty() && current() {
            // This context is current now, whichever was before (so no other handle may
            // think it still is: the identity is cleared below).
            CURRENT.with(|c| c.set(self.id));
            for s in spares {
                unsafe { self.gl.delete_buffer(s.raw) };
            }
        }
        // The EGL context is destroyed with `make_current` after this; nothing of ours is
        // current on this thread then.
        CURRENT.with(|c| {
            if c.get() == self.id {
                c.set(0)
            }
        });
    }
}

/// What the driver says about itself.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// GL_VENDOR.
    pub vendor: String,
    /// GL_RENDERER.
    pub renderer: String,
    /// GL_VERSION.
    pub version: String,
    /// GL_MAJOR_VERSION and GL_MINOR_VERSION.
    pub gl_version: (u32, u32),
    /// GL_MAX_TEXTURE_SIZE as symraster uses it: the driver's, or lower where the tuning says
    /// so ([`Tuning::max_texture_size`](crate::tuning::Tuning::max_texture_size)).
    pub max_texture_size: usize,
    /// GL_MAX_TEXTURE_SIZE as the driver reports it.
    pub driver_max_texture_size: usize,
    /// Index of the EGL device used, among those EGL enumerated.
    pub egl_device_index: usize,
    /// Number of EGL devices found.
    pub egl_device_count: usize,
    /// Whether the device is Mesa's software rasterizer.
    pub software: bool,
}

impl Context {
    /// Wraps a glow context that is current on this thread and that the caller keeps current
    /// while it is used (a window's, for the viewer), so the kernels can run on whichever
    /// context will display their textures.
    pub fn new(gl: glow::Context) -> Self {
        Self::with_make_current(gl, None)
    }

    /// Wraps a glow context that is current on this thread, with the means to make it current
    /// again (which also owns it: it is dropped with the last clone of this handle).
    pub(crate) fn with_make_current(gl: glow::Context, make_current: Option<MakeCurrent>) -> Self {
        let id = next_id();
        CURRENT.with(|c| c.set(id));
        let parallel_compile = compiles_in_parallel(&gl);
        Self {
            inner: Rc::new(Inner {
                gl,
                id,
                make_current,
                parallel_compile,
                mapped_uploads: Cell::new(true),
                staged_from: Cell::new(crate::tuning::DEFAULT_STAGED_FROM_BYTES),
                staging_chunk: Cell::new(None),
                spares: RefCell::new(Vec::new()),
                staging: RefCell::new(Vec::new()),
            }),
        }
    }

    /// Whether the driver offers parallel compilation (GL_KHR_parallel_shader_compile or
    /// GL_ARB_parallel_shader_compile): programs handed to it together then compile side by
    /// side as far as its own thread count allows
    /// (`LazyProgram::start`).
    pub fn compiles_in_parallel(&self) -> bool {
        self.inner.parallel_compile
    }

    /// A kept buffer of exactly `bytes` bytes and GL usage `usage`, if there is one (its
    /// contents are whatever its last user left: for uninitialized buffers only).
    pub(crate) fn take_spare(&self, bytes: i32, usage: u32) -> Option<glow::Buffer> {
        let mut spares = self.inner.spares.borrow_mut();
        let i = spares
            .iter()
            .position(|s| s.bytes == bytes && s.usage == usage)?;
        Some(spares.remove(i).raw)
    }

    /// Keeps a freed buffer for reuse; false where it is too small (the caller deletes it).
    /// Beyond the count or the bytes allowed, the oldest kept ones are deleted.
    pub(crate) fn keep_spare(&self, raw: glow::Buffer, bytes: i32, usage: u32) -> bool {
        if bytes < SPARE_MIN_BYTES || i64::from(bytes) > SPARE_TOTAL_BYTES {
            return false;
        }
        let mut spares = self.inner.spares.borrow_mut();
        spares.push(Spare { raw, bytes, usage });
        while spares.len() > SPARE_COUNT
            || spares.iter().map(|s| i64::from(s.bytes)).sum::<i64>() > SPARE_TOTAL_BYTES
        {
            let old = spares.remove(0);
            unsafe { self.gl().delete_buffer(old.raw) };
        }
        true
    }

    /// Deletes every kept buffer (before retrying an allocation the GPU refused); whether
    /// there were any.
    pub(crate) fn release_spares(&self) -> bool {
        let mut spares: Vec<Spare> = self.inner.spares.borrow_mut().drain(..).collect();
        spares.append(&mut self.inner.staging.borrow_mut());
        let any = !spares.is_empty();
        for s in spares {
            unsafe { self.gl().delete_buffer(s.raw) };
        }
        any
    }

    /// The kept staging buffer of storage flags `flags` and at least `bytes` bytes, if any,
    /// with its size.
    pub(crate) fn take_staging(&self, bytes: i32, flags: u32) -> Option<(glow::Buffer, i32)> {
        let mut staging = self.inner.staging.borrow_mut();
        let i = staging
            .iter()
            .position(|s| s.bytes >= bytes && s.usage == flags)?;
        let s = staging.remove(i);
        Some((s.raw, s.bytes))
    }

    /// Keeps a staging buffer for the next transfer, deleting the one of the same flags kept
    /// before.
    pub(crate) fn keep_staging(&self, raw: glow::Buffer, bytes: i32, flags: u32) {
        let mut staging = self.inner.staging.borrow_mut();
        if let Some(i) = staging.iter().position(|s| s.usage == flags) {
            let old = staging.remove(i);
            unsafe { self.gl().delete_buffer(old.raw) };
        }
        staging.push(Spare {
            raw,
            bytes,
            usage: flags,
        });
    }

    /// Whether transfers from [`Context::staged_from`] on go through mappings filled or
    /// emptied on all cores ([`Tuning::mapped_upload`](crate::tuning::Tuning::mapped_upload)).
    pub(crate) fn mapped_uploads(&self) -> bool {
        self.inner.mapped_uploads.get()
    }

    /// Sets [`Context::mapped_uploads`].
    pub(crate) fn set_mapped_uploads(&self, on: bool) {
        self.inner.mapped_uploads.set(on)
    }

    /// The size in bytes from which uploads into new buffers are mapped and transfers go
    /// through the staging buffers ([`crate::Tuning::staged_from_bytes`]).
    pub(crate) fn staged_from(&self) -> usize {
        self.inner.staged_from.get()
    }

    /// The bytes per chunk of a staged transfer where tuned
    /// ([`crate::Tuning::staging_chunk_bytes`]); `None`: the default, 32 MiB.
    pub(crate) fn staging_chunk(&self) -> Option<usize> {
        self.inner.staging_chunk.get()
    }

    /// Sets [`Context::staging_chunk`].
    pub(crate) fn set_staging_chunk(&self, bytes: Option<usize>) {
        self.inner.staging_chunk.set(bytes)
    }

    /// Sets [`Context::staged_from`] (at least 1).
    pub(crate) fn set_staged_from(&self, bytes: usize) {
        self.inner.staged_from.set(bytes.max(1))
    }

    /// Whether `self` and `other` are handles of the same context.
    pub fn same_as(&self, other: &Context) -> bool {
        self.inner.id == other.inner.id
    }

    /// Loads the GL functions through `display` (EGL, GLX), one of whose contexts must be
    /// current on this thread: a window's context, made by the caller with glutin. (The
    /// headless context loads its own.)
    pub fn load<D: glutin::display::GlDisplay>(display: &D) -> Self {
        // SAFETY: the function pointers come from the display whose context is current on this
        // thread, which is where this Context (not Send) is used.
        let gl = unsafe {
            glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name))
        };
        Self::new(gl)
    }

    /// The raw glow context, for the GL objects of this module, made current on this thread
    /// first when another context is (objects of two `Gpu`s used in turn).
    ///
    /// # Panics
    ///
    /// If another context is current and this one cannot be made current again (a caller's
    /// window context that it did not keep current, or a driver failure): a GL call now would
    /// act on the other context's objects.
    pub(crate) fn gl(&self) -> &glow::Context {
        let id = self.inner.id;
        if CURRENT.with(|c| c.get()) != id {
            match &self.inner.make_current {
                Some(make_current) => {
                    if let Err(e) = make_current() {
                        panic!("cannot make the OpenGL context current again: {e}");
                    }
                    CURRENT.with(|c| c.set(id));
                }
                None => panic!(
                    "a GL object was used while another OpenGL context is current, and its own \
                     context (made by the caller) cannot be made current again"
                ),
            }
        }
        &self.inner.gl
    }

    /// Turns a pending GL error into a typed error naming what was being done.
    pub fn check(&self, during: impl FnOnce() -> String) -> Result<()> {
        match self.take_error() {
            glow::NO_ERROR => Ok(()),
            code => Err(Error::from(DeviceError::Gl {
                code,
                name: error_name(code),
                during: during(),
            })),
        }
    }

    /// The pending GL error (GL_NO_ERROR if none), with any further queued ones drained so
    /// that the next check starts clean.
    fn take_error(&self) -> u32 {
        let code = unsafe { self.gl().get_error() };
        if code != glow::NO_ERROR {
            for _ in 0..16 {
                if unsafe { self.gl().get_error() } == glow::NO_ERROR {
                    break;
                }
            }
        }
        code
    }

    /// [`Context::check`] after a call that allocates `bytes` of GPU memory for `what` ("a
    /// 4096x4096 R32F texture"): GL_OUT_OF_MEMORY there is [`Error::OutOfMemory`] (what "on
    /// the GPU"), any other error [`DeviceError::Gl`].
    pub fn check_allocation(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<()> {
        match self.take_error() {
            glow::NO_ERROR => Ok(()),
            glow::OUT_OF_MEMORY => Err(Error::from(crate::memory::OutOfMemory {
                what: format!("{} on the GPU", what()),
                bytes,
            })),
            code => Err(Error::from(DeviceError::Gl {
                code,
                name: error_name(code),
                during: format!("allocating {}", what()),
            })),
        }
    }

    /// Hands the work submitted so far to the GPU without waiting for it (the host can work
    /// meanwhile).
    pub fn flush(&self) {
        unsafe { self.gl().flush() }
    }

    /// Makes the storage-buffer writes of every dispatch so far visible to later dispatches,
    /// buffer reads and buffer-texture fetches (what `ComputeProgram::dispatch` issues after
    /// each launch).
    pub fn storage_barrier(&self) {
        unsafe {
            self.gl().memory_barrier(
                glow::SHADER_STORAGE_BARRIER_BIT
                    | glow::BUFFER_UPDATE_BARRIER_BIT
                    | glow::UNIFORM_BARRIER_BIT
                    | glow::TEXTURE_FETCH_BARRIER_BIT,
            )
        }
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn finish(&self) {
        unsafe { self.gl().finish() }
    }

    /// Draws into the `width` x `height` rectangle at the bound framebuffer's origin.
    pub fn set_viewport(&self, width: usize, height: usize) {
        unsafe { self.gl().viewport(0, 0, width as i32, height as i32) }
    }

    /// Limits drawing to `rect` = (x, y, width, height) in pixels from the framebuffer's
    /// lower-left corner, or lifts the limit (`None`).
    pub fn set_scissor(&self, rect: Option<[i32; 4]>) {
        unsafe {
            match rect {
                Some([x, y, w, h]) => {
                    self.gl().enable(glow::SCISSOR_TEST);
                    self.gl().scissor(x, y, w, h);
                }
                None => self.gl().disable(glow::SCISSOR_TEST),
            }
        }
    }

    /// Turns off blending, depth testing and the scissor: every fragment drawn is written as
    /// the shader computed it (the state the kernels assume).
    pub fn set_plain_raster_state(&self) {
        unsafe {
            self.gl().disable(glow::BLEND);
            self.gl().disable(glow::DEPTH_TEST);
            self.gl().disable(glow::SCISSOR_TEST);
        }
    }

    /// Fills the bound framebuffer (within the scissor, if set) with `rgba`.
    pub fn clear(&self, rgba: [f32; 4]) {
        unsafe {
            self.gl().clear_color(rgba[0], rgba[1], rgba[2], rgba[3]);
            self.gl().clear(glow::COLOR_BUFFER_BIT);
        }
    }

    /// Binds no program and no vertex array, so later code starts from a clean slate.
    pub fn unbind_program_and_vertex_array(&self) {
        unsafe {
            self.gl().bind_vertex_array(None);
            self.gl().use_program(None);
        }
    }

    /// Reads the `width` x `height` pixels at the lower-left corner of the bound framebuffer
    /// as RGBA8, in GL's order: the bottom row first.
    pub fn read_pixels_rgba8(&self, width: usize, height: usize) -> Result<Vec<[u8; 4]>> {
        let mut data = pod::zeroed::<[u8; 4]>(width * height, || {
            format!("reading back {width}x{height} pixels")
        })?;
        unsafe {
            self.gl().pixel_store_i32(glow::PACK_ALIGNMENT, 4);
            self.gl().read_pixels(
                0,
                0,
                width as i32,
                height as i32,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(pod::bytes_mut(&mut data))),
            );
        }
        self.check(|| format!("reading back {width}x{height} pixels"))?;
        Ok(data)
    }
}

/// Whether the driver of `gl` (current) offers parallel compilation
/// (GL_KHR_parallel_shader_compile or GL_ARB_parallel_shader_compile). Its own thread count
/// is kept: asking for more threads lengthened each process and kept it from the driver's
/// shader cache (docs/results.md, the front doors' first call).
fn compiles_in_parallel(gl: &glow::Context) -> bool {
    let extensions = gl.supported_extensions();
    ["GL_KHR_parallel_shader_compile", "GL_ARB_parallel_shader_compile"]
        .iter()
        .any(|e| extensions.contains(*e))
}

impl DeviceInfo {
    /// Whether the context has compute shaders and shader storage buffers (OpenGL ≥ 4.3),
    /// which the tiled method needs.
    pub fn has_compute(&self) -> bool {
        self.gl_version >= (4, 3)
    }

    /// Asks the driver of `ctx` (current on this thread) for its vendor, renderer, version and
    /// GL_MAX_TEXTURE_SIZE (as the driver says it; a `Gpu` lowers it where its tuning does). A
    /// context not picked from EGL's device list (a window's) counts as device 0 of 1, and as
    /// software when its renderer is Mesa's llvmpipe or softpipe.
    pub fn query(ctx: &Context) -> Result<Self> {
        let gl = ctx.gl();
        let (vendor, renderer, version, max_texture_size, major, minor) = unsafe {
            (
                gl.get_parameter_string(glow::VENDOR),
                gl.get_parameter_string(glow::RENDERER),
                gl.get_parameter_string(glow::VERSION),
                gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE).max(0) as usize,
                gl.get_parameter_i32(glow::MAJOR_VERSION).max(0) as u32,
                gl.get_parameter_i32(glow::MINOR_VERSION).max(0) as u32,
            )
        };
        Ok(Self {
            vendor,
            software: renderer.contains("llvmpipe") || renderer.contains("softpipe"),
            renderer,
            version,
            gl_version: (major, minor),
            max_texture_size,
            driver_max_texture_size: max_texture_size,
            egl_device_index: 0,
            egl_device_count: 1,
        })
    }
}

fn error_name(code: u32) -> &'static str {
    match code {
        glow::INVALID_ENUM => "GL_INVALID_ENUM",
        glow::INVALID_VALUE => "GL_INVALID_VALUE",
        glow::INVALID_OPERATION => "GL_INVALID_OPERATION",
        glow::INVALID_FRAMEBUFFER_OPERATION => "GL_INVALID_FRAMEBUFFER_OPERATION",
        glow::OUT_OF_MEMORY => "GL_OUT_OF_MEMORY",
        glow::STACK_UNDERFLOW => "GL_STACK_UNDERFLOW",
        glow::STACK_OVERFLOW => "GL_STACK_OVERFLOW",
        _ => "unknown GL error",
    }
}
