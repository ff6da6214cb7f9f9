//! Typed errors of the library, grouped by kind so a caller can match on what went wrong:
//! the input ([`InputError`]), the device ([`DeviceError`]), the arithmetic
//! ([`NumericalError`]) or memory ([`OutOfMemory`]). Every message names what to do about it.

use crate::format::Format;
pub use crate::memory::OutOfMemory;

/// Everything that can go wrong in symraster.
///
/// ```
/// # use symraster::{Error, NumericalError};
/// fn describe(e: &Error) -> String {
///     match e {
///         Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }) => {
///             format!("not SPD at column {column}")
///         }
///         Error::Input(_) => "fix the input".into(),
///         Error::Device(_) => "fix the GPU set-up".into(),
///         _ => e.to_string(),
///     }
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's data or options cannot work.
    #[error(transparent)]
    Input(#[from] InputError),
    /// OpenGL, the device or its configuration failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The computation met a matrix it cannot handle (not positive definite, singular, overflow).
    #[error(transparent)]
    Numerical(#[from] NumericalError),
    /// Not enough memory, on the host or the GPU, for an allocation whose size was known
    /// ahead (an input's copy, a result, a GPU buffer).
    #[error(transparent)]
    OutOfMemory(#[from] OutOfMemory),
}

/// The three kinds of [`Error`], for callers that only branch on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// [`Error::Input`].
    Input,
    /// [`Error::Device`].
    Device,
    /// [`Error::Numerical`].
    Numerical,
    /// [`Error::OutOfMemory`].
    OutOfMemory,
}

impl Error {
    /// Which group the error belongs to.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Input(_) => ErrorKind::Input,
            Error::Device(_) => ErrorKind::Device,
            Error::Numerical(_) => ErrorKind::Numerical,
            Error::OutOfMemory(_) => ErrorKind::OutOfMemory,
        }
    }

    /// A shape mismatch with this description.
    pub fn shape(message: impl Into<String>) -> Self {
        InputError::Shape(message.into()).into()
    }
}

/// Bad input: shapes, values, sizes and options.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// An input holds NaN or an infinity.
    #[error("input {input} holds a non-finite value ({value}) at {position}")]
    NonFinite {
        /// The input's name (and file, where the command line knows it).
        input: String,
        /// Where: "row i, column j (0-based)" or "index k (0-based)".
        position: String,
        /// The value found.
        value: f64,
    },

    /// A value beyond float32's range, which the GPU computes in.
    #[error(
        "input {input} holds {value:e} at {position}, beyond single precision's range \
         (±{max:e}); the GPU computes in float32",
        max = f32::MAX
    )]
    OutOfSinglePrecision {
        /// Which input.
        input: String,
        /// Where, e.g. "row 2, column 5 (0-based)".
        position: String,
        /// The value.
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
        /// The input's name.
        input: String,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },

    /// A has more columns than one n x m texture of A holds in a run stepped pass by pass
    /// (assemble, factor and solve split a wider A into column blocks instead).
    #[error(
        "A has {n} columns, but the faithful method stores A as an {n}x{m} texture and this \
         GPU's GL_MAX_TEXTURE_SIZE is {limit}: a run stepped pass by pass takes at most {limit} \
         columns (assemble, factor and solve split a wider A into blocks of columns)"
    )]
    TooWide {
        /// Columns of A.
        n: usize,
        /// Rows of A.
        m: usize,
        /// GL_MAX_TEXTURE_SIZE.
        limit: usize,
    },

    /// The matrix is too large for the GPU's textures in the chosen format.
    #[error(
        "m = {m} needs a {width}x{height} texture in {format} format, but this GPU's \
         GL_MAX_TEXTURE_SIZE is {limit}; the largest m that fits is {max_full} in full format \
         and {max_packed} in packed format"
    )]
    TooLarge {
        /// The order asked for.
        m: usize,
        /// The format asked for.
        format: Format,
        /// Texture width it needs.
        width: usize,
        /// Texture height it needs.
        height: usize,
        /// GL_MAX_TEXTURE_SIZE.
        limit: usize,
        /// The largest order in full format.
        max_full: usize,
        /// The largest order in packed format.
        max_packed: usize,
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
        /// The length given.
        len: usize,
        /// The order just below.
        n_below: usize,
        /// Its length.
        below: usize,
        /// The order just above.
        n_above: usize,
        /// Its length.
        above: usize,
    },

    /// An option has a value that cannot work.
    #[error("invalid option: {0}")]
    InvalidOption(String),

    /// The requested combination (of format, method, operation) is not available.
    #[error("not supported: {0}")]
    Unsupported(String),
}

