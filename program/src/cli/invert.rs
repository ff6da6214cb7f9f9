//! `invert`, `sign` and `lyap`: inversion on the GPU (after Benner et al.), the matrix sign
//! function by the scaled Newton iteration, and continuous Lyapunov equations built on it.

use super::FormatArg;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use symraster::matrix::check_non_empty;
use symraster::{
    Error, InverseMethod, InvertOptions, Kind, LyapunovOptions, Refined, SignOptions, Storage, io,
    rfp,
};

/// Which matrices `invert` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// Symmetric positive definite: only the lower triangle is read; the inverse is symmetric.
    Spd,
    /// Any nonsingular square matrix (symmetric indefinite ones too), with partial pivoting.
    General,
}

/// How `invert` inverts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InverseMethodArg {
    /// By kind and order: Cholesky for --kind spd; Gauss-Jordan for a general matrix up to
    /// order 8192, LU above it (the faster of the two on the H200).
    Auto,
    /// Gauss-Jordan elimination (Benner et al.'s Fig 3: the SPD variant or partial pivoting).
    Gje,
    /// Cholesky, then the triangular inverse and L⁻ᵀL⁻¹ (SPD only).
    Cholesky,
    /// LU with partial pivoting, then U⁻¹L⁻¹.
    Lu,
}

/// Arguments of `invert`.
#[derive(Args, Debug)]
pub struct InvertArgs {
    /// The square matrix M (.npy or .mtx).
    #[arg(long)]
    a: PathBuf,
    /// What M is: `spd` reads only its lower triangle.
    #[arg(long, value_enum, default_value_t = KindArg::General)]
    kind: KindArg,
    /// The inversion method (`cholesky` needs --kind spd).
    #[arg(long, value_enum, default_value_t = InverseMethodArg::Auto)]
    method: InverseMethodArg,
    /// Storage on the GPU (packed: LAPACK's RFP array, in place, about half the memory; for
    /// --kind spd --method cholesky).
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    format: FormatArg,
    /// Write M⁻¹'s lower triangle as LAPACK's RFP array (TRANSR='N', UPLO='L'): 1-D,
    /// m(m+1)/2 float64 (--kind spd).
    #[arg(long)]
    rfp: bool,
    /// Newton-Schulz steps in f64 (on the GPU) after the f32 GPU inverse (0: the GPU inverse
    /// as it is); taken only while they reduce ‖I − M·X‖.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=20))]
    refine: u32,
    /// Output file for M⁻¹ (float64).
    #[arg(short, long)]
    output: PathBuf,
}

/// Arguments of `sign`.
#[derive(Args, Debug)]
pub struct SignArgs {
    /// The square matrix A, with no eigenvalue on the imaginary axis.
    #[arg(long)]
    a: PathBuf,
    /// Plain Newton iteration (the paper's eq. 1) without norm scaling.
    #[arg(long)]
    no_scaling: bool,
    /// Refine every inverse in f64 (about double accuracy, at CPU cost): the default, kept
    /// for scripts that name it.
    #[arg(long, conflicts_with = "no_refine_inverses")]
    refine_inverses: bool,
    /// Keep the Newton iterate on the GPU in f32 (single-precision accuracy, which the printed
    /// commutation residual shows; faster on a fast GPU at large orders).
    #[arg(long)]
    no_refine_inverses: bool,
    /// Output file for sign(A) (float64).
    #[arg(short, long)]
    output: PathBuf,
}

/// Arguments of `lyap`.
#[derive(Args, Debug)]
pub struct LyapArgs {
    /// The stable matrix A (all eigenvalues in the open left half-plane).
    #[arg(long)]
    a: PathBuf,
    /// The right side Q (same order as A).
    #[arg(long)]
    q: PathBuf,
    /// Refinement steps in f64.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=20))]
    refine: u32,
    /// Output file for X (float64).
    #[arg(short, long)]
    output: PathBuf,
}

/// Reads a square, non-empty matrix named `name` (the library checks its values: only the
/// lower triangle for --kind spd).
fn read_square(path: &std::path::Path, name: &str) -> Result<symraster::Matrix<f64>> {
    let label = format!("{name} ({})", io::display_path(path));
    // A matrix that is not square is refused before it is allocated.
    let a = io::read_matrix_checked(path, name, &super::files::square(&label))?;
    check_non_empty(&label, &a)?;
    Ok(a)
}

