//! `symraster demo`: a random problem assembled and factored on the GPU, checked against the
//! CPU reference.

use super::{FormatArg, MethodArg, options};
use anyhow::{Context as _, Result};
use clap::Args;
use rand::{Rng, SeedableRng};
use std::time::Instant;
use symraster::{Format, Gpu, Matrix, Options, reference, relative_error};

/// Arguments of `symraster demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Order m of C (A is m x 2m).
    #[arg(short, default_value_t = 257)]
    m: usize,
    /// Storage format.
    #[arg(long, value_enum, default_value_t = FormatArg::Full)]
    format: FormatArg,
    /// How to compute (auto: the fastest this device runs).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    method: MethodArg,
    /// Seed of the random problem.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the demo: m is checked against the device's limits before anything is allocated.
pub fn demo(args: DemoArgs) -> Result<()> {
    let gpu = super::open_gpu()?;
    let opts = options(args.format, args.method);
    let (m, n) = (args.m, args.m.saturating_mul(2));
    let method = opts.method_on(&gpu, m, n)?;
    say!(
        "device: {} ({}), method {method}",
        gpu.info().renderer,
        gpu.info().version
    );
    // Uniform in (0, 1), as the paper's random problems (the same draws as the library's
    // seeded test problems).
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed);
    let a = Matrix::from_fn(m, n, |_, _| rng.random_range(f32::EPSILON..1.0));
    let d: Vec<f32> = (0..n)
        .map(|_| rng.random_range(f32::EPSILON..1.0))
        .collect();
    let c = assemble(&gpu, &a, &d, opts)?;
    factor(&gpu, &c, opts)?;
    Ok(())
}

fn assemble(
    gpu: &Gpu,
    a: &symraster::Matrix<f32>,
    d: &[f32],
    opts: Options,
) -> Result<symraster::Matrix<f32>> {
    let (m, n) = a.shape();
    let format: Format = opts.format;
    let t = Instant::now();
    let c = gpu.assemble(a, d, opts).context("assembly on the GPU")?;
    let elapsed = t.elapsed();
    let c_ref = reference::assemble(
        &a.to_f64(),
        &d.iter().map(|&x| x as f64).collect::<Vec<_>>(),
    );
    say!(
        "assembly   m={m} n={n} {format}: {:8.3} s   relative error vs CPU f64 {:.2e}",
        elapsed.as_secs_f64(),
        relative_error(&c, &c_ref)
    );
    Ok(c)
}

fn factor(gpu: &Gpu, c: &symraster::Matrix<f32>, opts: Options) -> Result<()> {
    let (m, format) = (c.rows(), opts.format);
    let t = Instant::now();
    let l = gpu
        .cholesky(c, opts)
        .context("Cholesky on the GPU")?
        .into_l()?;
    let elapsed = t.elapsed();
    let l_ref = reference::cholesky(&c.to_f64()).context("CPU reference Cholesky")?;
    let llt = reference::multiply_lower_by_transpose(&l.to_f64());
    say!(
        "Cholesky   m={m} {format}:       {:8.3} s   relative error vs CPU f64 {:.2e}, backward error ‖LLᵀ−C‖/‖C‖ {:.2e}",
        elapsed.as_secs_f64(),
        relative_error(&l, &l_ref),
        relative_error(&llt, &c.to_f64().symmetric_from_lower())
    );
    Ok(())
}
