//! Matrix inversion on the GPU after Benner et al. (2012), and what it serves: the matrix sign
//! function (eq. 1) and Lyapunov equations.
//!
//! - SPD matrices ([`Kind::Spd`], lower triangle read): [`InverseMethod::Cholesky`] (section 4.1) or
//!   [`InverseMethod::Gje`] (Fig 3 right), s³ flops. The Cholesky route also runs in place in LAPACK's
//!   RFP storage ([`Storage::Rfp`], about half the memory: [`rfp`], [`invert_rfp`]).
//! - General matrices ([`Kind::General`]): [`InverseMethod::Gje`] (blocked Gauss-Jordan with
//!   pivoting, Fig 3 left) or [`InverseMethod::Lu`] (LU with pivoting, section 3.1), 2s³ flops;
//!   tournament pivoting by default, partial pivoting selectable ([`Pivoting`](kernels::panel::Pivoting)).
//!   [`InverseMethod::Auto`] (the default) takes Gauss-Jordan up to order [`AUTO_GJE_MAX_ORDER`]
//!   and LU above it, and Cholesky for SPD matrices.
//!   Symmetric indefinite matrices go through the general GJE, as the paper concludes (its
//!   LDLᵀ inversion is slower than general GJE despite half the flops).
//!
//! The device computes in f32; [`refine`] polishes an inverse in f64 on the CPU (Newton-Schulz)
//! when the f32 inverse is good enough for that to reach double accuracy. One job per file:
//! Every inverse is checked: one whose residual ‖I − M·X‖_F reaches 1/2 is an error
//! ([`NumericalError::IllConditioned`]), never a result; with refinement asked for, the f64 CPU
//! inverse is the fallback ([`check`]).
//! [`kernels`] (the kernels and the device matrix), [`panel`](kernels::panel) (the pivoted panel of both
//! general methods), [`rank`](kernels::rank) (their rank-b block updates), [`gje`], [`lu`], [`spd`], [`rfp`],
//! [`newton`] (the sign iteration on the device), [`widened`] (an f64 square's f32 inverse on the device, widened), [`schulz`] (its f32 Newton-Schulz steps after a hand-over), [`double`](kernels::double) (f64 products on the device), [`refine`], [`sign`](mod@sign),
//! [`lyapunov`], [`bench`](mod@bench) (GPU timings for the reproduction figure).

pub mod bench;
pub mod check;
pub mod convert;
pub mod gje;
pub mod kernels;
pub mod lu;
pub mod lyapunov;
pub mod newton;
pub mod refine;
pub mod schulz;
pub mod rfp;
pub mod sign;
pub mod sign_double;
pub mod spd;
pub mod table;
pub mod widened;

pub use kernels::{DeviceSquare, Inverter};
pub use lyapunov::{Lyapunov, solve_continuous_lyapunov};
pub use refine::{Refined, refine_inverse};
pub use sign::{Handover, PolishCorrection, Sign, SignOptions, sign};

use crate::error::{Error, InputError, NumericalError, Result};
use crate::layout::rfp as rfp_layout;
use crate::matrix::{Matrix, single_precision_error};
use crate::phases::Phases;
use kernels::double::LastStep;
pub use crate::tiled::Storage;

/// What is known about the matrix to invert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Symmetric positive definite: only the lower triangle is read; s³ flops.
    Spd,
    /// Anything square and nonsingular (symmetric indefinite included); 2s³ flops.
    General,
}

/// The largest order at which [`InverseMethod::Auto`] inverts a general matrix by Gauss-Jordan;
/// above it by LU, whose trailing updates in blocks of 512 are faster there
/// (`figures/h200/experiments/auto_method/`).
pub const AUTO_GJE_MAX_ORDER: usize = 8192;

/// How to invert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InverseMethod {
    /// Chosen by kind and order ([`InverseMethod::resolve`]): Cholesky for an SPD matrix;
    /// for a general one Gauss-Jordan up to order
    /// [`AUTO_GJE_MAX_ORDER`](crate::AUTO_GJE_MAX_ORDER), LU above it.
    Auto,
    /// Gauss-Jordan elimination (Fig 3): one sweep, rich in large products.
    Gje,
    /// Cholesky, triangular inverse, L⁻ᵀL⁻¹ (SPD only).
    Cholesky,
    /// LU with partial pivoting, U⁻¹, then the solve with L.
    Lu,
}

impl Kind {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Spd => "spd",
            Kind::General => "general",
        }
    }

    /// The standard flop count of inverting an order-s matrix (Benner et al.: 2s³ general, s³
    /// SPD), for GFLOP/s.
    pub fn flops(self, s: usize) -> f64 {
        let s = s as f64;
        match self {
            Kind::Spd => s * s * s,
            Kind::General => 2.0 * s * s * s,
        }
    }
}

