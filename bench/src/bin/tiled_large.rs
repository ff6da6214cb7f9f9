//! Orders past one storage buffer on the tiled path: C = A·diag(d)·Aᵀ + m·I made on the GPU
//! from a seeded m x n A (no m x m host matrix), split over storage buffers where one cannot
//! hold it, factored and solved on the GPU, the solution checked on the CPU through A. One
//! line per order and storage: m,n,format,parts,bytes,assembly_ms,cholesky_ms,
//! cholesky_tflops,cholesky_launches,solve_ms,residual,forward_error.
//!
//! `cargo run --release --example tiled_large -- [--rank N] [--runs R] [--formats full,rfp]
//! M...` (default 40000; N = 256; R = 1 timed run of assembly and Cholesky after a warm-up).
//! `SYMRASTER_TILED_MAX_BUFFER_BYTES` lowers the bytes per buffer.

use anyhow::{Context, bail};
use symraster::Gpu;
use symraster::internal::GpuInternals;
use symraster::tiled::{Storage, bench};

fn main() -> anyhow::Result<()> {
    let mut rank = 256;
    let mut runs = 1;
    let mut formats = vec![Storage::Full, Storage::Rfp];
    let mut sizes = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rank" => rank = it.next().context("--rank needs a value")?.parse()?,
            "--runs" => runs = it.next().context("--runs needs a value")?.parse()?,
            "--formats" => {
                formats = it
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
            m => sizes.push(m.parse().with_context(|| format!("bad order {m}"))?),
        }
    }
    if sizes.is_empty() {
        sizes.push(40000);
    }
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let k = gpu.tiled_kernels()?;
    eprintln!("{} ({})", gpu.info().renderer, gpu.info().version);
    println!(
        "m,n,format,parts,bytes,assembly_ms,cholesky_ms,cholesky_tflops,cholesky_launches,\
         solve_ms,residual,forward_error"
    );
    for &m in &sizes {
        for &s in &formats {
            match bench::large_run(&k, m, rank, s, runs) {
                Ok(r) => println!(
                    "{},{},{},{},{},{:.2},{:.2},{:.3},{},{:.2},{:.2e},{:.2e}",
                    r.m,
                    r.n,
                    s.name(),
                    r.parts,
                    r.bytes,
                    r.assembly_ms,
                    r.factor_ms,
                    (m as f64).powi(3) / 3.0 / (r.factor_ms * 1e9),
                    r.factor_launches,
                    r.solve_ms,
                    r.residual,
                    r.forward_error
                ),
                Err(e) => println!("{m},{rank},{},error: {e}", s.name()),
            }
        }
    }
    Ok(())
}
