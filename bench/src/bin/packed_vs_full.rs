//! Packed against full format: time and relative error of assembly (m x n, Algorithm 3) and
//! Cholesky (m x m, Algorithm 5), as in the paper's section 5 (it found packed within 1%).
//!
//! `cargo run --release --example packed_vs_full -- [m] [n] [repeats]` (default 512 1024 3).
//! Times are the GPU's (GL_TIME_ELAPSED around the passes) and wall time including upload and
//! download; the best of `repeats` runs after one warm-up, formats alternating.

use std::time::{Duration, Instant};
use symraster::draw::execution::Execution;
use symraster::gl::GpuTimer;
use symraster::internal::GpuInternals;
use symraster::{
    Format, Gpu, Matrix, Method, Options, problems as testing, reference, relative_error,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let m = args.first().copied().unwrap_or(512);
    let n = args.get(1).copied().unwrap_or(2 * m);
    let repeats = args.get(2).copied().unwrap_or(3).max(1);
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    println!("{} | m = {m}, n = {n}", gpu.info().renderer);

    let mut rng = testing::rng(1);
    let a = testing::uniform_matrix(&mut rng, m, n);
    let d = testing::uniform_vector(&mut rng, n);
    let c_ref = reference::assemble(
        &a.to_f64(),
        &d.iter().map(|&v| v as f64).collect::<Vec<_>>(),
    );
    let spd = testing::well_conditioned_spd(&mut rng, m);
    let l_ref = reference::cholesky(&spd.to_f64())?;

    // Formats alternate run by run, so load from other processes hits both alike.
    let formats = [Format::Full, Format::Packed];
    let mut best: [[Option<Timing>; 2]; 2] = Default::default();
    for _ in 0..=repeats {
        for (f, &format) in formats.iter().enumerate() {
            let runs = [
                timed(&gpu, || {
                    gpu.start_assembly(&a, &d, Options::new(format).method(Method::Faithful))
                })?,
                timed(&gpu, || {
                    gpu.start_cholesky(&spd, Options::new(format).method(Method::Faithful))
                })?,
            ];
            for (op, t) in runs.into_iter().enumerate() {
                if best[op][f].as_ref().is_none_or(|b| t.0 < b.0) {
                    best[op][f] = Some(t);
                }
            }
        }
    }
    println!("operation  format    GPU time     wall time   relative error");
    let mut times = Vec::new();
    for (f, format) in formats.iter().enumerate() {
        let mut row = Vec::new();
        for (op, name) in ["assembly", "cholesky"].iter().enumerate() {
            let (gpu_t, wall, out) = best[op][f].take().expect("at least one run");
            let err = if op == 0 {
                relative_error(&out, &c_ref)
            } else {
                relative_error(&out, &l_ref)
            };
            println!(
                "{name:<10} {format:<7} {:>8.3} s {:>9.3} s   {err:.3e}",
                gpu_t.as_secs_f64(),
                wall.as_secs_f64()
            );
            row.push(gpu_t);
        }
        times.push((row[0], row[1]));
    }
    let ratio = |p: Duration, f: Duration| 100.0 * (p.as_secs_f64() / f.as_secs_f64() - 1.0);
    println!(
        "packed vs full GPU time: assembly {:+.1}%, cholesky {:+.1}%",
        ratio(times[1].0, times[0].0),
        ratio(times[1].1, times[0].1)
    );
    Ok(())
}

/// (GPU time of the passes, wall time with upload and download, result).
type Timing = (Duration, Duration, Matrix<f32>);

/// Uploads with `start`, runs the passes inside a GL_TIME_ELAPSED query and downloads;
/// (GPU time of the passes, wall time of it all, result).
fn timed<'g>(
    gpu: &'g Gpu,
    start: impl FnOnce() -> symraster::Result<Execution<'g>>,
) -> symraster::Result<Timing> {
    let timer = GpuTimer::new(gpu.context())?;
    let clock = Instant::now();
    let mut run = start()?;
    timer.begin();
    run.finish()?;
    timer.end();
    let out = run.download_lower()?;
    let wall = clock.elapsed();
    Ok((timer.elapsed()?, wall, out))
}
