//! The `symraster` command line.

mod cli;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::time::Instant;
use symraster::{Format, Gpu, problems as testing, reference, relative_error};

mod viewer;

#[derive(Parser)]
#[command(
    name = "symraster",
    version,
    about = "Dense symmetric linear algebra by drawing triangles: A·D²·Aᵀ and its Cholesky \
             factor on the GPU through OpenGL fragment shaders (Jung & O'Leary 2008)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the GL device, version and limits (and so the largest m per format).
    Info,
    /// Assemble and factor a random matrix on the GPU and compare with the CPU reference.
    Demo {
        /// Order m of C (A is m x 2m).
        #[arg(short, default_value_t = 257)]
        m: usize,
        /// Storage format.
        #[arg(long, value_enum, default_value_t = FormatArg::Full)]
        format: FormatArg,
        /// Seed of the random problem.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Form the lower triangle of C = A·diag(d)·Aᵀ on the GPU (Algorithm 3); writes float32.
    ///
    /// Writes C as float32: an m x m matrix with the upper triangle zero. d holds the diagonal
    /// of D², as in the paper.
    #[command(after_help = FILES_HELP)]
    Assemble(cli::AssembleArgs),
    /// Cholesky factor L (C = L·Lᵀ) on the GPU (Algorithm 5); writes float32.
    ///
    /// Reads only the lower triangle of C. Writes L as float32: an m x m lower-triangular matrix, or with --rfp LAPACK's RFP array
    /// (1-D). A matrix that is not positive definite is named by its first failing column.
    #[command(after_help = FILES_HELP)]
    Factor(cli::FactorArgs),
    /// Weighted least squares min ‖D(b − Aᵀx)‖ (paper eq. 2), refined; writes float64.
    ///
    /// Solves A·D²·Aᵀ·x = A·D²·b through the GPU's Cholesky factor, refined in f64. d holds
    /// the diagonal of D². Writes x as float64 (length m); prints the iterations and the
    /// final residual.
    #[command(after_help = FILES_HELP)]
    Solve(cli::SolveArgs),
    /// Regenerate the paper's Figs 8-9 and Tables 1-2 (CSV, SVG, PNG, Markdown) into a folder.
    Reproduce(cli::reproduce::ReproduceArgs),
    /// Regenerate the paper's Tables 1 and 2 (weighted least squares with refinement, 5.3).
    Tables {
        /// `quick` (64,128,256,512), `paper` (512,1024,1536,2048) or a list like `64,200`.
        #[arg(long, default_value = "quick")]
        sizes: String,
        /// Folder for table1.{md,csv} and table2.{md,csv}.
        #[arg(long, default_value = "figures")]
        out: std::path::PathBuf,
    },
    /// Watch assembly or Cholesky pass by pass: every texture as a heatmap, the pass's
    /// triangles outlined (a window; or PNG frames with --record DIR, no display needed).
    View(viewer::ViewArgs),
}

/// What every file command says about files.
const FILES_HELP: &str = "Files: .npy (float32 or float64, C or Fortran order) or Matrix Market .mtx (array real general or symmetric); vectors may be 1-D or a single row or column. The output's format follows its extension. Outputs are written only after the computation succeeds, through a temporary file renamed into place: a failed run leaves no file and does not touch an existing one. Exit status 0 on success, 1 with one line on stderr on error.";

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
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

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Info => info(),
        Command::Demo { m, format, seed } => demo(m, format.into(), seed),
        Command::Assemble(args) => cli::assemble(args),
        Command::Factor(args) => cli::factor(args),
        Command::Solve(args) => cli::solve(args),
        Command::Reproduce(args) => cli::reproduce::reproduce(args),
        Command::Tables { sizes, out } => tables(&sizes, &out),
        Command::View(args) => viewer::run(args),
    }
}

fn info() -> Result<()> {
    let gpu = Gpu::new()?;
    let i = gpu.info();
    let (full, packed) = gpu.max_order();
    println!("GL_VENDOR            {}", i.vendor);
    println!("GL_RENDERER          {}", i.renderer);
    println!("GL_VERSION           {}", i.version);
    println!(
        "GL_MAX_TEXTURE_SIZE  {}{}",
        i.max_texture_size,
        if std::env::var_os(symraster::gl::MAX_TEXTURE_SIZE_ENV).is_some() {
            " (lowered by SYMRASTER_MAX_TEXTURE_SIZE)"
        } else {
            ""
        }
    );
    println!(
        "EGL device           {} of {}{}",
        i.egl_device_index,
        i.egl_device_count,
        if i.software { " (software)" } else { "" }
    );
    println!("largest m            {full} (full), {packed} (packed)");
    println!("CPU                  {}", cli::cpu_model());
    println!(
        "CPU threads          {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}

fn demo(m: usize, format: Format, seed: u64) -> Result<()> {
    let gpu = Gpu::new()?;
    println!("device: {} ({})", gpu.info().renderer, gpu.info().version);
    let n = 2 * m;
    let mut rng = testing::rng(seed);
    let a = testing::uniform_matrix(&mut rng, m, n);
    let d = testing::uniform_vector(&mut rng, n);

    let t = Instant::now();
    let c = gpu
        .assemble(&a, &d, format)
        .context("assembly on the GPU")?;
    let t_assemble = t.elapsed();
    let c_ref = reference::assemble(
        &a.to_f64(),
        &d.iter().map(|&x| x as f64).collect::<Vec<_>>(),
    );
    println!(
        "assembly   m={m} n={n} {format}: {:8.3} s   relative error vs CPU f64 {:.2e}",
        t_assemble.as_secs_f64(),
        relative_error(&c, &c_ref)
    );

    let t = Instant::now();
    let l = gpu
        .cholesky(&c, format)
        .context("Cholesky on the GPU")?
        .into_l();
    let t_factor = t.elapsed();
    let l_ref = reference::cholesky(&c.to_f64()).context("CPU reference Cholesky")?;
    let llt = reference::multiply_lower_by_transpose(&l.to_f64());
    println!(
        "Cholesky   m={m} {format}:       {:8.3} s   relative error vs CPU f64 {:.2e}, backward error ‖LLᵀ−C‖/‖C‖ {:.2e}",
        t_factor.as_secs_f64(),
        relative_error(&l, &l_ref),
        relative_error(&llt, &c.to_f64().symmetric_from_lower())
    );
    Ok(())
}

fn tables(sizes: &str, out: &std::path::Path) -> Result<()> {
    use symraster::tables;
    let sizes = tables::parse_sizes(sizes)?;
    let gpu = Gpu::new()?;
    let options = symraster::SolveOptions::paper();
    let result = tables::write_tables(&gpu, &sizes, out, &options, tables::DEFAULT_SEED)
        .context("regenerating Tables 1 and 2")?;
    for file in &result.files {
        println!("wrote {}", file.display());
    }
    for file in result
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        println!("\n{}", std::fs::read_to_string(file)?);
    }
    Ok(())
}