impl InverseMethod {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            InverseMethod::Auto => "auto",
            InverseMethod::Gje => "gje",
            InverseMethod::Cholesky => "cholesky",
            InverseMethod::Lu => "lu",
        }
    }

    /// Whether this method inverts matrices of `kind` (Cholesky needs SPD).
    pub fn supports(self, kind: Kind) -> bool {
        !(self == InverseMethod::Cholesky && kind == Kind::General)
    }

    /// The method that runs for a matrix of `kind` and order `n`: [`InverseMethod::Auto`]
    /// chosen, any other as it is.
    pub fn resolve(self, kind: Kind, n: usize) -> InverseMethod {
        match (self, kind) {
            (InverseMethod::Auto, Kind::Spd) => InverseMethod::Cholesky,
            (InverseMethod::Auto, Kind::General) if n > AUTO_GJE_MAX_ORDER => InverseMethod::Lu,
            (InverseMethod::Auto, Kind::General) => InverseMethod::Gje,
            (method, _) => method,
        }
    }
}

/// How [`Gpu::invert`](crate::Gpu::invert) (and `invert_with`) runs: what the matrix is,
/// the method, the block size b of the blocked algorithms (`None`: the default,
/// `Inverter::block`), the storage on the GPU ([`Storage::Rfp`]: the SPD inverse via
/// Cholesky in place in LAPACK's RFP array; the other methods need full storage), and the
/// Newton-Schulz steps in f64 after the f32 inverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvertOptions {
    /// What the matrix is (default: general).
    pub kind: Kind,
    /// How to invert (default: [`InverseMethod::Auto`], by kind and order).
    pub method: InverseMethod,
    /// The block size b (`None`: the default).
    pub block: Option<usize>,
    /// Full or RFP storage on the GPU.
    pub storage: Storage,
    /// The most Newton-Schulz steps in f64 (on the GPU) after the f32 inverse (0: the f32
    /// inverse widened, its residual checked; default 8), taken while they halve ‖I − M·X‖,
    /// the step from a residual r with r² ≤ ε the last (it reaches f64's rounding): from
    /// ‖I − M·X‖ < 1/2 the steps converge quadratically, so the default reaches f64's
    /// rounding. An X still converging at the limit is replaced by the f64 CPU inverse.
    pub refine_steps: usize,
}

impl Default for InvertOptions {
    fn default() -> Self {
        Self {
            kind: Kind::General,
            method: InverseMethod::Auto,
            block: None,
            storage: Storage::Full,
            refine_steps: 8,
        }
    }
}

impl InvertOptions {
    /// Options for an SPD matrix (lower triangle read) inverted via Cholesky.
    pub fn spd() -> Self {
        Self {
            kind: Kind::Spd,
            method: InverseMethod::Cholesky,
            ..Self::default()
        }
    }
}

/// How [`Gpu::lyapunov`](crate::Gpu::lyapunov) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LyapunovOptions {
    /// Refinement steps in f64 after the sign iteration, at most (default 3): they stop early
    /// once the relative residual ‖Q − AX − XAᵀ‖_F / (‖A‖_F‖X‖_F) is at the unit roundoff,
    /// or stops falling.
    pub refine_steps: usize,
}

impl Default for LyapunovOptions {
    fn default() -> Self {
        Self { refine_steps: 3 }
    }
}