/// `invert`: M⁻¹ on the GPU in f32, refined in f64.
pub fn invert(args: InvertArgs) -> Result<()> {
    let a = read_square(&args.a, "M")?;
    super::output::check(&args.output)?;
    let kind = match args.kind {
        KindArg::Spd => Kind::Spd,
        KindArg::General => Kind::General,
    };
    let method = match args.method {
        InverseMethodArg::Auto => InverseMethod::Auto,
        InverseMethodArg::Gje => InverseMethod::Gje,
        InverseMethodArg::Cholesky => InverseMethod::Cholesky,
        InverseMethodArg::Lu => InverseMethod::Lu,
    };
    let storage = match args.format {
        FormatArg::Full => Storage::Full,
        FormatArg::Packed => Storage::Rfp,
    };
    // The method, kind and storage are checked by `Gpu::invert` before any work.
    if args.rfp && kind != Kind::Spd {
        return Err(Error::from(symraster::InputError::Unsupported(
            "--rfp writes a symmetric inverse's lower triangle: it needs --kind spd".into(),
        ))
        .into());
    }
    let gpu = super::open_gpu()?;
    let options = InvertOptions {
        kind,
        method,
        storage,
        block: None,
        refine_steps: args.refine as usize,
    };
    let r = gpu.invert(&a, options)?;
    if args.rfp {
        io::write_vector(&args.output, &rfp::from_lower(&r.x)?)?;
    } else {
        io::write_matrix(&args.output, &r.x)?;
    }
    let s = a.rows();
    say!(
        "M⁻¹: {s}x{s}{} ({} {}, {} storage, on {}; ‖I − M·X‖_F {}) written to {}",
        if args.rfp { " as an RFP array" } else { "" },
        args.kind
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string()),
        match (args.method, method.resolve(kind, s)) {
            (InverseMethodArg::Auto, chosen) => format!("{} (auto)", chosen.name()),
            (_, chosen) => chosen.name().to_string(),
        },
        storage.name(),
        gpu.info().renderer,
        residual_text(&r, args.refine > 0),
        io::display_path(&args.output)
    );
    Ok(())
}

/// What the printed line says about ‖I − M·X‖_F: from the GPU, after refinement, or of the
/// f64 CPU fallback and why it ran.
fn residual_text(r: &Refined, refine_asked: bool) -> String {
    let residuals = &r.residuals;
    let text = match (residuals.first(), residuals.last()) {
        (Some(first), Some(last)) if r.refined && residuals.len() > 1 => format!(
            "{first:.2e} from {}, {last:.2e} after {} f64 step(s)",
            if r.fallback.is_some() {
                "faer's f64 inverse"
            } else {
                "the GPU"
            },
            residuals.len() - 1
        ),
        (Some(first), _) if r.fallback.is_some() => format!("{first:.2e} from faer's f64 inverse"),
        (Some(first), _) if !refine_asked => {
            format!("≈ {first:.2e} by random probes, not refined")
        }
        (Some(first), _) => format!("{first:.2e}, not refined"),
        _ => "not measured".into(),
    };
    match &r.fallback {
        Some(why) => format!("{text}; the f64 CPU fallback, as {why}"),
        None => text,
    }
}

/// `sign`: the matrix sign function.
pub fn sign(args: SignArgs) -> Result<()> {
    let a = read_square(&args.a, "A")?;
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let options = SignOptions {
        scaling: !args.no_scaling,
        refine_inverses: args.refine_inverses || !args.no_refine_inverses,
        ..SignOptions::default()
    };
    let s = gpu.sign(&a, options)?;
    io::write_matrix(&args.output, &s.s)?;
    say!(
        "sign(A): {n}x{n} after {} Newton iterations{} and {} f64 polish step(s){} (‖I − S²‖_F \
         {:.2e}, ‖A·S − S·A‖_F/(‖A‖_F·‖S‖_F) {:.2e}) written to {}",
        s.iterations,
        if options.refine_inverses {
            " with f64-refined inverses"
        } else {
            " in f32"
        },
        s.polish_steps,
        if s.handed_over {
            " (Newton-Schulz from the hand-over)"
        } else {
            ""
        },
        s.residual,
        s.commutation,
        io::display_path(&args.output),
        n = a.rows()
    );
    Ok(())
}

/// `lyap`: A·X + X·Aᵀ = Q (scipy's solve_continuous_lyapunov convention).
pub fn lyap(args: LyapArgs) -> Result<()> {
    let a = read_square(&args.a, "A")?;
    let q = read_square(&args.q, "Q")?;
    if q.rows() != a.rows() {
        return Err(Error::shape(format!(
            "A ({}) is {n}x{n}, so Q must be {n}x{n} too, but Q ({}) is {m}x{m}",
            io::display_path(&args.a),
            io::display_path(&args.q),
            n = a.rows(),
            m = q.rows()
        ))
        .into());
    }
    super::output::check(&args.output)?;
    let gpu = super::open_gpu()?;
    let x = gpu.lyapunov(
        &a,
        &q,
        LyapunovOptions {
            refine_steps: args.refine as usize,
        },
    )?;
    io::write_matrix(&args.output, &x.x)?;
    say!(
        "X with A·X + X·Aᵀ = Q: {n}x{n} after {} sign iterations (relative residual {}) written \
         to {}",
        x.iterations,
        x.residuals
            .last()
            .map_or_else(|| "not measured".into(), |r| format!("{r:.2e}")),
        io::display_path(&args.output),
        n = a.rows()
    );
    Ok(())
}
