//! Where the GPU's f64 Cholesky overtakes the host's: wall times from a host `Matrix<f64>` to
//! L on the host of `host::cholesky` (faer's dpotrf on all cores) and `Gpu::cholesky_double`
//! (transfers included; `gpu_ms` blocked with diagonal blocks of 64, `gpu_b16_ms` and
//! `gpu_b32_ms` with 16 and 32, `gpu_chain_ms` in one chained launch), median of 7 after a
//! warm-up, at the orders given (default 256 512 1024 2048 4096). CSV
//! `m,host_ms,gpu_ms,gpu_b16_ms,gpu_b32_ms,gpu_chain_ms,host_cores` on stdout.
//! `cargo run --release -p symraster-bench --bin crossover -- 512 1024 2048`.

use std::time::Instant;
use symraster::{DoubleCholeskyOptions, DoubleSchedule, Gpu, Matrix, SymmetricView, host};

/// Median milliseconds of 7 calls of `f` after one warm-up.
fn median_ms(mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    f()?;
    let mut t = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn main() -> anyhow::Result<()> {
    let sizes = symraster_bench::sizes_or(&[256, 512, 1024, 2048, 4096])?;
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    println!("# {}", gpu.info().renderer);
    println!("m,host_ms,gpu_ms,gpu_b16_ms,gpu_b32_ms,gpu_chain_ms,host_cores");
    for m in sizes {
        // Diagonally dominant SPD: m on the diagonal, entries in [-1, 1) off it.
        let c = Matrix::from_fn(m, m, |i, j| {
            let (a, b) = (i.max(j), i.min(j));
            if i == j {
                m as f64
            } else {
                ((a * 7919 + b * 104_729) % 2000) as f64 / 1000.0 - 1.0
            }
        });
        let host_ms = median_ms(|| {
            std::hint::black_box(host::cholesky(&c)?);
            Ok(())
        })?;
        let gpu_ms = |options: DoubleCholeskyOptions| {
            median_ms(|| {
                let view = SymmetricView::lower(&c);
                std::hint::black_box(gpu.cholesky_double(view, options)?);
                Ok(())
            })
        };
        let block = DoubleCholeskyOptions::block;
        let (b64, b16, b32) = (gpu_ms(block(64))?, gpu_ms(block(16))?, gpu_ms(block(32))?);
        let chain = gpu_ms(DoubleCholeskyOptions::schedule(DoubleSchedule::Chained))?;
        println!(
            "{m},{host_ms:.3},{b64:.3},{b16:.3},{b32:.3},{chain:.3},{}",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
    }
    Ok(())
}