/// Refuses a matrix that cannot be inverted as given: empty, not square, or holding NaN or an
/// infinity or a value beyond float32's range (for SPD, in its lower triangle, the part read).
pub fn check_input<T: Copy + Into<f64> + Sync>(name: &str, a: &Matrix<T>, kind: Kind) -> Result<()> {
    let (r, c) = a.shape();
    if r == 0 || c == 0 {
        return Err(InputError::Empty {
            input: name.into(),
            rows: r,
            cols: c,
        }
        .into());
    }
    if r != c {
        return Err(Error::shape(format!(
            "{name} is {r}x{c}; only square matrices have an inverse"
        )));
    }
    // Fast path: every (read) entry finite and within f32's range (NaN fails the comparison).
    let limit = f64::from(f32::MAX);
    let fine = |row: &[T]| row.iter().all(|&v| v.into().abs() <= limit);
    let s = a.as_slice();
    let read = |(i, row): (usize, &[T])| fine(&row[..if kind == Kind::Spd { i + 1 } else { c }]);
    let all_fine = if r * c < 1 << 18 {
        s.chunks(c).enumerate().all(read)
    } else {
        use rayon::prelude::*;
        s.par_chunks(c).enumerate().with_min_len(64).all(read)
    };
    if all_fine {
        return Ok(());
    }
    for i in 0..r {
        let cols = if kind == Kind::Spd { i + 1 } else { c };
        for j in 0..cols {
            // The GPU inverts in float32: a finite f64 beyond its range is named as such.
            let position = || format!("row {i}, column {j} (0-based)");
            if let Some(e) = single_precision_error(name, &position, a[(i, j)].into()) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// max |A| and ‖A‖_F of an input, from the pass that checks it ([`check_general_input`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    /// The largest |entry|.
    pub max_abs: f64,
    /// The Frobenius norm.
    pub norm: f64,
}

impl Extent {
    /// The extent of the matrix times the power of two `scale` (exact for max |A|).
    pub fn scaled(self, scale: f64) -> Self {
        Self {
            max_abs: self.max_abs * scale,
            norm: self.norm * scale,
        }
    }
}

/// [`check_input`] of a general matrix, with its [`Extent`] from the same pass (the sign
/// function and the Lyapunov solver need both before their first inverse). The squares are
/// summed in fixed chunks and the chunk sums added in order, as
/// [`Matrix::frobenius_norm`] does.
pub fn check_general_input(name: &str, a: &Matrix<f64>) -> Result<Extent> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let limit = f64::from(f32::MAX);
    // (every entry within f32's range (NaN is not), max |a|, Σ a²) of a chunk.
    let pass = |c: &[f64]| {
        c.iter().fold((true, 0.0f64, 0.0f64), |(fine, max, sum), &v| {
            (fine && v.abs() <= limit, max.max(v.abs()), sum + v * v)
        })
    };
    let s = a.as_slice();
    let (fine, max_abs, sum) = if s.len() <= CHUNK {
        pass(s)
    } else {
        let chunks: Vec<_> = s.par_chunks(CHUNK).map(pass).collect();
        chunks.into_iter().fold((true, 0.0f64, 0.0f64), |(f, m, t), (g, n, u)| {
            (f && g, m.max(n), t + u)
        })
    };
    if !fine || a.rows() != a.cols() || s.is_empty() {
        // The error, as check_input names it.
        check_input(name, a, Kind::General)?;
    }
    Ok(Extent {
        max_abs,
        norm: sum.sqrt(),
    })
}

/// The pivot tolerance of the pivoted sweeps: order × f32 epsilon × the largest |entry|; a
/// pivot at or below it makes the matrix singular to single precision.
pub fn pivot_tolerance(a: &Matrix<f32>) -> f32 {
    let max = a.as_slice().iter().fold(0.0f32, |m, x| m.max(x.abs()));
    a.rows() as f32 * f32::EPSILON * max
}

/// A⁻¹ of the square matrix `a` on the GPU in f32 (for [`Kind::Spd`] the full symmetric
/// inverse, from the lower triangle of `a`).
///
/// Errors: [`InputError`] for empty, non-square or non-finite input and for Cholesky on a
/// general matrix; [`NumericalError::NotPositiveDefinite`] (first failing column) for an SPD
/// kind that is not; [`NumericalError::SingularMatrix`] (first column without a usable pivot)
/// for a singular general matrix; [`NumericalError::NonFiniteResult`] if the inverse
/// overflows f32.
pub fn invert(
    inv: &Inverter,
    a: &Matrix<f32>,
    kind: Kind,
    method: InverseMethod,
) -> Result<Matrix<f32>> {
    let method = method.resolve(kind, a.rows());
    let block = default_block(inv, kind, method, a.rows());
    invert_with_block(inv, a, kind, method, block)
}

/// The default block size b of an inversion of `kind` by `method` at order `n`.
pub(crate) fn default_block(inv: &Inverter, kind: Kind, method: InverseMethod, n: usize) -> usize {
    match (kind, method) {
        (Kind::General, InverseMethod::Lu) => inv.lu_block(n),
        (Kind::General, _) => inv.general_block(n),
        _ => inv.block(),
    }
}

/// [`invert`] with an explicit block size b of the blocked algorithms.
pub fn invert_with_block(
    inv: &Inverter,
    a: &Matrix<f32>,
    kind: Kind,
    method: InverseMethod,
    block: usize,
) -> Result<Matrix<f32>> {
    let options = InvertOptions {
        block: Some(block),
        ..InvertOptions::default()
    };
    invert_with(inv, a, kind, method, options)
}

/// Refuses a method this kind of matrix or this storage cannot take: Cholesky for a general
/// matrix, RFP storage for anything but the SPD inverse via Cholesky.
pub fn check_method(kind: Kind, method: InverseMethod, storage: Storage) -> Result<()> {
    if !method.supports(kind) {
        return Err(InputError::Unsupported(format!(
            "the {} method inverts SPD matrices only; use gje or lu for a general matrix",
            method.name()
        ))
        .into());
    }
    // Auto's choice for an SPD matrix is Cholesky, for a general one never RFP's.
    let rfp_method = matches!(method, InverseMethod::Cholesky | InverseMethod::Auto);
    if storage == Storage::Rfp && !(kind == Kind::Spd && rfp_method) {
        return Err(InputError::Unsupported(format!(
            "RFP storage holds the {} {} inversion's matrix in full storage only; the SPD \
             inverse via Cholesky runs in RFP",
            kind.name(),
            method.name()
        ))
        .into());
    }
    Ok(())
}

/// [`invert`] with explicit [`InvertOptions`] (block size, full or RFP storage).
pub fn invert_with(
    inv: &Inverter,
    a: &Matrix<f32>,
    kind: Kind,
    method: InverseMethod,
    options: InvertOptions,
) -> Result<Matrix<f32>> {
    let x = invert_unchecked(inv, a, kind, method, options)?;
    checked(&full_matrix(a, kind), x)
}

/// The whole matrix: for [`Kind::Spd`] the symmetric one from the lower triangle, a general
/// one as it is (borrowed, no copy).
fn full_matrix<T: Copy + Default>(a: &Matrix<T>, kind: Kind) -> std::borrow::Cow<'_, Matrix<T>> {
    match kind {
        Kind::Spd => std::borrow::Cow::Owned(a.symmetric_from_lower()),
        Kind::General => std::borrow::Cow::Borrowed(a),
    }
}

