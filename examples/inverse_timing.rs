//! GPU timings of every inversion method at the orders given (default 128 256 512), one line
//! each: kind, method, s, block, GPU ms, wall ms, GFLOP/s (standard counts). For the
//! reproduction figure; `cargo run --release --example inverse_timing -- 1024 2048`.

use faer::linalg::solvers::DenseSolveCore;
use std::time::Instant;
use symraster::Gpu;
use symraster::inverse::{InverseMethod as Method, Inverter, Kind, Storage, bench};

/// faer's f32 inverse (LU with partial pivoting, or Cholesky for SPD), median wall ms of 3.
fn faer_ms(kind: Kind, s: usize) -> f64 {
    let a = match kind {
        Kind::Spd => bench::test_matrix(kind, s).symmetric_from_lower(),
        Kind::General => bench::test_matrix(kind, s),
    };
    let m = faer::Mat::<f32>::from_fn(s, s, |i, j| a[(i, j)]);
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            let x = match kind {
                Kind::Spd => m.llt(faer::Side::Lower).unwrap().inverse(),
                Kind::General => m.partial_piv_lu().inverse(),
            };
            std::hint::black_box(x);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}

fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![128, 256, 512]
    } else {
        sizes
    };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = Inverter::new(&gpu)?;
    println!("# {}", gpu.info().renderer);
    println!("kind,method,storage,s,block,gpu_ms,wall_ms,gflops");
    for &s in &sizes {
        for (kind, method, storage) in [
            (Kind::General, Method::Gje, Storage::Full),
            (Kind::General, Method::Lu, Storage::Full),
            (Kind::Spd, Method::Gje, Storage::Full),
            (Kind::Spd, Method::Cholesky, Storage::Full),
            (Kind::Spd, Method::Cholesky, Storage::Rfp),
        ] {
            let reps = if s <= 1024 { 3 } else { 1 };
            let t = bench::time_inverse_in(&inv, kind, method, storage, s, None, reps)?;
            println!(
                "{},{},{},{},{},{:.4},{:.3},{:.3}",
                kind.name(),
                method.name(),
                storage.name(),
                s,
                t.block,
                t.gpu_ms,
                t.wall_ms,
                t.gflops
            );
        }
        for kind in [Kind::General, Kind::Spd] {
            let ms = faer_ms(kind, s);
            println!(
                "{},faer-cpu,-,{},-,-,{:.3},{:.3}",
                kind.name(),
                s,
                ms,
                kind.flops(s) / (ms * 1e6)
            );
        }
    }
    Ok(())
}
