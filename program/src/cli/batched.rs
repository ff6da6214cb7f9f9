//! `symraster batched`: many small problems of one order at once (issue 28), from .npy arrays
//! with a leading batch axis: least squares, the SPD solve, Cholesky or assembly, with an
//! INFO array per problem (LAPACK's/cuSOLVER's: 0 ok, k > 0 not positive definite at column
//! k − 1, −1 out of float32's range). A problem that fails does not fail the run.

use super::MethodArg;
use super::output::{self, Outputs};
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use symraster::batched::MAX_REFINEMENT_STEPS;
use symraster::{Batch, BatchOptions, io};

/// The batched operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BatchOp {
    /// min ‖Dₚ(bₚ − Aₚᵀxₚ)‖ per problem, fused: --a, --d, --b; writes x (float64, (B, n)).
    LeastSquares,
    /// Cₚ·xₚ = bₚ per problem: --c, --b; writes x (float64, (B, n)).
    SpdSolve,
    /// Cₚ = Lₚ·Lₚᵀ per problem: --c; writes L (float32, (B, n, n)).
    Cholesky,
    /// The lower triangle of Aₚ·diag(dₚ)·Aₚᵀ: --a, --d; writes C (float32, (B, n, n)).
    Assemble,
}

/// Arguments of `symraster batched`.
#[derive(Args)]
pub struct BatchedArgs {
    /// The operation.
    #[arg(long, value_enum, default_value_t = BatchOp::LeastSquares)]
    pub op: BatchOp,
    /// A, (B, n, k): n unknowns and k observations per problem (.npy).
    #[arg(long = "a", value_name = "A.npy")]
    pub a: Option<PathBuf>,
    /// d, (B, k): the weights (the diagonal of D²) per problem.
    #[arg(long = "d", value_name = "d.npy")]
    pub d: Option<PathBuf>,
    /// b, (B, k) for least squares, (B, n) for the SPD solve.
    #[arg(long = "b", value_name = "b.npy")]
    pub b: Option<PathBuf>,
    /// C, (B, n, n): symmetric positive definite matrices; only the lower triangles are read.
    #[arg(long = "c", value_name = "C.npy")]
    pub c: Option<PathBuf>,
    /// Refinement steps of the solves, each with the residual in f64 on the GPU (0 to 8).
    #[arg(long, default_value_t = 1)]
    pub refine: usize,
    /// How to compute (the batched operations run on compute shaders: auto or tiled).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Output: x (float64, (B, n)), L or C (float32, (B, n, n)); .npy.
    #[arg(short = 'o', long = "output", value_name = "x.npy")]
    pub output: PathBuf,
    /// INFO per problem (int32, (B,)); Cholesky and the solves.
    #[arg(long = "info", value_name = "info.npy")]
    pub info: Option<PathBuf>,
}

/// "A (A.npy)".
fn role(name: &str, path: &Path) -> String {
    format!("{name} ({})", path.display())
}

/// The path given for `name`, or an error saying the operation needs it.
fn needed<'a>(path: &'a Option<PathBuf>, name: &str, op: BatchOp) -> Result<&'a PathBuf> {
    match path {
        Some(p) => Ok(p),
        None => bail!(
            "batched --op {} needs --{} (a .npy array with a leading batch axis)",
            op.to_possible_value()
                .expect("no skipped values")
                .get_name(),
            name.to_lowercase()
        ),
    }
}

/// Reads a .npy array of `rank` dimensions with the batch axis first, as a [`Batch`] (a rank-2
/// array as B vectors).
fn read_batch(path: &Path, name: &str, rank: usize) -> Result<Batch<f64>> {
    // The rank is checked on the declared shape, before the values are allocated.
    let rank_checked = |shape: &[usize]| {
        if shape.len() == rank {
            return Ok(());
        }
        Err(symraster::Error::shape(format!(
            "{}: {name} must be a {rank}-D array with the batch axis first ({}), but the file \
             holds an array of shape {}",
            io::display_path(path),
            if rank == 3 {
                "B, rows, cols"
            } else {
                "B, length"
            },
            io::shape_text(shape)
        )))
    };
    let array = io::read_array_checked(path, &rank_checked)?;
    let batch = match array.shape[..] {
        [b, r, c] => Batch::new(b, r, c, array.data)?,
        [b, l] => Batch::vectors(b, l, array.data)?,
        _ => unreachable!("the check refuses every other rank"),
    };
    Ok(batch)
}

/// Stages INFO as a little-endian int32 .npy of shape (B,).
fn stage_info(outputs: &mut Outputs, path: &Path, info: &[i32]) -> Result<()> {
    outputs.stage(path, |w| {
        let mut header = format!(
            "{{'descr': '<i4', 'fortran_order': False, 'shape': ({},), }}",
            info.len()
        );
        let unpadded = 6 + 2 + 2 + header.len() + 1;
        header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
        header.push('\n');
        w.write_all(b"\x93NUMPY\x01\x00")?;
        w.write_all(&(header.len() as u16).to_le_bytes())?;
        w.write_all(header.as_bytes())?;
        let bytes: Vec<u8> = info.iter().flat_map(|v| v.to_le_bytes()).collect();
        w.write_all(&bytes)
    })
}