/// `x` if its estimated residual ‖I − M·X‖_F is below [`check::NOT_AN_INVERSE`], else
/// [`NumericalError::IllConditioned`].
fn checked<T: Copy + Into<f64> + Sync>(full: &Matrix<T>, x: Matrix<f32>) -> Result<Matrix<f32>> {
    let residual = check::residual_estimate(full, &x);
    if check::is_inverse(residual) {
        Ok(x)
    } else {
        Err(check::single_precision_failed(full, &x, residual))
    }
}

/// [`invert_with`] without the residual check: pivots and finiteness only (the sign
/// iteration's inner inverses, and the f64 entry, which measures the residual itself).
pub(crate) fn invert_unchecked(
    inv: &Inverter,
    a: &Matrix<f32>,
    kind: Kind,
    method: InverseMethod,
    options: InvertOptions,
) -> Result<Matrix<f32>> {
    check_input("A", a, kind)?;
    check_method(kind, method, options.storage)?;
    let n = a.rows();
    let method = method.resolve(kind, n);
    let block = options
        .block
        .unwrap_or_else(|| default_block(inv, kind, method, n))
        .max(1);
    if options.storage == Storage::Rfp {
        let arf = rfp_inverse_on_device(inv, n, &rfp_layout::from_lower(a)?)?;
        let x = rfp_layout::to_lower_of_order(n, &arf)?.symmetric_from_lower();
        check_finite(&x)?;
        return Ok(x);
    }
    let x = match (kind, method) {
        (Kind::Spd, InverseMethod::Cholesky) => {
            let d = DeviceSquare::upload_lower(inv, a)?;
            let y = DeviceSquare {
                buffer: inv.buffer("the triangular inverse", n * n)?,
                n,
            };
            let s = inv.buffer("a diagonal block", inv.tiled().config().nb.pow(2))?;
            inv.tiled().reset_status()?;
            spd::cholesky_inverse(inv, &d, &y, &s)?;
            inv.tiled().check_status()?;
            d.download()?.symmetric_from_lower()
        }
        (Kind::Spd, InverseMethod::Gje) => {
            let d = DeviceSquare::upload_lower(inv, a)?;
            let s = inv.buffer("a diagonal block", block * block)?;
            inv.tiled().reset_status()?;
            spd::gje_negative_inverse(inv, &d, &s, block)?;
            inv.tiled().check_status()?;
            d.download()?.symmetric_from_lower().map(|v| -v)
        }
        (_, InverseMethod::Gje) => {
            let tol = pivot_tolerance(a);
            let d = DeviceSquare::upload(inv, a)?;
            let w = gje::PivotWork::new(inv, n, block)?;
            inv.reset_status()?;
            gje::invert_in_place(inv, &d, &w, tol)?;
            inv.check_status(tol)?;
            let mut x = d.download()?;
            gje::unscramble_columns(&mut x, &w.piv.download_range(0, n)?);
            x
        }
        (_, InverseMethod::Lu) => {
            // An SPD matrix's LU needs no pivoting, and its pivots are the Cholesky pivots: the
            // first one not positive names the column where it is not positive definite.
            let spd = kind == Kind::Spd;
            let full = full_matrix(a, kind);
            let tol = if spd { 0.0 } else { pivot_tolerance(&full) };
            let d = DeviceSquare::upload(inv, &full)?;
            let mut w = gje::PivotWork::new(inv, n, block)?;
            w.pivoting = !spd;
            inv.reset_status()?;
            lu::factor_in_place(inv, &d, &w, tol)?;
            if spd {
                inv.check_status_positive()?;
            } else {
                inv.check_status(tol)?;
            }
            let l = DeviceSquare {
                buffer: inv.buffer("the L factor", n * n)?,
                n,
            };
            let xd = DeviceSquare {
                buffer: inv.buffer("the inverse", n * n)?,
                n,
            };
            lu::inverse_from_factors(inv, &d, &l, &xd)?;
            let mut x = xd.download()?;
            gje::unscramble_columns(&mut x, &w.piv.download_range(0, n)?);
            x
        }
        (Kind::General, InverseMethod::Cholesky) => unreachable!("refused above"),
        (_, InverseMethod::Auto) => unreachable!("resolved above"),
    };
    check_finite(&x)?;
    Ok(x)
}

