//! The file commands: `assemble`, `factor` and `solve`.
//!
//! Each reads and checks every input first (file, shape, emptiness, finiteness), checks that
//! the output path is writable and that m fits the GPU's textures, computes, and only then
//! writes the output through a temporary file renamed into place (`symraster::io`): a failure
//! at any step leaves no file behind and an existing output untouched.

pub mod reproduce;

use crate::FormatArg;
use anyhow::{Result, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use symraster::InputError;
use symraster::{Error, Format, Gpu, Layout, Matrix, io};

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
    /// Stop refining once the relative residual is below this.
    #[arg(long, default_value = "1e-8", value_parser = positive_finite)]
    pub tol: f64,
    /// At most this many refinement iterations.
    #[arg(long = "max-iter", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iter: u32,
    /// Output x (float64, length m); .npy or .mtx by extension.
    #[arg(short = 'o', long = "output", value_name = "x.npy")]
    pub output: PathBuf,
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
    let a = io::read_matrix(&args.a, "A")?;
    let d = io::read_vector(&args.d, "d")?;
    non_empty(&a_name, &a)?;
    let (m, n) = a.shape();
    if d.len() != n {
        return Err(Error::shape(format!(
            "{a_name} is {m}x{n}, so d needs {n} entries (one per column of A), but {d_name} has {}",
            d.len()
        ))
        .into());
    }
    let a = single_precision(&a_name, &a)?;
    let d = single_precision_vector(&d_name, &d)?;
    io::check_output_path(&args.output)?;
    let gpu = Gpu::new()?;
    let format = Format::from(args.format);
    fits(&gpu, m, format)?;
    let c = gpu.assemble(&a, &d, format)?;
    io::write_matrix(&args.output, &c)?;
    println!(
        "C = A·diag(d)·Aᵀ: {m}x{m} lower triangle (float32, {format} format on {}) written to {}",
        gpu.info().renderer,
        args.output.display()
    );
    Ok(())
}

/// `factor`: the Cholesky factor of C on the GPU (Algorithm 5), written as float32 (m x m, or
/// LAPACK's RFP array with `--rfp`).
pub fn factor(args: FactorArgs) -> Result<()> {
    let c_name = role("C", &args.c);
    let c = io::read_matrix(&args.c, "C")?;
    non_empty(&c_name, &c)?;
    let (m, n) = c.shape();
    if m != n {
        return Err(Error::shape(format!("{c_name} must be square, but is {m}x{n}")).into());
    }
    // Only the lower triangle is read: whatever the upper one holds is ignored.
    let c = single_precision(&c_name, &c.lower_triangle())?;
    io::check_output_path(&args.output)?;
    let gpu = Gpu::new()?;
    let format = Format::from(args.format);
    fits(&gpu, m, format)?;
    let l = gpu.cholesky(&c, format)?;
    if args.rfp {
        io::write_vector(&args.output, &l.to_rfp())?;
    } else {
        io::write_matrix(&args.output, l.l())?;
    }
    println!(
        "L with C = L·Lᵀ: {m}x{m}{} (float32, {format} format on {}) written to {}",
        if args.rfp { " as an RFP array" } else { "" },
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
    let d = io::read_vector(&args.d, "d")?;
    let b = io::read_vector(&args.b, "b")?;
    non_empty(&a_name, &a)?;
    let (m, n) = a.shape();
    if d.len() != n || b.len() != n {
        return Err(Error::shape(format!(
            "{a_name} is {m}x{n}, so d and b need {n} entries each (one per column of A), but \
             {d_name} has {} and {b_name} has {}",
            d.len(),
            b.len()
        ))
        .into());
    }
    finite(&a_name, &a)?;
    finite_vector(&d_name, &d)?;
    finite_vector(&b_name, &b)?;
    io::check_output_path(&args.output)?;
    let gpu = Gpu::new()?;
    let format = Format::from(args.format);
    fits(&gpu, m, format)?;
    let options = symraster::SolveOptions::new()
        .format(format)
        .epsilon(args.tol)
        .max_iterations(args.max_iter as usize);
    let outcome = gpu.solve_weighted_least_squares(&a, &d, &b, &options)?;
    // The paper's stopping quantity ‖rᵏ‖₂/‖xᵏ⁺¹‖₂, the one --tol bounds.
    let residual = outcome.criteria.last().copied().unwrap_or(f64::NAN);
    if !outcome.converged {
        bail!(
            "refinement did not reach --tol {:e} in {} iterations (final residual {residual:.3e}); \
             nothing written: raise --max-iter or --tol",
            args.tol,
            outcome.iterations
        );
    }
    io::write_vector(&args.output, &outcome.x)?;
    println!("iterations: {}", outcome.iterations);
    println!("final residual: {residual:.3e}");
    println!(
        "x: {m} values (float64, {format} format on {}) written to {}",
        gpu.info().renderer,
        args.output.display()
    );
    Ok(())
}

/// "A (path)": how an input is named in messages.
fn role(name: &str, path: &Path) -> String {
    format!("{name} ({})", path.display())
}

fn non_empty(name: &str, m: &Matrix<f64>) -> Result<(), Error> {
    if m.rows() == 0 || m.cols() == 0 {
        return Err(Error::from(InputError::Empty {
            input: name.into(),
            rows: m.rows(),
            cols: m.cols(),
        }));
    }
    Ok(())
}

/// The first NaN or infinity, named by input and (row, column).
fn finite(name: &str, m: &Matrix<f64>) -> Result<(), Error> {
    match m.as_slice().iter().position(|x| !x.is_finite()) {
        Some(p) => Err(Error::from(InputError::NonFinite {
            input: name.into(),
            position: format!("row {}, column {} (0-based)", p / m.cols(), p % m.cols()),
            value: m.as_slice()[p],
        })),
        None => Ok(()),
    }
}

fn finite_vector(name: &str, v: &[f64]) -> Result<(), Error> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(p) => Err(Error::from(InputError::NonFinite {
            input: name.into(),
            position: format!("index {p} (0-based)"),
            value: v[p],
        })),
        None => Ok(()),
    }
}

/// The matrix rounded to f32 for the GPU, after checking it is finite and within f32's range.
fn single_precision(name: &str, m: &Matrix<f64>) -> Result<Matrix<f32>> {
    finite(name, m)?;
    if let Some(p) = m.as_slice().iter().position(|x| x.abs() > f32::MAX as f64) {
        bail!(
            "input {name} holds {:e} at row {}, column {} (0-based), beyond single precision's \
             range (±{:e}); the GPU computes in float32",
            m.as_slice()[p],
            p / m.cols(),
            p % m.cols(),
            f32::MAX
        );
    }
    Ok(m.to_f32())
}

fn single_precision_vector(name: &str, v: &[f64]) -> Result<Vec<f32>> {
    finite_vector(name, v)?;
    if let Some(p) = v.iter().position(|x| x.abs() > f32::MAX as f64) {
        bail!(
            "input {name} holds {:e} at index {p} (0-based), beyond single precision's range \
             (±{:e}); the GPU computes in float32",
            v[p],
            f32::MAX
        );
    }
    Ok(v.iter().map(|&x| x as f32).collect())
}

/// [`InputError::TooLarge`] when an m x m matrix in `format` exceeds the GPU's textures.
fn fits(gpu: &Gpu, m: usize, format: Format) -> Result<(), Error> {
    Layout::checked(m, format, gpu.info().max_texture_size).map(|_| ())
}

/// The CPU's model name (Linux's /proc/cpuinfo), or the architecture where that is not known.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
