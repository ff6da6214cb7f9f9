//! Issue 43: the tiled Cholesky of full storage (the chained schedule) timed in one process
//! after each kind of work `symraster reproduce` runs before it at the same order (its
//! throughput part: the tiled assembly, the blocked method's assembly through fragment passes,
//! faer's assembly on every core, the faithful assembly), to tell which leaves it slow. GPU
//! times by timer queries (`tiled::bench::time_cholesky`, median of `--runs` after a warm-up).
//! CSV on stdout: `step,op,format,m,ms`.
//!
//!     cargo run --release -p symraster-bench --bin chain_after -- [--runs 5] [M]  (default 4096)

use anyhow::Result;
use symraster::internal::GpuInternals;
use symraster::tiled::Storage;
use symraster::tiled::bench as tiled_bench;
use symraster::{Gpu, Method, Operation, Options, baseline, problems};

fn main() -> Result<()> {
    env_logger::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5;
    let mut m = 4096;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().map(|v| v.parse()).transpose()?.unwrap_or(runs),
            other => m = other.parse()?,
        }
    }
    let gpu = Gpu::new()?;
    let k = gpu.tiled_kernels()?;
    println!("step,op,format,m,ms");
    let cholesky = |step: &str| -> Result<()> {
        for (storage, name) in [(Storage::Full, "full"), (Storage::Rfp, "rfp")] {
            let t = tiled_bench::time_cholesky(&k, m, storage, runs)?;
            println!("{step},cholesky,{name},{m},{:.4}", t.ms);
        }
        Ok(())
    };
    cholesky("first")?;
    cholesky("again")?;
    for storage in [Storage::Full, Storage::Rfp] {
        tiled_bench::time_assembly(&k, m, 2 * m, storage, runs)?;
    }
    cholesky("after-tiled-assembly")?;
    let mut rng = problems::rng(12_000 + m as u64);
    let a = problems::uniform_matrix(&mut rng, m, 2 * m);
    let d = problems::uniform_vector(&mut rng, 2 * m);
    let blocked = Options::default().method(Method::Blocked);
    for _ in 0..runs {
        gpu.step(Operation::Assembly { a: &a, d: &d }, blocked)?
            .into_blocks()?;
    }
    cholesky("after-blocked-assembly")?;
    cholesky("after-blocked-assembly-again")?;
    let fa = baseline::to_faer(&a);
    let b = baseline::scale_columns(&fa, &d);
    let mut c = faer::Mat::<f32>::zeros(m, m);
    baseline::assemble_lower_into(&mut c, &fa, &b, baseline::par(0));
    cholesky("after-cpu-assembly")?;
    drop(c);
    let small = m / 2;
    let a2 = problems::uniform_matrix(&mut rng, small, 2 * small);
    let d2 = problems::uniform_vector(&mut rng, 2 * small);
    let faithful = Options::default().method(Method::Faithful);
    gpu.step(Operation::Assembly { a: &a2, d: &d2 }, faithful)?
        .into_texels()?;
    cholesky("after-faithful-assembly")?;
    Ok(())
}