/// The SPD inverse via Cholesky from LAPACK's RFP array (TRANSR = 'N', UPLO = 'L') of A's
/// lower triangle, as the RFP array of A⁻¹'s lower triangle, in place on the GPU (about half
/// the memory of full storage).
///
/// Errors: [`InputError::Length`] for an array whose length is not n(n+1)/2,
/// [`InputError::Empty`] for n = 0, non-finite entries, then as [`invert`].
pub fn invert_rfp(inv: &Inverter, n: usize, arf: &[f32]) -> Result<Vec<f32>> {
    if arf.len() != rfp_layout::len(n) {
        return Err(InputError::Length {
            what: "an RFP array".into(),
            n,
            expected: rfp_layout::len(n),
            actual: arf.len(),
        }
        .into());
    }
    if n == 0 {
        return Err(InputError::Empty {
            input: "A".into(),
            rows: 0,
            cols: 0,
        }
        .into());
    }
    if let Some(k) = arf.iter().position(|v| !v.is_finite()) {
        return Err(InputError::NonFinite {
            input: "A".into(),
            position: format!("RFP entry {k} (0-based)"),
            value: f64::from(arf[k]),
        }
        .into());
    }
    let x = rfp_inverse_on_device(inv, n, arf)?;
    if let Some(k) = x.iter().position(|v| !v.is_finite()) {
        // Name the entry of the matrix, not of the array.
        let (row, col) = (0..n)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .find(|&(i, j)| rfp_layout::index(n, i, j) == k)
            .unwrap_or((0, 0));
        return Err(NumericalError::NonFiniteResult { row, col }.into());
    }
    let full = rfp_layout::to_lower_of_order(n, arf)?.symmetric_from_lower();
    let xf = rfp_layout::to_lower_of_order(n, &x)?.symmetric_from_lower();
    checked(&full, xf)?;
    Ok(x)
}

/// Uploads the RFP array, inverts in place, reads it back (the status word checked).
fn rfp_inverse_on_device(inv: &Inverter, n: usize, arf: &[f32]) -> Result<Vec<f32>> {
    let mut a = inv.buffer(
        &format!("an order-{n} matrix in RFP storage"),
        rfp_layout::len(n),
    )?;
    a.upload(arf)?;
    let w = inv.buffer("the RFP inverse's workspace", rfp::workspace_len(inv, n))?;
    inv.tiled().reset_status()?;
    rfp::cholesky_inverse(inv, &a, n, &w)?;
    inv.tiled().check_status()?;
    a.download_range(0, rfp_layout::len(n))
}

/// What the command line needs: A⁻¹ of an f64 matrix (from a .npy file) computed in f32 on the
/// GPU, then refined in f64 by at most `refine_steps` Newton-Schulz steps ([`refine_inverse`];
/// 0: the f32 inverse widened, its residual estimated). For [`Kind::Spd`] only the lower
/// triangle of `a` is read. Entries beyond f32's range are refused as non-finite input.
///
/// Where the refinement's order-n f64 squares exceed one storage buffer, faer's f64 inverse on
/// the CPU is the result ([`Refined::fallback`] says so).
///
/// The residual decides: an f32 inverse with ‖I − M·X‖_F ≥ 1/2 (or a pivot that fails in f32)
/// is, with refinement asked for, replaced by faer's f64 inverse on the CPU, refined
/// ([`Refined::fallback`]); without refinement, or when the f64 inverse fails too, it is an
/// error ([`NumericalError::IllConditioned`], or the f32 pivot's error), never a result.
pub fn invert_f64(
    inv: &Inverter,
    a: &Matrix<f64>,
    kind: Kind,
    method: InverseMethod,
    refine_steps: usize,
) -> Result<Refined> {
    invert_f64_with(inv, a, kind, method, InvertOptions::default(), refine_steps)
}

