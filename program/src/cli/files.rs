//! The file commands: `assemble`, `factor` and `solve`.
//!
//! Each reads and checks every input first (file, shape, emptiness, finiteness), checks that
//! the output path is writable and that m fits the GPU's textures, computes, and only then
//! writes the output through a temporary file renamed into place (`symraster::io`): a failure
//! at any step leaves no file behind and an existing output untouched.

use super::{FormatArg, MethodArg, options};
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use symraster::least_squares::{Criterion, Fallback, MAX_ITERATIONS_LIMIT};
use symraster::matrix::{
    Matrix, check_finite, check_finite_vec, check_non_empty, single_precision_error,
    to_single_precision_vec,
};
use symraster::{Error, Format, Method, SolveOptions, io};

/// Arguments of `symraster assemble`.
#[derive(Args)]
pub struct AssembleArgs {
    /// A, an m x n matrix (.npy or .mtx; float32 or float64).
    #[arg(long = "a", value_name = "A.npy")]
    pub a: PathBuf,
    /// d, the n diagonal entries of D² (a vector; .npy or .mtx).
    #[arg(long = "d", value_name = "d.npy")]
    pub d: PathBuf,
    /// Storage format on the GPU (full: m x m texture; packed: rectangular packed, about half).
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    pub format: FormatArg,
    /// How to compute (auto: the fastest this device runs).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Output C (float32, m x m, upper triangle zero); .npy or .mtx by extension.
    #[arg(short = 'o', long = "output", value_name = "C.npy")]
    pub output: PathBuf,
}

/// Arguments of `symraster factor`.
#[derive(Args)]
pub struct FactorArgs {
    /// C, a symmetric positive definite m x m matrix; only its lower triangle is read.
    #[arg(long = "c", value_name = "C.npy")]
    pub c: PathBuf,
    /// Storage format on the GPU.
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    pub format: FormatArg,
    /// How to compute (auto: the fastest this device runs).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Write the factor as LAPACK's RFP array (TRANSR='N', UPLO='L'): 1-D, m(m+1)/2 float32.
    #[arg(long)]
    pub rfp: bool,
    /// Output L (float32, m x m, upper triangle zero); .npy or .mtx by extension.
    #[arg(short = 'o', long = "output", value_name = "L.npy")]
    pub output: PathBuf,
}

/// Arguments of `symraster solve`.
#[derive(Args)]
pub struct SolveArgs {
    /// A, an m x n matrix (.npy or .mtx; float32 or float64).
    #[arg(long = "a", value_name = "A.npy")]
    pub a: PathBuf,
    /// d, the n diagonal entries of D² (the weights).
    #[arg(long = "d", value_name = "d.npy")]
    pub d: PathBuf,
    /// b, the n observations.
    #[arg(long = "b", value_name = "b.npy")]
    pub b: PathBuf,
    /// Storage format of the factor on the GPU.
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    pub format: FormatArg,
    /// How to compute (auto: the fastest this device runs).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// The refinement's stopping test.
    #[command(flatten)]
    pub refinement: RefinementArgs,
    /// Output x (float64, length m); .npy or .mtx by extension.
    #[arg(short = 'o', long = "output", value_name = "x.npy")]
    pub output: PathBuf,
}

/// The refinement flags `solve` and `spd-solve` share.
#[derive(Clone, Copy, Debug, Args)]
pub struct RefinementArgs {
    /// The stopping test: `backward` (normwise backward error, as LAPACK's dsposv; does not
    /// depend on the scale of the data) or `paper` (‖rᵏ‖₂/‖xᵏ⁺¹‖₂, the paper's rule).
    #[arg(long, value_enum, default_value_t = CriterionArg::Backward)]
    pub criterion: CriterionArg,
    /// The stopping test's tolerance (default: √m·2⁻⁵³ for backward, 1e-8 for paper).
    #[arg(long, value_parser = positive_finite)]
    pub tol: Option<f64>,
    /// At most this many refinement iterations (1 to 10000).
    #[arg(long = "max-iter", default_value_t = 100, value_parser = iteration_limit)]
    pub max_iter: usize,
}