/// The device: EGL, OpenGL, shaders, and the environment variables that configure them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
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
    NoSuchDevice {
        /// The index asked for.
        index: usize,
        /// How many devices EGL enumerated.
        count: usize,
    },

    /// An environment variable symraster reads holds a value it cannot use.
    #[error("environment variable {name} must be {expected}, not {value:?}")]
    BadEnvironment {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },

    /// A tuning value the device cannot run, or that gives wrong results on it.
    #[error("cannot use {what} on this device: {why}")]
    BadTuning {
        /// The value.
        what: String,
        /// Why not.
        why: String,
    },

    /// An OpenGL call reported an error.
    #[error("OpenGL error {code:#06x} ({name}) after {during}")]
    Gl {
        /// The GL error code.
        code: u32,
        /// Its GL name.
        name: &'static str,
        /// What was being done.
        during: String,
    },

    /// A GL object could not be created.
    #[error("could not create {what}: {message}")]
    GlCreate {
        /// The kind of object.
        what: &'static str,
        /// What the driver said.
        message: String,
    },

    /// A shader did not compile: the numbered source and the driver's log.
    #[error(
        "shader {name} failed to compile: {} (the driver's whole log and the numbered source \
         are logged at debug level: RUST_LOG=symraster=debug)",
        first_line(log)
    )]
    ShaderCompile {
        /// The shader's name.
        name: String,
        /// The driver's log.
        log: String,
        /// The source with line numbers, as the log counts them.
        numbered_source: String,
    },

    /// A program did not link.
    #[error(
        "program {name} failed to link: {} (the driver's whole log is logged at debug level: \
         RUST_LOG=symraster=debug)",
        first_line(log)
    )]
    ProgramLink {
        /// The program's name.
        name: String,
        /// The driver's log.
        log: String,
    },

    /// A framebuffer is not complete with its attachment.
    #[error(
        "framebuffer incomplete (status {status:#06x}) for a {width}x{height} {format} texture"
    )]
    FramebufferIncomplete {
        /// glCheckFramebufferStatus's answer.
        status: u32,
        /// Attachment width.
        width: u32,
        /// Attachment height.
        height: u32,
        /// The attachment's internal format (R32F, RGBA32F, RGBA8).
        format: &'static str,
    },

    /// A compute program disagrees with its kernel's declaration (its family's `table.rs`): an
    /// undeclared uniform active or set, or a declared one missing.
    #[error(
        "compute kernel {kernel}: {problem} (an internal error: its declaration and its shader disagree)"
    )]
    KernelInterface {
        /// The kernel (and its variant).
        kernel: String,
        /// What disagrees, naming the uniform.
        problem: String,
    },

    /// The device lacks what a method needs (compute shaders, a GL version, a limit).
    #[error("this device cannot {what}: {why}")]
    Unsupported {
        /// What was asked.
        what: String,
        /// What the device lacks.
        why: String,
    },
}

