//! Benchmark of the tiled compute path: GPU time (GL_TIME_ELAPSED around the kernels, after a
//! warm-up, median of the runs) and useful GFLOP/s of assembly (lower triangle of A·diag(d)·Aᵀ),
//! Cholesky and the two triangular solves, in full and RFP storage; optionally the faithful
//! path beside it. CSV on stdout: method,op,format,m,n,ms,gflops.
//!
//! `cargo run --release --example tiled_bench -- [--runs R] [--faithful] [--ops a,c,s]
//!  [--formats full,rfp] [--rhs 1,16] SIZE...` where SIZE is `m` (n = 2m) or `mxn`; default
//! 1024. Solves are timed for each count of right-hand sides in `--rhs` (default 16; the n
//! column holds it).

use anyhow::{Context, bail};
use symraster::internal::GpuInternals;
use symraster::tiled::{Storage, bench};
use symraster::timing::{Timing, time_finish};
use symraster::{Format, Gpu, Method, Options, problems};

struct Args {
    runs: usize,
    faithful: bool,
    ops: Vec<String>,
    formats: Vec<Storage>,
    rhs: Vec<usize>,
    sizes: Vec<(usize, usize)>,
}

fn parse() -> anyhow::Result<Args> {
    let mut args = Args {
        runs: 5,
        faithful: false,
        ops: vec!["assembly".into(), "cholesky".into(), "solve".into()],
        formats: vec![Storage::Full, Storage::Rfp],
        rhs: vec![16],
        sizes: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => args.runs = it.next().context("--runs needs a value")?.parse()?,
            "--faithful" => args.faithful = true,
            "--rhs" => {
                args.rhs = it
                    .next()
                    .context("--rhs needs a list")?
                    .split(',')
                    .map(|s| s.parse())
                    .collect::<Result<_, _>>()?
            }
            "--ops" => {
                args.ops = it
                    .next()
                    .context("--ops needs a list")?
                    .split(',')
                    .map(|s| match s {
                        "a" | "assembly" => Ok("assembly".to_string()),
                        "c" | "cholesky" => Ok("cholesky".to_string()),
                        "s" | "solve" => Ok("solve".to_string()),
                        "p" | "profile" => Ok("profile".to_string()),
                        other => bail!("unknown op {other}"),
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            "--formats" => {
                args.formats = it
                    .next()
                    .context("--formats needs a list")?
                    .split(',')
                    .map(|s| match s {
                        "full" => Ok(Storage::Full),
                        "rfp" | "packed" => Ok(Storage::Rfp),
                        other => bail!("unknown format {other}"),
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            size => {
                let (m, n) = match size.split_once('x') {
                    Some((m, n)) => (m.parse()?, n.parse()?),
                    None => {
                        let m: usize = size.parse()?;
                        (m, 2 * m)
                    }
                };
                args.sizes.push((m, n));
            }
        }
    }
    if args.sizes.is_empty() {
        args.sizes.push((1024, 2048));
    }
    Ok(args)
}

fn main() -> anyhow::Result<()> {
    let args = parse()?;
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let k = gpu.tiled_kernels()?;
    eprintln!(
        "# {} | {} | kernels {:?} | max storage block {} bytes",
        gpu.info().renderer,
        gpu.info().version,
        k.config(),
        k.limits().max_storage_block_bytes
    );
    println!("method,op,format,m,n,ms,gflops");
    for &(m, n) in &args.sizes {
        for &storage in &args.formats {
            if args.ops.iter().any(|o| o == "profile") && storage == Storage::Full {
                for (name, n, gpu, submit) in bench::dispatch_profile(&k, m, 256)? {
                    eprintln!(
                        "# profile {name}: {n} dispatches, {gpu:.2} us GPU and {submit:.2} us to issue each"
                    );
                }
            }
            let runs =
                args.ops
                    .iter()
                    .filter(|o| *o != "profile")
                    .flat_map(|op| match op.as_str() {
                        "solve" => args.rhs.iter().map(|&r| (op.as_str(), r)).collect(),
                        _ => vec![(op.as_str(), 0)],
                    });
            for (op, rhs) in runs {
                let t = match op {
                    "assembly" => bench::time_assembly(&k, m, n, storage, args.runs),
                    "cholesky" => bench::time_cholesky(&k, m, storage, args.runs),
                    _ => bench::time_solve(&k, m, rhs, storage, args.runs),
                };
                match t {
                    Ok(t) => println!(
                        "tiled,{},{},{},{},{:.4},{:.2}",
                        t.op,
                        t.storage.name(),
                        t.m,
                        t.n,
                        t.ms,
                        t.gflops
                    ),
                    Err(e) => eprintln!("# tiled {op} {} m {m} n {n}: {e}", storage.name()),
                }
            }
        }
        if args.faithful {
            faithful(&gpu, m, n, &args.ops)?;
        }
    }
    Ok(())
}

/// One run each of the paper's passes (full format) at the same size, for the ratio.
fn faithful(gpu: &Gpu, m: usize, n: usize, ops: &[String]) -> anyhow::Result<()> {
    let options = Options::new(Format::Full).method(Method::Faithful);
    let mut rng = problems::rng(1);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 4) as f32 * 0.25).collect();
    let (mf, nf) = (m as f64, n as f64);
    if ops.iter().any(|o| o == "assembly") {
        let mut run = gpu.start_assembly(&a, &d, options)?;
        let ms = gpu_or_wall_ms(time_finish(&mut run, gpu.preheat())?);
        let gflops = mf * (mf + 1.0) * nf / (ms * 1e6);
        println!("faithful,assembly,full,{m},{n},{ms:.4},{gflops:.2}");
    }
    if ops.iter().any(|o| o == "cholesky") {
        let c = gpu.assemble(&a, &d, options)?;
        let mut run = gpu.start_cholesky(&c, options)?;
        let ms = gpu_or_wall_ms(time_finish(&mut run, gpu.preheat())?);
        let gflops = mf * mf * mf / 3.0 / (ms * 1e6);
        println!("faithful,cholesky,full,{m},{m},{ms:.4},{gflops:.2}");
    }
    Ok(())
}

/// The GPU timer's milliseconds, or the wall time where the timer reads more than it (llvmpipe's
/// timer has been seen to overflow on runs of thousands of passes).
fn gpu_or_wall_ms(t: Timing) -> f64 {
    t.gpu.min(t.wall).as_secs_f64() * 1e3
}
