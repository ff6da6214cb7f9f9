//! How an operation runs: the [`Method`] and the storage [`Options`], the vocabulary shared by
//! the operations and the refined solves (re-exported by [`crate::gpu`]).

use crate::format::Format;
use crate::gl::DeviceInfo;
use crate::layout::{BlockColumn, Blocking};

/// How a GPU operation is carried out: the paper's method, or the methods past it, each in its
/// own module. [`Method::Auto`], the default, takes the fastest one the device runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// The fastest method this device runs: tiled where there are compute shaders (OpenGL
    /// ≥ 4.3), else blocked, else faithful.
    #[default]
    Auto,
    /// The paper's rasterized passes, one rank-1 update per draw (Algorithms 3 and 5).
    Faithful,
    /// Fragment passes over float4 blocks with rank-K updates (after the Brook+ sample):
    /// OpenGL 3.3, full and packed format (`gpu/blocked.rs`). Its runs step as RGBA32F blocks through
    /// [`Gpu::step`](crate::Gpu::step).
    Blocked,
    /// Compute shaders over tiles in storage buffers (after the CUDA course's tiled Cholesky):
    /// OpenGL 4.3.
    Tiled,
}

impl Method {
    /// The concrete methods, fastest first.
    pub const CONCRETE: [Method; 3] = [Method::Tiled, Method::Blocked, Method::Faithful];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Faithful => "faithful",
            Method::Blocked => "blocked",
            Method::Tiled => "tiled",
        }
    }

    /// Whether the method draws triangles (and so has passes to step through:
    /// [`Gpu::step`](crate::Gpu::step)).
    pub fn rasterizes(self) -> bool {
        matches!(self, Method::Faithful | Method::Blocked)
    }

    /// Whether this build has the method (the others are announced but not yet here).
    pub(crate) fn implemented(self) -> bool {
        matches!(self, Method::Faithful | Method::Tiled | Method::Blocked)
    }

    /// Whether the method can store the matrix in `format` (every method has both formats;
    /// the blocked method packs 2x2 or 4x4 blocks where the others pack entries).
    pub fn supports(self, format: Format) -> bool {
        matches!(format, Format::Full | Format::Packed)
    }

    /// What the method needs of the device, or `None` when `info` has it.
    pub(crate) fn missing(self, info: &DeviceInfo) -> Option<String> {
        if !self.implemented() {
            return Some(format!("the {} method is not built yet", self.name()));
        }
        match self {
            Method::Tiled if !info.has_compute() => Some(format!(
                "the tiled method needs compute shaders (OpenGL 4.3), and this context is \
                 OpenGL {}.{}",
                info.gl_version.0, info.gl_version.1
            )),
            _ => None,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Options of an operation: storage format and method (and the blocked method's blocking).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Full or rectangular packed storage.
    pub format: Format,
    /// How to compute.
    pub method: Method,
    /// The blocked method's blocks: 4 x 4 over four render targets (the default) or 2 x 2.
    pub blocking: Blocking,
    /// The blocked method's Cholesky block column, 16 or 32 columns; `None` (the default): the
    /// device's ([`BlockColumn::for_device`]).
    pub block_column: Option<BlockColumn>,
}

impl Options {
    /// Options with this format and the default method.
    pub fn new(format: Format) -> Self {
        Self {
            format,
            method: Method::default(),
            blocking: Blocking::default(),
            block_column: None,
        }
    }

    /// The same options with another Cholesky block column (used by the blocked method only).
    pub fn block_column(mut self, column: BlockColumn) -> Self {
        self.block_column = Some(column);
        self
    }

    /// The same options with another blocking (used by the blocked method only).
    pub fn blocking(mut self, blocking: Blocking) -> Self {
        self.blocking = blocking;
        self
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