/// The arithmetic: matrices the algorithms cannot factor, results that do not fit in f32.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NumericalError {
    /// Cholesky met a pivot that is not positive: column numbered from 0 (LAPACK's INFO − 1).
    #[error(
        "matrix is not positive definite: the pivot of column {column} (0-based) is not positive \
         (value {pivot})"
    )]
    NotPositiveDefinite {
        /// The first failing column, 0-based.
        column: usize,
        /// The pivot there before its square root: the diagonal entry of the Schur complement
        /// (zero, negative or NaN).
        pivot: f64,
    },

    /// The f32 factor of a C that is positive definite in f64 failed: C is too ill-conditioned
    /// for single precision (the f64 factor exists and C with a unit diagonal is not singular
    /// to double precision).
    #[error(
        "C is positive definite, but too ill-conditioned to factor in float32: the float32 pivot \
         of column {column} (0-based) is not positive, while C's float64 Cholesky succeeds \
         (condition of C scaled to a unit diagonal about {condition:.1e}; float32 needs it \
         below about 1e7); solve with the SPD solve, which falls back to float64, or factor \
         in float64"
    )]
    IllConditionedForSingle {
        /// The column where the f32 factor failed, 0-based.
        column: usize,
        /// An estimate of κ₁ of C equilibrated to a unit diagonal.
        condition: f64,
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
    NonFiniteResult {
        /// Row of the first non-finite entry.
        row: usize,
        /// Its column.
        col: usize,
    },

    /// A result entry lies outside single precision's range (it would be ±inf, or flush to
    /// zero), though the inputs are finite.
    #[error(
        "{what} leaves single precision's range: entry ({row}, {col}) (0-based) is {value:.3e}, \
         {why}; scale the input ({fix})"
    )]
    OutOfRange {
        /// What was computed ("C = A·diag(d)·Aᵀ").
        what: &'static str,
        /// Row of the entry.
        row: usize,
        /// Its column.
        col: usize,
        /// Its value in double precision.
        value: f64,
        /// Why it does not fit.
        why: String,
        /// Which way to scale.
        fix: &'static str,
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

    /// Inversion (Gauss-Jordan or LU with partial pivoting) found no usable pivot: the matrix is
    /// singular, or too close to singular for single precision.
    #[error(
        "matrix is singular to single precision: the largest pivot candidate of column {column} \
         (0-based) is {pivot:.3e}, at or below the tolerance {tolerance:.3e} (order × f32 epsilon \
         × the largest entry)"
    )]
    SingularMatrix {
        /// The first column without a usable pivot, 0-based.
        column: usize,
        /// The pivot found there (after partial pivoting).
        pivot: f64,
        /// The tolerance it fell under.
        tolerance: f64,
    },

    /// An inverse whose residual ‖I − M·X‖_F shows it is none: the matrix is too
    /// ill-conditioned for the precision it was inverted in.
    #[error(
        "the matrix is too ill-conditioned for {precision} precision: ‖I − M·X‖_F = \
         {residual:.2e} {after}, so X is no inverse (κ_F(M) ≈ ‖M‖_F·‖X‖_F = {condition:.1e}); \
         {advice}"
    )]
    IllConditioned {
        /// "single" (the GPU's f32 inverse) or "double" (the CPU's f64 fallback).
        precision: &'static str,
        /// ‖I − M·X‖_F (or its estimate).
        residual: f64,
        /// Which inverse and how the residual was measured.
        after: String,
        /// ‖M‖_F·‖X‖_F of the computed X.
        condition: f64,
        /// What to do about it.
        advice: &'static str,
    },

    /// The Newton iteration for the matrix sign function (Benner et al. eq. 1) failed: the
    /// matrix has eigenvalues on or near the imaginary axis.
    #[error(
        "the matrix sign function does not exist or cannot be computed: {why}; the matrix has \
         eigenvalues on or too near the imaginary axis"
    )]
    SignNotConverged {
        /// Newton iterations done.
        iterations: usize,
        /// What happened (a singular iterate, no convergence, a non-finite iterate).
        why: String,
    },

    /// The Lyapunov solver needs a stable A (all eigenvalues in the open left half-plane).
    #[error(
        "A is not stable: about {unstable} of its {order} eigenvalues have positive real part \
         (from trace(sign(A)) = {trace:.3}); solve_continuous_lyapunov needs all in the open left \
         half-plane"
    )]
    NotStable {
        /// Order of A.
        order: usize,
        /// Eigenvalues with positive real part, (n + trace(sign A)) / 2 rounded.
        unstable: usize,
        /// trace(sign(A)).
        trace: f64,
    },

    /// AD²Aᵀ is singular by its shape or its weights alone: fewer observations (columns of A)
    /// than unknowns, or fewer than m non-zero weights d.
    #[error("{}", singular_product(*m, *n, *nonzero))]
    SingularProduct {
        /// Rows of A (unknowns).
        m: usize,
        /// Columns of A (observations).
        n: usize,
        /// Non-zero entries of d.
        nonzero: usize,
    },

    /// The f64 factor of C (AD²Aᵀ in least squares; the fallback when the f32 one fails)
    /// exists, but C is singular to double precision: its condition estimate reaches 1/ε
    /// (ε = 2⁻⁵²) or a pivot is rounding noise.
    #[error(
        "{matrix} is singular to double precision: condition estimate {condition:.2e} (limit \
         1/ε = {limit:.2e}), smallest pivot L(j,j)² = {ratio:.2e}·C(j,j) in column {column} \
         (0-based; limit {pivot_limit:.1e}); {hint}",
        limit = 1.0 / f64::EPSILON,
        pivot_limit = 64.0 * f64::EPSILON
    )]
    SingularToDouble {
        /// The matrix, as the operation names it ("AD²Aᵀ" in least squares, "C" in the SPD
        /// solve).
        matrix: &'static str,
        /// What to check, in the operation's terms.
        hint: &'static str,
        /// The estimate of κ₁(C) (at least C(j,j)/L(j,j)² of the column below).
        condition: f64,
        /// The column with the smallest pivot ratio, 0-based.
        column: usize,
        /// Its L(j,j)² / C(j,j).
        ratio: f64,
    },

    /// One problem of a batch has a result entry outside single precision's range (it would be
    /// ±inf, or flush to zero), though its inputs are finite.
    #[error(
        "{what} of problem {problem} (0-based) leaves single precision's range: entry ({row}, \
         {row}) is {value:.3e}, {why}; scale that problem's input ({fix})"
    )]
    BatchOutOfRange {
        /// What was computed ("C = A·diag(d)·Aᵀ").
        what: &'static str,
        /// The problem's index in the batch.
        problem: usize,
        /// The row (and column) of the diagonal entry.
        row: usize,
        /// Its value in double precision.
        value: f64,
        /// Why it does not fit.
        why: String,
        /// Which way to scale.
        fix: &'static str,
    },

    /// A result computed on a problem scaled by a power of two leaves f64's range once scaled
    /// back (an inverse, a Lyapunov solution).
    #[error(
        "{what} leaves double precision's range once scaled back to the data's units: entry \
         ({row}, {col}) (0-based) would be {value:.3e}; scale the input by a power of two"
    )]
    ResultOutOfRange {
        /// What was computed ("A⁻¹", "X").
        what: &'static str,
        /// Row of the entry.
        row: usize,
        /// Its column.
        col: usize,
        /// Its value once scaled back (±inf or 0).
        value: f64,
    },

    /// The solution is finite in the scaled problem but leaves f64's range once scaled back.
    #[error(
        "the solution x leaves double precision's range: entry {index} (0-based) is {value} once \
         scaled back to the data's units; scale b down or A up"
    )]
    SolutionOutOfRange {
        /// The first entry that is not finite.
        index: usize,
        /// Its value (±inf).
        value: f64,
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
}