impl RefinementArgs {
    /// The solve's options: these flags on the GPU options.
    fn options(self, gpu: symraster::Options) -> SolveOptions {
        let options = SolveOptions::new()
            .gpu(gpu)
            .criterion(self.criterion.into())
            .max_iterations(self.max_iter);
        match self.tol {
            Some(tol) => options.tolerance(tol),
            None => options,
        }
    }
}

/// The arguments of `spd-solve`.
#[derive(Debug, Args)]
pub struct SpdSolveArgs {
    /// C, a symmetric positive definite m x m matrix (.npy or .mtx; float32 or float64; only
    /// its lower triangle is read).
    #[arg(long = "c", value_name = "C.npy")]
    pub c: PathBuf,
    /// b, the m right-hand-side entries.
    #[arg(long = "b", value_name = "b.npy")]
    pub b: PathBuf,
    /// Storage format of the factor on the GPU.
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    pub format: FormatArg,
    /// How to compute (auto: the fastest this device runs).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// The refinement's stopping test (as for `solve`).
    #[command(flatten)]
    pub refinement: RefinementArgs,
    /// Output x (float64, length m); .npy or .mtx by extension.
    #[arg(short = 'o', long = "output", value_name = "x.npy")]
    pub output: PathBuf,
}

/// The stopping test on the command line ([`Criterion`]).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CriterionArg {
    /// Normwise backward error ‖r‖∞ / (‖C‖∞·‖x‖∞ + ‖g‖∞), as LAPACK's dsposv.
    Backward,
    /// The paper's ‖rᵏ‖₂/‖xᵏ⁺¹‖₂ (scale-dependent; used for Tables 1-2).
    Paper,
}

impl From<CriterionArg> for Criterion {
    fn from(c: CriterionArg) -> Self {
        match c {
            CriterionArg::Backward => Criterion::BackwardError,
            CriterionArg::Paper => Criterion::Paper,
        }
    }
}

/// A refinement limit within the library's cap ([`MAX_ITERATIONS_LIMIT`]).
fn iteration_limit(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(k) if (1..=MAX_ITERATIONS_LIMIT).contains(&k) => Ok(k),
        Ok(0) => Err("at least one refinement iteration is needed".into()),
        Ok(_) => Err(format!(
            "{s} is above the limit of {MAX_ITERATIONS_LIMIT} refinement iterations (a run that \
             has not converged by then will not: raise --tol or use --criterion backward)"
        )),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

fn positive_finite(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number")),
    }
}

/// `assemble`: the lower triangle of A·diag(d)·Aᵀ on the GPU (Algorithm 3), written as float32.
pub fn assemble(args: AssembleArgs) -> Result<()> {
    let a_name = role("A", &args.a);
    let d_name = role("d", &args.d);
    // A straight into float32: the GPU computes in it, and no float64 copy is ever held.
    let a = io::read_matrix_f32(&args.a, "A", false)?;
    let (m, n) = a.matrix.shape();
    // d's length is checked before d is allocated (an empty A is named first, below).
    let d = io::read_vector_checked(&args.d, "d", &|len| {
        if m == 0 || n == 0 || len == n {
            return Ok(());
        }
        Err(Error::shape(format!(
            "{a_name} is {m}x{n}, so d needs {n} entries (one per column of A), but {d_name} has \
             {len}"
        )))
    })?;
    check_non_empty(&a_name, &a.matrix)?;
    let a = fits_single_precision(&a_name, a)?;
    let d = to_single_precision_vec(&d_name, &d)?;
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let opts = options(args.format, args.method);
    let method = opts.method_on(&gpu, m, n)?;
    let c = gpu.assemble(&a, &d, opts)?;
    // The input is not needed while the output is written.
    drop(a);
    io::write_matrix(&args.output, &c)?;
    say!(
        "C = A·diag(d)·Aᵀ: {m}x{m} lower triangle (float32, {} format, {method} method on {}) \
         written to {}",
        opts.format,
        gpu.info().renderer,
        args.output.display()
    );
    Ok(())
}

