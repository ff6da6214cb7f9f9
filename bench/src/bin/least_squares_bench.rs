//! Times the weighted least-squares solve (Table 1's problem, default options: the fastest
//! method here) against faer's f64 solve, at the orders given (default 2048,4096), best of
//! three after a warm-up. `RUST_LOG=symraster=debug` adds where the time goes, phase by phase.
//!
//!     cargo run --release --example least_squares_bench -- 2048,4096

use rand::{Rng, SeedableRng};
use std::time::Instant;
use symraster::least_squares::{SolveOptions, relative_error_vec, solve_normal_equations_faer};
use symraster::{Gpu, Matrix};

/// Table 1's problem of order m: A m x 2m, d and b, uniform in (0, 1), seeded (the same draws
/// as the library's own seeded problems).
struct Problem {
    a: Matrix<f64>,
    d: Vec<f64>,
    b: Vec<f64>,
}

fn random_least_squares(seed: u64, m: usize) -> Problem {
    let n = 2 * m;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uniform = || rng.random_range(f64::MIN_POSITIVE..1.0);
    let a = Matrix::from_fn(m, n, |_, _| uniform());
    let d = (0..n).map(|_| uniform()).collect();
    let b = (0..n).map(|_| uniform()).collect();
    Problem { a, d, b }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "2048,4096".into())
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()?;
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    println!("# {}", gpu.info().renderer);
    println!("m,n,gpu_s,faer_s,speedup,iterations,rel_error");
    for m in sizes {
        let p = random_least_squares(1, m);
        let options = SolveOptions::paper();
        let mut gpu_s = f64::INFINITY;
        let mut solution = gpu.least_squares(&p.a, &p.d, &p.b, options)?;
        for _ in 0..3 {
            solution = gpu.least_squares(&p.a, &p.d, &p.b, options)?;
            gpu_s = gpu_s.min(solution.timings.total.as_secs_f64());
        }
        let mut faer_s = f64::INFINITY;
        let mut x_cpu = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b)?;
            faer_s = faer_s.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{m},{},{gpu_s:.4},{faer_s:.4},{:.2},{},{:.2e}",
            2 * m,
            faer_s / gpu_s,
            solution.iterations,
            relative_error_vec(&solution.x, &x_cpu)
        );
    }
    Ok(())
}