/// The message of [`NumericalError::SingularProduct`]: why AD²Aᵀ is singular.
fn singular_product(m: usize, n: usize, nonzero: usize) -> String {
    if n < m {
        format!(
            "AD²Aᵀ is singular because n < m: A is {m}x{n}, so {n} observations cannot determine \
             {m} unknowns; least squares needs at least as many columns as rows"
        )
    } else {
        format!(
            "AD²Aᵀ is singular: only {nonzero} of d's {n} entries are non-zero, fewer than \
             m = {m} (the unknowns); give at least m observations a non-zero weight"
        )
    }
}

/// Result with the library's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The first non-empty line of a driver's log, and how many lines follow it.
fn first_line(log: &str) -> String {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    match lines.next() {
        None => "(the driver gave no log)".into(),
        Some(first) => match lines.count() {
            0 => first.to_string(),
            more => format!("{first} (and {more} more lines)"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_groups_and_messages_pass_through() {
        let e: Error = NumericalError::NotPositiveDefinite {
            column: 5,
            pivot: -1.0,
        }
        .into();
        assert_eq!(e.kind(), ErrorKind::Numerical);
        assert_eq!(
            e.to_string(),
            "matrix is not positive definite: the pivot of column 5 (0-based) is not positive \
             (value -1)"
        );
        assert_eq!(Error::shape("A is 2x3").kind(), ErrorKind::Input);
        let e: Error = DeviceError::NoSuchDevice { index: 9, count: 1 }.into();
        assert_eq!(e.kind(), ErrorKind::Device);
    }
}
