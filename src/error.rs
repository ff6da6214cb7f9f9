//! Typed errors of the library.

use crate::Format;

/// Everything that can go wrong in symraster, each with a message a user can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No EGL library, no EGL device, or no context could be made on any device.
    #[error(
        "no usable OpenGL device: {detail}. symraster needs EGL with desktop OpenGL 3.3 or newer; \
         on Debian/Ubuntu install: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri \
         (or the GPU vendor's driver)"
    )]
    NoDevice {
        /// What was tried and what failed.
        detail: String,
    },

    /// `SYMRASTER_EGL_DEVICE` (or an explicit index) names a device that does not exist.
    #[error(
        "EGL device index {index} asked for, but only {count} device(s) exist (indices 0..{count})"
    )]
    NoSuchDevice { index: usize, count: usize },

    /// `SYMRASTER_EGL_DEVICE` is set to something that is not an index.
    #[error("SYMRASTER_EGL_DEVICE must be a device index (0, 1, ...), not {value:?}")]
    BadDeviceVariable { value: String },

    /// An OpenGL call reported an error.
    #[error("OpenGL error {code:#06x} ({name}) after {during}")]
    Gl {
        code: u32,
        name: &'static str,
        during: String,
    },

    /// A GL object could not be created.
    #[error("could not create {what}: {message}")]
    GlCreate { what: &'static str, message: String },

    /// A shader did not compile: the numbered source and the driver's log.
    #[error("shader {name} failed to compile:\n{log}\n--- source ---\n{numbered_source}")]
    ShaderCompile {
        name: String,
        log: String,
        numbered_source: String,
    },

    /// A program did not link.
    #[error("program {name} failed to link:\n{log}")]
    ProgramLink { name: String, log: String },

    /// A framebuffer is not complete with its attachment.
    #[error(
        "framebuffer incomplete (status {status:#06x}) for a {width}x{height} {format} texture"
    )]
    FramebufferIncomplete {
        status: u32,
        width: u32,
        height: u32,
        /// The texture's format, as GL names it ("R32F", "RGBA8").
        format: &'static str,
    },

    /// Cholesky met a pivot that is not positive: column numbered from 0, as in the paper.
    #[error(
        "matrix is not positive definite: the pivot of column {column} (0-based) is not positive \
         (value {pivot})"
    )]
    NotPositiveDefinite {
        /// The first failing column, 0-based.
        column: usize,
        /// The value found on the diagonal of the factor there (NaN, zero or negative).
        pivot: f32,
    },

    /// LU without pivoting met a zero (or non-finite) pivot: column numbered from 0.
    #[error(
        "LU without pivoting met a zero or non-finite pivot in column {column} (0-based, value \
         {pivot}); such a matrix needs pivoting (diagonally dominant matrices never do)"
    )]
    ZeroPivot {
        /// The failing column, 0-based.
        column: usize,
        /// The pivot found.
        pivot: f32,
    },

    /// The factor overflowed or became non-finite away from the diagonal.
    #[error(
        "result is not finite at entry ({row}, {col}) (0-based): the input overflows single precision"
    )]
    NonFiniteResult { row: usize, col: usize },

    /// An input holds NaN or an infinity.
    #[error("input {input} holds a non-finite value ({value}) at {position}")]
    NonFiniteInput {
        input: String,
        position: String,
        value: f64,
    },

    /// Shapes of the inputs do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),

    /// An input with no rows or no columns.
    #[error(
        "input {input} is empty ({rows}x{cols}); symraster needs at least one row and one column"
    )]
    Empty {
        input: String,
        rows: usize,
        cols: usize,
    },

    /// The matrix is too large for the GPU's textures in the chosen format.
    #[error(
        "m = {m} needs a {width}x{height} texture in {format} format, but this GPU's \
         GL_MAX_TEXTURE_SIZE is {limit}; the largest m that fits is {max_full} in full format \
         and {max_packed} in packed format"
    )]
    TooLarge {
        m: usize,
        format: Format,
        width: usize,
        height: usize,
        limit: usize,
        max_full: usize,
        max_packed: usize,
    },

    /// A file (a recorded frame, a screenshot) could not be written.
    #[error("could not write {path}: {detail}")]
    Output {
        /// The file or folder.
        path: std::path::PathBuf,
        /// What failed.
        detail: String,
    },

    /// A buffer's length does not match the matrix order it should hold.
    #[error("{what} of order {n} holds {expected} values, but {actual} were given")]
    Length {
        /// What the buffer is (e.g. "a packed w x h texture").
        what: String,
        /// The matrix order.
        n: usize,
        /// The length that order needs.
        expected: usize,
        /// The length given.
        actual: usize,
    },

    /// An array that should hold a triangle (LAPACK RFP) has a length that is no n(n+1)/2.
    #[error(
        "an RFP array of order n holds n(n+1)/2 values, but {len} is no such number \
         (n = {n_below} holds {below}, n = {n_above} holds {above})"
    )]
    NotTriangular {
        len: usize,
        n_below: usize,
        below: usize,
        n_above: usize,
        above: usize,
    },

    /// Cholesky in single precision produced a pivot too small against the matrix's diagonal
    /// for the factor to mean anything: AD²Aᵀ is singular (A lacks full row rank) or too
    /// ill-conditioned for single precision.
    #[error(
        "matrix is not positive definite to single precision: in column {column} (0-based) the \
         pivot L(j,j)² is {ratio:.2e} times the diagonal entry of AD²Aᵀ, at or below the \
         tolerance {tolerance:.2e}; check that A has full row rank (no repeated or dependent rows)"
    )]
    NumericallySingular {
        /// The first failing column, 0-based.
        column: usize,
        /// L(j,j)² / (AD²Aᵀ)(j,j).
        ratio: f64,
        /// The tolerance it fell under.
        tolerance: f64,
    },

    /// Iterative refinement (Algorithm 1) produced a non-finite residual or iterate.
    #[error(
        "iterative refinement diverged at iteration {iteration}: the residual norm became {residual}; \
         AD²Aᵀ is too ill-conditioned for a single-precision factor"
    )]
    RefinementDiverged {
        /// The iteration (from 0) whose residual or update was not finite.
        iteration: usize,
        /// ‖r‖₂ at that iteration.
        residual: f64,
    },

    /// An option has a value that cannot work.
    #[error("invalid option: {0}")]
    InvalidOption(String),

    /// Reading or writing a file failed.
    #[error("could not write {path}: {source}")]
    Io {
        /// The file or folder.
        path: std::path::PathBuf,
        /// What the system said.
        source: std::io::Error,
    },

    /// The requested combination is not available.
    #[error("not supported: {0}")]
    Unsupported(String),

    /// An environment variable symraster reads holds a value it cannot use.
    #[error("environment variable {name} must be {expected}, not {value:?}")]
    BadEnvironment {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
}

/// Result with the library's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