/// [`invert_f64`] with explicit [`InvertOptions`] (e.g. RFP storage for the SPD inverse via
/// Cholesky).
pub fn invert_f64_with(
    inv: &Inverter,
    a: &Matrix<f64>,
    kind: Kind,
    method: InverseMethod,
    options: InvertOptions,
    refine_steps: usize,
) -> Result<Refined> {
    invert_f64_scaled(inv, a, 0, kind, method, options, refine_steps)
}

/// Whether [`invert_f64_with`] refines on the device (A up once in f64, nothing back before
/// X): a general matrix by Gauss-Jordan or LU (`method` resolved) in full storage, refined.
pub(crate) fn refines_on_device(
    kind: Kind,
    method: InverseMethod,
    storage: Storage,
    refine_steps: usize,
) -> bool {
    refine_steps > 0
        && kind == Kind::General
        && matches!(method, InverseMethod::Gje | InverseMethod::Lu)
        && storage == Storage::Full
}

/// [`invert_f64_with`] whose f32 inverse is of 2^-e·A, scaled on the device as A is narrowed
/// (exact; A itself within f32's range): only where [`refines_on_device`], else e = 0.
pub(crate) fn invert_f64_scaled(
    inv: &Inverter,
    a: &Matrix<f64>,
    e: i32,
    kind: Kind,
    method: InverseMethod,
    options: InvertOptions,
    refine_steps: usize,
) -> Result<Refined> {
    let mut phases = Phases::named("inverse in f64", std::time::Instant::now());
    check_input("A", a, kind)?;
    let method = method.resolve(kind, a.rows());
    let full = full_matrix(a, kind);
    phases.mark("A checked");
    if refine_steps > 0 {
        let n = a.rows();
        let squares = n.saturating_mul(n);
        let fits = crate::tiled::storage::check_fits_f64(
            "the float64 refinement's squares",
            squares,
            inv.max_bytes(),
        );
        if let Err(why) = fits {
            return cpu_past_buffers(&full, kind, why);
        }
    }
    let on_device = refines_on_device(kind, method, options.storage, refine_steps);
    // A scale the device does not take would leave X off by 2^e: never off its path.
    assert!(on_device || e == 0, "A scaled on the device off the device's path");
    let gpu_failure = if on_device {
        let s = crate::scaling::times_power_of_two(1.0, -e);
        match refined_on_device(inv, a, s, method, options, refine_steps, &mut phases)? {
            Ok(r) => return Ok(r),
            Err(failure) => failure,
        }
    } else {
        match invert_refined_on_host(inv, a, &full, kind, method, options, refine_steps)? {
            Ok(r) => return Ok(r),
            Err(failure) => failure,
        }
    };
    cpu_fallback(inv, &full, kind, refine_steps, gpu_failure)
}

/// Whether a refinement ending with `residuals` (the first before any step) after at most
/// `steps` steps converged: it did unless every step was taken and the last still halved the
/// residual (quadratic convergence had not reached rounding), or the last step was taken from
/// a residual r with r² ≤ ε, which reaches f64's rounding ([`LastStep::AT_ROUNDING`]).
fn refinement_converged(residuals: &[f64], steps: usize) -> bool {
    let (still_halving, at_rounding) = match residuals {
        [.., before, last] => (*last <= 0.5 * *before, *before * *before <= f64::EPSILON),
        _ => (false, false),
    };
    at_rounding || !(residuals.len() - 1 == steps && still_halving)
}

/// A refined inverse accepted: its last residual shows an inverse and the refinement
/// converged.
fn accepted(residuals: &[f64], steps: usize) -> bool {
    residuals
        .last()
        .is_some_and(|&last| check::is_inverse(last) && refinement_converged(residuals, steps))
}

