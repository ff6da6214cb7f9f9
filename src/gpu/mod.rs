//! The user-facing entry point: a GPU context with the operations as methods, one file per
//! operation (`assembly.rs`, `cholesky.rs`, `lu.rs`, `least_squares.rs`), and the method and
//! format choice ([`Options`]) that picks how each runs.

mod assembly;
mod cholesky;
mod factor;
mod least_squares;
mod lu;

pub use assembly::assembly_plan;
pub use cholesky::{check_factor, cholesky_plan};
pub use factor::CholeskyFactor;
pub use lu::LuFactors;

use crate::error::Result;
use crate::gl::{Context, DeviceInfo, HeadlessContext};
use crate::kernels::Kernels;
use crate::layout::{Format, Layout, max_packed_order};

/// How a GPU operation is carried out. The paper's method is the default; faster methods past
/// the paper sit beside it here, each in its own module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// The paper's rasterized passes, one rank-1 update per draw (Algorithms 3 and 5).
    #[default]
    Faithful,
}

/// Options of an operation: storage format and method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Full or rectangular packed storage.
    pub format: Format,
    /// How to compute.
    pub method: Method,
}

impl Options {
    /// Options with this format and the default method.
    pub fn new(format: Format) -> Self {
        Self {
            format,
            method: Method::default(),
        }
    }

    /// The same options with another method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }
}

impl From<Format> for Options {
    fn from(format: Format) -> Self {
        Options::new(format)
    }
}

/// A headless OpenGL context with the kernels compiled, current on this thread.
///
/// Not `Send`: make one `Gpu` per thread that needs one.
pub struct Gpu {
    kernels: Kernels,
    context: Context,
    info: DeviceInfo,
    // The EGL context when this Gpu made its own; declared last so it outlives the kernels.
    _headless: Option<HeadlessContext>,
}

impl Gpu {
    /// Opens the device named by `SYMRASTER_EGL_DEVICE`, else the first hardware device, else
    /// Mesa's software rasterizer.
    pub fn new() -> Result<Self> {
        Self::from_headless(HeadlessContext::new()?)
    }

    /// Opens EGL device `index` (as enumerated by EGL).
    pub fn with_device(index: usize) -> Result<Self> {
        Self::from_headless(HeadlessContext::with_device_index(Some(index))?)
    }

    fn from_headless(headless: HeadlessContext) -> Result<Self> {
        let mut gpu = Self::from_context(headless.context().clone(), headless.info().clone())?;
        gpu._headless = Some(headless);
        Ok(gpu)
    }

    /// Compiles the kernels on an existing context (a window's, for the viewer), which must be
    /// current on this thread and stay alive as long as this `Gpu`.
    pub fn from_context(context: Context, info: DeviceInfo) -> Result<Self> {
        let kernels = Kernels::new(&context)?;
        Ok(Self {
            kernels,
            context,
            info,
            _headless: None,
        })
    }

    /// What the driver reported: vendor, renderer, version, texture limit.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The GL handle, for callers that drive textures themselves.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The compiled fragment kernels.
    pub(crate) fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// The largest m in each format: (full, packed).
    pub fn max_order(&self) -> (usize, usize) {
        let limit = self.info().max_texture_size;
        (limit, max_packed_order(limit))
    }

    /// The layout of an m x m matrix in `format` if it fits this GPU's textures, else
    /// [`InputError::TooLarge`](crate::InputError::TooLarge) naming GL_MAX_TEXTURE_SIZE and the
    /// largest m in each format.
    pub fn check_order(&self, m: usize, format: Format) -> Result<Layout> {
        Layout::checked(m, format, self.info().max_texture_size)
    }
}
