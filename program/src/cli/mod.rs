//! The command line: the subcommands and the options they share. Each subcommand is a
//! function over the library; `tables` is `reproduce --only tables` under its own name.

mod batched;
mod demo;
mod files;
mod info;
mod invert;
pub mod output;
pub mod print;
pub mod reproduce;
pub mod view;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use symraster::{Format, Gpu, Method, Options};

/// Opens the GPU with the device and tuning the `SYMRASTER_*` variables name
/// (`SYMRASTER_EGL_DEVICE`, the tuning values of `symraster::tuning`), each checked by the
/// library's one rule.
pub fn open_gpu() -> symraster::Result<Gpu> {
    Gpu::builder().vars(std::env::vars())?.build()
}

#[derive(Parser)]
#[command(
    name = "symraster",
    version,
    about = "Dense symmetric linear algebra by drawing triangles: A·D²·Aᵀ and its Cholesky \
             factor on the GPU through OpenGL fragment shaders (Jung & O'Leary 2008)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the GL device, version and limits (and so the largest m per format), and the
    /// methods this device runs.
    Info,
    /// Assemble and factor a random matrix on the GPU and compare with the CPU reference.
    Demo(demo::DemoArgs),
    /// Form the lower triangle of C = A·diag(d)·Aᵀ on the GPU (Algorithm 3); writes float32.
    ///
    /// Writes C as float32: an m x m matrix with the upper triangle zero. d holds the diagonal
    /// of D², as in the paper.
    #[command(after_help = FILES_HELP)]
    Assemble(files::AssembleArgs),
    /// Cholesky factor L (C = L·Lᵀ) on the GPU (Algorithm 5); writes float32.
    ///
    /// Reads only the lower triangle of C. Writes L as float32: an m x m lower-triangular
    /// matrix, or with --rfp LAPACK's RFP array (1-D). A matrix that is not positive definite
    /// is named by its first failing column. C is scaled by a power of four (exact) before it
    /// is rounded to float32, so tiny or huge SPD matrices factor wherever L fits in float32.
    #[command(after_help = FILES_HELP)]
    Factor(files::FactorArgs),
    /// Weighted least squares min ‖D(b − Aᵀx)‖ (paper eq. 2), refined; writes float64.
    ///
    /// Solves A·D²·Aᵀ·x = A·D²·b through the GPU's Cholesky factor, refined in f64. d holds
    /// the diagonal of D². Writes x as float64 (length m); prints the iterations, the achieved
    /// backward error, a forward-error estimate and whether the f64 CPU fallback ran (on
    /// stagnation, at the iteration limit, or when the float32 factor fails).
    #[command(after_help = FILES_HELP)]
    Solve(files::SolveArgs),
    /// C·x = b for a symmetric positive definite C, mixed precision (as LAPACK's dsposv);
    /// writes float64.
    ///
    /// Reads only the lower triangle of C. Factors C in float32 on the GPU and refines x in
    /// float64 (Algorithm 1) with the same stopping tests, fallback and report as `solve`.
    #[command(name = "spd-solve", after_help = FILES_HELP)]
    SpdSolve(files::SpdSolveArgs),
    /// Many small problems of one order at once (.npy arrays with a leading batch axis):
    /// weighted least squares (fused), the SPD solve, Cholesky or assembly, one GPU work group
    /// per problem, with LAPACK's INFO per problem.
    ///
    /// A problem that is not positive definite does not fail the run: its output is NaN, its
    /// INFO (--info, int32) says at which column, and the others are right.
    #[command(after_help = FILES_HELP)]
    Batched(batched::BatchedArgs),
    /// Invert a square matrix on the GPU (Gauss-Jordan, or via Cholesky or LU), refined in
    /// f64; writes float64.
    ///
    /// A singular matrix is named by its pivot column; --kind spd reads only the lower
    /// triangle, and a matrix that is not positive definite is named by its failing column.
    /// Symmetric indefinite matrices take --kind general (Gauss-Jordan with pivoting).
    #[command(after_help = FILES_HELP)]
    Invert(invert::InvertArgs),
    /// The matrix sign function sign(A) by the scaled Newton iteration on GPU inverses;
    /// writes float64. A with eigenvalues on or near the imaginary axis is an error.
    #[command(after_help = FILES_HELP)]
    Sign(invert::SignArgs),
    /// Solve the continuous Lyapunov equation A·X + X·Aᵀ = Q for stable A (scipy's
    /// solve_continuous_lyapunov convention) through the sign function; writes float64.
    #[command(after_help = FILES_HELP)]
    Lyap(invert::LyapArgs),
    /// Regenerate the paper's Figs 8-9 and Tables 1-2 (CSV, SVG, PNG, Markdown) into a folder.
    Reproduce(reproduce::ReproduceArgs),
    /// Regenerate the paper's Tables 1 and 2 (weighted least squares with refinement, 5.3):
    /// the same as `reproduce --only tables`.
    Tables(reproduce::TablesArgs),
    /// Watch assembly or Cholesky pass by pass: every texture as a heatmap, the pass's
    /// triangles outlined (a window; or PNG frames with --record DIR, no display needed).
    View(view::ViewArgs),
}

/// What every file command says about files.
const FILES_HELP: &str = "Files: .npy (float32 or float64, C or Fortran order) or Matrix Market .mtx (array or coordinate; real, integer or pattern; general, symmetric or skew-symmetric; read as dense); vectors may be 1-D or a single row or column. The output's format follows its extension. Outputs are written only after the computation succeeds, through a temporary file renamed into place: a failed run leaves no file and does not touch an existing one. Exit status 0 on success, 1 with one line on stderr on error.";

/// Runs one subcommand.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Info => info::info(),
        Command::Demo(args) => demo::demo(args),
        Command::Assemble(args) => files::assemble(args),
        Command::Factor(args) => files::factor(args),
        Command::Solve(args) => files::solve(args),
        Command::SpdSolve(args) => files::spd_solve(args),
        Command::Batched(args) => batched::batched(args),
        Command::Invert(args) => invert::invert(args),
        Command::Sign(args) => invert::sign(args),
        Command::Lyap(args) => invert::lyap(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Tables(args) => reproduce::reproduce(args.into()),
        Command::View(args) => view::run(args),
    }
}

/// Storage format on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    Full,
    Packed,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Full => Format::Full,
            FormatArg::Packed => Format::Packed,
        }
    }
}

/// Method on the command line ([`symraster::Method`]); `auto` takes the fastest the device
/// runs, a method it cannot run is the library's error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// The paper's rasterized passes (Algorithms 3 and 5).
    Faithful,
    /// Fragment passes over float4 blocks with rank-K updates (OpenGL 3.3).
    Blocked,
    /// Compute shaders over tiles (OpenGL 4.3).
    Tiled,
    /// The fastest method this device runs.
    #[default]
    Auto,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Faithful => Method::Faithful,
            MethodArg::Blocked => Method::Blocked,
            MethodArg::Tiled => Method::Tiled,
            MethodArg::Auto => Method::Auto,
        }
    }
}

/// The library's options for a format and method given on the command line.
pub fn options(format: FormatArg, method: MethodArg) -> Options {
    Options::new(format.into()).method(method.into())
}