/// The general inverse by Gauss-Jordan or LU refined in f64 without leaving the device: A up
/// once in f64, narrowed there times `s` (a power of two), inverted in f32, its columns put
/// back and widened there times `s` (so X ≈ A⁻¹), and
/// refined against A by Newton-Schulz products ([`DoubleWork::refine_inverse_in_place`]); only
/// the pivots and the residuals' sums come back before X. `Err` holds why the CPU's f64
/// inverse should take over.
fn refined_on_device(
    inv: &Inverter,
    a: &Matrix<f64>,
    s: f64,
    method: InverseMethod,
    options: InvertOptions,
    steps: usize,
    phases: &mut Phases,
) -> Result<std::result::Result<Refined, Fallback>> {
    let n = a.rows();
    let block = options
        .block
        .unwrap_or_else(|| default_block(inv, Kind::General, method, n))
        .max(1);
    let ctx = inv.context();
    let mut work = kernels::double::DoubleWork::new(inv, n)?;
    let inverse = widened::WidenedInverse::new(inv, n, method, block)?;
    phases.mark_finished(ctx, "room");
    let result = (|| {
        work.m.write(a)?;
        phases.mark_finished(ctx, "A up");
        if let Err(e) = inverse.invert(inv, &work.m, s, &work.x) {
            return failed_in_f32(e).map(Err);
        }
        phases.mark_finished(ctx, "f32 inverse");
        let (residuals, refined) =
            work.refine_inverse_in_place(inv, steps, LastStep::AT_ROUNDING)?;
        phases.mark_finished(ctx, "refinement");
        if !accepted(&residuals, steps) {
            return Ok(Err(Fallback::Residual(residuals[0])));
        }
        let x = work.x.download()?;
        phases.mark("X down");
        Ok(Ok(Refined {
            x,
            residuals,
            refined,
            fallback: None,
        }))
    })();
    inverse.recycle(inv);
    work.recycle(inv);
    result
}

/// The f32 GPU inverse of any method and storage, read back and refined in f64 on the GPU
/// (`steps` 0: only checked). `Err` holds why the CPU's f64 inverse should take over.
fn invert_refined_on_host(
    inv: &Inverter,
    a: &Matrix<f64>,
    full: &Matrix<f64>,
    kind: Kind,
    method: InverseMethod,
    options: InvertOptions,
    refine_steps: usize,
) -> Result<std::result::Result<Refined, Fallback>> {
    let gpu = invert_unchecked(inv, &a.to_f32(), kind, method, options);
    if refine_steps == 0 {
        let x = gpu?;
        let residual = check::residual_estimate(full, &x);
        if !check::is_inverse(residual) {
            return Err(check::single_precision_failed(full, &x, residual));
        }
        return Ok(Ok(Refined {
            x: x.to_f64(),
            residuals: vec![residual],
            refined: false,
            fallback: None,
        }));
    }
    match gpu {
        Ok(x) => {
            let r = refine_on_gpu(inv, full, &x.to_f64(), refine_steps)?;
            match accepted(&r.residuals, refine_steps) {
                true => Ok(Ok(r)),
                false => Ok(Err(Fallback::Residual(r.residuals[0]))),
            }
        }
        Err(e) => failed_in_f32(e).map(Err),
    }
}

/// The f32 inverse's pivot failures (and a non-finite result) as the fallback's reason; other
/// errors stand.
fn failed_in_f32(e: Error) -> Result<Fallback> {
    match e {
        Error::Numerical(
            e @ (NumericalError::NotPositiveDefinite { .. }
            | NumericalError::SingularMatrix { .. }
            | NumericalError::ZeroPivot { .. }
            | NumericalError::NonFiniteResult { .. }),
        ) => Ok(Fallback::Failed(e)),
        e => Err(e),
    }
}

/// Newton-Schulz in f64 on the GPU of the host inverse `x` of `full`, at most `steps` steps,
/// ending at f64's rounding ([`LastStep::AT_ROUNDING`], or a step that stops halving the
/// residual).
fn refine_on_gpu(inv: &Inverter, full: &Matrix<f64>, x: &Matrix<f64>, steps: usize) -> Result<Refined> {
    let mut work = kernels::double::DoubleWork::new(inv, full.rows())?;
    let r = work.refine_inverse(inv, full, x, steps);
    work.recycle(inv);
    r
}

/// faer's f64 inverse on the CPU, refined on the GPU, after the GPU's f32 inverse failed
/// (`gpu_failure`); an error where that fails too.
fn cpu_fallback(
    inv: &Inverter,
    full: &Matrix<f64>,
    kind: Kind,
    refine_steps: usize,
    gpu_failure: Fallback,
) -> Result<Refined> {
    let x = match check::cpu_inverse(full, kind) {
        Ok(x) => x,
        Err(e) => {
            return Err(match gpu_failure {
                // The GPU's pivot error names the column the f32 sweep found.
                Fallback::Failed(g) => g.into(),
                Fallback::Residual(_) => e,
            });
        }
    };
    let mut r = refine_on_gpu(inv, full, &x, refine_steps)?;
    let last = r.residuals.last().copied().unwrap_or(f64::NAN);
    if !check::is_inverse(last) {
        return Err(match gpu_failure {
            Fallback::Failed(g) => g.into(),
            Fallback::Residual(_) => NumericalError::IllConditioned {
                precision: "double",
                residual: last,
                after: "for the CPU's float64 inverse, the fallback after the GPU's float32 \
                        one failed"
                    .into(),
                condition: check::condition(full, &r.x),
                advice: "it is singular or nearly so",
            }
            .into(),
        });
    }
    r.fallback = Some(match gpu_failure {
        Fallback::Residual(residual) => {
            if check::is_inverse(residual) {
                format!(
                    "the refinement of the GPU's float32 inverse (‖I − M·X‖_F = {residual:.2e}) \
                     had not converged after {refine_steps} step(s)"
                )
            } else {
                format!("the GPU's float32 inverse had ‖I − M·X‖_F = {residual:.2e} (no inverse)")
            }
        }
        Fallback::Failed(e) => format!("the GPU's float32 inverse failed: {e}"),
    });
    Ok(r)
}