/// `factor`: the Cholesky factor of C on the GPU (Algorithm 5), written as float32 (m x m, or
/// LAPACK's RFP array with `--rfp`).
pub fn factor(args: FactorArgs) -> Result<()> {
    let c_name = role("C", &args.c);
    // Only the lower triangle is read, straight into float32: whatever the upper one holds is
    // ignored, and no float64 copy is ever held. A C that is not square is refused before it
    // is allocated.
    let c = io::read_matrix_f32_checked(&args.c, "C", true, &square(&c_name))?;
    check_non_empty(&c_name, &c.matrix)?;
    let m = c.matrix.rows();
    // A C beyond float32's range, or so small that its diagonal rounds to zero or subnormals
    // there, is read again in float64 and scaled by a power of four before rounding
    // (`Gpu::cholesky_f64`); any other C is factored from the float32 copy (which
    // `Gpu::cholesky` scales itself).
    let tiny = (0..m).all(|j| c.matrix[(j, j)].abs() < f32::MIN_POSITIVE);
    let c = if c.first_unfit.is_some() || tiny {
        drop(c);
        Err(io::read_matrix_checked(&args.c, "C", &square(&c_name))?)
    } else {
        Ok(c.matrix)
    };
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let opts = options(args.format, args.method);
    let method = opts.method_on(&gpu, m, 0)?;
    let l = match &c {
        Ok(single) => gpu.cholesky(single, opts)?,
        Err(double) => {
            // Named by its file here; the library names it "C".
            check_finite(&c_name, &double.lower_triangle())?;
            gpu.cholesky(double, opts)?
        }
    };
    // The input is not needed while the output is written.
    drop(c);
    if args.rfp {
        io::write_vector(&args.output, &l.to_rfp()?)?;
    } else {
        io::write_matrix(&args.output, &l.l()?)?;
    }
    say!(
        "L with C = L·Lᵀ: {m}x{m}{} (float32, {} format, {method} method on {}) written to {}",
        if args.rfp { " as an RFP array" } else { "" },
        opts.format,
        gpu.info().renderer,
        args.output.display()
    );
    Ok(())
}

/// `solve`: weighted least squares with refinement; x written as float64.
pub fn solve(args: SolveArgs) -> Result<()> {
    let a_name = role("A", &args.a);
    let d_name = role("d", &args.d);
    let b_name = role("b", &args.b);
    let a = io::read_matrix(&args.a, "A")?;
    let (m, n) = a.shape();
    // d's and b's lengths are checked before they are allocated (an empty A is named first).
    let mismatch = |d_len: usize, b_len: Option<usize>| {
        let b_has = b_len.map_or(String::new(), |l| format!(" and {b_name} has {l}"));
        Err(Error::shape(format!(
            "{a_name} is {m}x{n}, so d and b need {n} entries each (one per column of A), but \
             {d_name} has {d_len}{b_has}"
        )))
    };
    let empty = m == 0 || n == 0;
    let d = io::read_vector_checked(&args.d, "d", &|len| {
        if empty || len == n {
            return Ok(());
        }
        mismatch(len, None)
    })?;
    let b = io::read_vector_checked(&args.b, "b", &|len| {
        if empty || len == n {
            return Ok(());
        }
        mismatch(d.len(), Some(len))
    })?;
    check_non_empty(&a_name, &a)?;
    check_finite(&a_name, &a)?;
    check_finite_vec(&d_name, &d)?;
    check_finite_vec(&b_name, &b)?;
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let gpu_options = options(args.format, args.method);
    let method = gpu_options.method_on(&gpu, m, n)?;
    let solve_options = args.refinement.options(gpu_options);
    let outcome = gpu.least_squares(&a, &d, &b, solve_options)?;
    write_solution(&outcome, &args.output, gpu_options.format, method, &gpu)
}

/// `spd-solve`: C·x = b with mixed-precision refinement; x written as float64.
pub fn spd_solve(args: SpdSolveArgs) -> Result<()> {
    let c_name = role("C", &args.c);
    let b_name = role("b", &args.b);
    let c = io::read_matrix_checked(&args.c, "C", &square(&c_name))?;
    let m = c.rows();
    // b's length is checked before b is allocated (an empty C is named first).
    let b = io::read_vector_checked(&args.b, "b", &|len| {
        if m == 0 || len == m {
            return Ok(());
        }
        Err(Error::shape(format!(
            "{c_name} is {m}x{m}, so b needs {m} entries, but {b_name} has {len}"
        )))
    })?;
    check_non_empty(&c_name, &c)?;
    check_finite(&c_name, &c.lower_triangle())?;
    check_finite_vec(&b_name, &b)?;
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let gpu_options = options(args.format, args.method);
    let method = gpu_options.method_on(&gpu, m, 0)?;
    let solve_options = args.refinement.options(gpu_options);
    let outcome = gpu.spd_solve(&c, &b, solve_options)?;
    write_solution(&outcome, &args.output, gpu_options.format, method, &gpu)
}

