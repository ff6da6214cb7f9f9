//! GPU timings of every inversion method at the orders given (default 128 256 512), one line
//! each: kind, method, s, block, GPU ms, wall ms, GFLOP/s (standard counts). For the
//! reproduction figure; `cargo run --release --example inverse_timing -- 1024 2048`.

use symraster::Gpu;
use symraster::inverse::{Inverter, Kind, Method, bench};

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
    let gpu = Gpu::new()?;
    let inv = Inverter::new(&gpu)?;
    println!("# {}", gpu.info().renderer);
    println!("kind,method,s,block,gpu_ms,wall_ms,gflops");
    for &s in &sizes {
        for (kind, method) in [
            (Kind::General, Method::Gje),
            (Kind::General, Method::Lu),
            (Kind::Spd, Method::Gje),
            (Kind::Spd, Method::Cholesky),
        ] {
            let reps = if s <= 1024 { 3 } else { 1 };
            let t = bench::time_inverse(&inv, kind, method, s, None, reps)?;
            println!(
                "{},{},{},{},{:.3},{:.3},{:.3}",
                kind.name(),
                method.name(),
                s,
                t.block,
                t.gpu_ms,
                t.wall_ms,
                t.gflops
            );
        }
    }
    Ok(())
}