/// faer's f64 inverse on the CPU where the GPU cannot hold the refinement's f64 squares (`why`;
/// the f32 inverse alone would not be f64-accurate), its residual estimated; an error where
/// that shows no inverse.
fn cpu_past_buffers(full: &Matrix<f64>, kind: Kind, why: Error) -> Result<Refined> {
    let x = check::cpu_inverse(full, kind)?;
    let residual = check::residual_estimate(full, &x);
    if !check::is_inverse(residual) {
        return Err(NumericalError::IllConditioned {
            precision: "double",
            residual,
            after: "for the CPU's float64 inverse (the GPU cannot hold the float64 refinement)"
                .into(),
            condition: check::condition(full, &x),
            advice: "it is singular or nearly so",
        }
        .into());
    }
    Ok(Refined {
        x,
        residuals: vec![residual],
        refined: false,
        fallback: Some(format!("{why}: faer's float64 inverse on the CPU")),
    })
}

/// Why the f64 fallback ran: the f32 inverse's residual, or its pivot error.
enum Fallback {
    Residual(f64),
    Failed(NumericalError),
}

/// [`NumericalError::NonFiniteResult`] at the first entry of `x` that is not finite.
fn check_finite(x: &Matrix<f32>) -> Result<()> {
    if let Some(k) = x.as_slice().iter().position(|v| !v.is_finite()) {
        let n = x.cols();
        return Err(NumericalError::NonFiniteResult {
            row: k / n,
            col: k % n,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refinement converged unless it used every step and still halved the residual, but a
    /// last step from a residual r with r² ≤ ε reached rounding, whatever it halved.
    #[test]
    fn refinement_converges_at_rounding_or_once_it_stops_halving() {
        assert!(refinement_converged(&[7.5e-8, 1e-15, 5e-16], 2));
        assert!(refinement_converged(&[1e-3, 1e-6], 2));
        assert!(refinement_converged(&[1e-3, 1e-6, 0.9e-6], 2));
        assert!(!refinement_converged(&[1e-3, 1e-6, 1e-12], 2));
        assert!(!refinement_converged(&[1e-3, 1e-6], 1));
        assert!(refinement_converged(&[1e-3], 0));
    }

    /// The extent is max |A| and the Frobenius norm, below and above the chunk size, and a
    /// matrix check_input refuses gets check_input's error.
    #[test]
    fn general_input_extent_and_errors_match_check_input() {
        for n in [1usize, 7, 300] {
            let a = Matrix::from_fn(n, n, |i, j| ((i * 13 + j * 7) % 23) as f64 * 0.37 - 4.1);
            let extent = check_general_input("A", &a).unwrap();
            assert_eq!(extent.max_abs, a.max_abs());
            let norm = a.frobenius_norm();
            assert!((extent.norm - norm).abs() <= 1e-14 * norm, "n {n}");
            assert_eq!(extent.scaled(0.25).max_abs, a.max_abs() * 0.25);
            for bad in [f64::NAN, f64::INFINITY, -1e39] {
                let mut b = a.clone();
                b[(n - 1, n / 2)] = bad;
                let want = check_input("A", &b, Kind::General).unwrap_err().to_string();
                let got = check_general_input("A", &b).unwrap_err().to_string();
                assert_eq!(got, want);
                assert!(got.contains(&format!("row {}, column {}", n - 1, n / 2)), "{got}");
            }
        }
        let wide = Matrix::from_fn(2, 3, |i, j| (i + j) as f64);
        assert_eq!(
            check_general_input("A", &wide).unwrap_err().to_string(),
            check_input("A", &wide, Kind::General).unwrap_err().to_string()
        );
        let empty = Matrix::<f64>::zeros(0, 0);
        assert!(check_general_input("A", &empty).is_err());
    }
}