/// Prints how many problems (of order n) failed and the first few.
fn report_failures(info: &[i32], n: usize) {
    let failed: Vec<String> = info
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s != 0)
        .map(|(p, &s)| match symraster::Failure::from_info(s, n) {
            Some(f) => format!("problem {p}: {f}"),
            None => unreachable!("INFO 0 is filtered out"),
        })
        .collect();
    say!("{} of {} problems failed", failed.len(), info.len());
    for line in failed.iter().take(10) {
        say!("  {line}");
    }
    if failed.len() > 10 {
        say!("  … and {} more (see --info)", failed.len() - 10);
    }
}

/// Runs `symraster batched`.
pub fn batched(args: BatchedArgs) -> Result<()> {
    if args.refine > MAX_REFINEMENT_STEPS {
        bail!(
            "--refine takes 0 to {MAX_REFINEMENT_STEPS} steps, not {}",
            args.refine
        );
    }
    let op = args.op;
    if op == BatchOp::Assemble && args.info.is_some() {
        bail!("assembly has no INFO to write; leave out --info");
    }
    // Every input read and checked (shapes by the library, values here with the file names)
    // before the GPU is opened.
    let observations = matches!(op, BatchOp::LeastSquares | BatchOp::Assemble);
    let (a, d, c) = if observations {
        let (pa, pd) = (needed(&args.a, "A", op)?, needed(&args.d, "d", op)?);
        let (a, d) = (read_batch(pa, "A", 3)?, read_batch(pd, "d", 2)?);
        a.single(&role("A", pa), false)?;
        d.single(&role("d", pd), false)?;
        (Some(a), Some(d), None)
    } else {
        let pc = needed(&args.c, "C", op)?;
        let c = read_batch(pc, "C", 3)?;
        c.single(&role("C", pc), true)?;
        (None, None, Some(c))
    };
    let b = if matches!(op, BatchOp::LeastSquares | BatchOp::SpdSolve) {
        let pb = needed(&args.b, "b", op)?;
        let b = read_batch(pb, "b", 2)?;
        b.single(&role("b", pb), false)?;
        Some(b)
    } else {
        None
    };
    // Every output checked before any work; all are written together at the end, or none.
    match &args.info {
        Some(info) => output::check_distinct(("-o", &args.output), ("--info", info))?,
        None => {
            output::check(&args.output)?;
        }
    }
    let gpu = super::open_gpu()?;
    let options = BatchOptions::default()
        .method(args.method.into())
        .refinement_steps(args.refine);
    let batched = gpu.batched();
    let renderer = &gpu.info().renderer;
    let mut outputs = Outputs::new();
    // What is said once the outputs are in place.
    let (count, info, said) = match op {
        BatchOp::LeastSquares | BatchOp::SpdSolve => {
            let b = b.as_ref().expect("read above");
            let s = match op {
                BatchOp::LeastSquares => batched.least_squares(
                    a.as_ref().expect("read above"),
                    d.as_ref().expect("read above"),
                    b,
                    options,
                )?,
                _ => batched.spd_solve(c.as_ref().expect("read above"), b, options)?,
            };
            let (count, n, _) = s.x.shape();
            outputs.array(&args.output, &[count, n], s.x.as_slice())?;
            let said = format!(
                "x: {count} problems of order {n} (float64, f32 factor and {} refinement \
                 step(s) in f64 on {renderer}) written to {}",
                s.refinement_steps,
                args.output.display()
            );
            (count, Some((s.info, n)), said)
        }
        BatchOp::Cholesky => {
            let f = batched.cholesky(c.as_ref().expect("read above"), options)?;
            let (count, n, _) = f.l.shape();
            outputs.array(&args.output, &[count, n, n], f.l.as_slice())?;
            let said = format!(
                "L: {count} factors of order {n} (float32 on {renderer}; a failed problem's L \
                 is NaN) written to {}",
                args.output.display()
            );
            (count, Some((f.info, n)), said)
        }
        BatchOp::Assemble => {
            let c = batched.assemble(
                a.as_ref().expect("read above"),
                d.as_ref().expect("read above"),
                options,
            )?;
            let (count, n, _) = c.shape();
            outputs.array(&args.output, &[count, n, n], c.as_slice())?;
            let said = format!(
                "C: {count} lower triangles of order {n} (float32 on {renderer}) written to {}",
                args.output.display()
            );
            (count, None, said)
        }
    };
    if let (Some((info, _)), Some(path)) = (&info, &args.info) {
        stage_info(&mut outputs, path, info)?;
    }
    outputs.commit()?;
    say!("{said}");
    if let Some((info, n)) = info {
        if let Some(path) = &args.info {
            say!("info: {count} values (int32) written to {}", path.display());
        }
        report_failures(&info, n);
    }
    Ok(())
}