/// A refined solve's x written as float64 and reported, or, where refinement did not meet
/// its test, an error naming the test's last value and nothing written.
fn write_solution(
    outcome: &symraster::Solution,
    output: &Path,
    format: Format,
    method: Method,
    gpu: &symraster::Gpu,
) -> Result<()> {
    // The stopping test's last value (η, or the paper's ‖rᵏ‖₂/‖xᵏ⁺¹‖₂), the one --tol bounds.
    let residual = outcome.criteria.last().copied().unwrap_or(f64::NAN);
    if !outcome.converged {
        bail!(
            "refinement did not meet the {} test at tolerance {:e} in {} iterations (final \
             value {residual:.3e}, backward error {:.3e}); nothing written: raise --max-iter or \
             --tol",
            outcome.criterion.name(),
            outcome.tolerance,
            outcome.iterations,
            outcome.backward_error
        );
    }
    io::write_vector(output, &outcome.x)?;
    print_solution(outcome, residual);
    say!(
        "x: {} values (float64, {format} format, {method} method on {}) written to {}",
        outcome.x.len(),
        gpu.info().renderer,
        output.display()
    );
    Ok(())
}

/// What `solve` reports of a solution: iterations, the stopping test, the achieved backward
/// error, the forward-error estimate and whether the f64 CPU solve took over.
fn print_solution(outcome: &symraster::Solution, residual: f64) {
    say!("iterations: {}", outcome.iterations);
    say!(
        "final residual: {residual:.3e} ({} test, tolerance {:.3e})",
        outcome.criterion.name(),
        outcome.tolerance
    );
    say!("backward error: {:.3e}", outcome.backward_error);
    say!(
        "forward error estimate: {:.3e} (condition estimate {:.3e})",
        outcome.forward_error_estimate,
        outcome.condition
    );
    match &outcome.fallback {
        None => say!("f64 CPU fallback: no"),
        Some(Fallback::Stagnated { iteration }) => {
            say!("f64 CPU fallback: yes (the corrections stopped shrinking at step {iteration})")
        }
        Some(Fallback::IterationLimit) => {
            say!("f64 CPU fallback: yes (the iteration limit was reached)")
        }
        Some(Fallback::SingleFactorFailed { column }) => say!(
            "f64 CPU fallback: yes (the GPU's float32 Cholesky failed at column {column}; \
             factored in float64 on the CPU)"
        ),
    }
}

/// The matrix, if every value read fits float32; else the first that does not, named as what
/// it is (NaN or an infinity, or a finite value beyond float32's range).
fn fits_single_precision(name: &str, read: io::SingleMatrix) -> Result<Matrix<f32>> {
    if let Some((at, value)) = read.first_unfit {
        let cols = read.matrix.cols();
        let position = || format!("row {}, column {} (0-based)", at / cols, at % cols);
        if let Some(e) = single_precision_error(name, &position, value) {
            return Err(e.into());
        }
    }
    Ok(read.matrix)
}

/// The check of a matrix that must be square, run on the shape its file declares before the
/// matrix is allocated ([`io::read_matrix_checked`]): a few bytes of a coordinate .mtx file can
/// declare a 1 x 150,000,000 matrix. An empty shape passes (it is named as empty later).
pub(super) fn square(name: &str) -> impl Fn(usize, usize) -> symraster::Result<()> + '_ {
    move |rows, cols| {
        if rows == cols || rows == 0 || cols == 0 {
            return Ok(());
        }
        Err(Error::shape(format!(
            "{name} must be square, but is {rows}x{cols}"
        )))
    }
}

/// "A (path)": how an input is named in messages.
fn role(name: &str, path: &Path) -> String {
    format!("{name} ({})", path.display())
}
