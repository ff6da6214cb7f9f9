//! Times the refined solves end to end from host arrays, as a user calls them: weighted least
//! squares (section 5.3's random problem: n = 2m, A, d, b uniform in (0, 1)) and the SPD solve
//! (C symmetric with entries uniform in (−1, 1) off the diagonal and m on it), one right-hand
//! side, default options. Prints `op,m,n,median_ms,min_ms,iterations,backward_error,fallback`
//! (wall times, the median of `--reps` runs after one warm-up, the GPU's clocks brought up
//! before each size as the kernel benchmarks do); `RUST_LOG=symraster=debug` adds the phases
//! of each run.
//!
//!     cargo run --release --example solve_bench -- --ops wls,spd --reps 5 2048,4096

use rand::{Rng, SeedableRng};
use std::time::Instant;
use symraster::{Gpu, Matrix, Solution, SolveOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let mut ops = vec!["wls".to_string(), "spd".to_string()];
    let mut reps = 5;
    let mut sizes = vec![2048, 4096];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ops" => {
                ops = args
                    .next()
                    .ok_or("--ops needs a list")?
                    .split(',')
                    .map(String::from)
                    .collect()
            }
            "--reps" => reps = args.next().ok_or("--reps needs a count")?.parse()?,
            list => {
                sizes = list
                    .split(',')
                    .map(|s| s.trim().parse())
                    .collect::<Result<_, _>>()?
            }
        }
    }
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    println!("# {}", gpu.info().renderer);
    println!("op,m,n,median_ms,min_ms,iterations,backward_error,fallback");
    let options = SolveOptions::default();
    for op in &ops {
        for &m in &sizes {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(m as u64);
            let (n, run): (usize, Box<dyn Fn() -> symraster::Result<Solution>>) = match op.as_str()
            {
                "wls" => {
                    let n = 2 * m;
                    let mut u = || rng.random_range(f64::MIN_POSITIVE..1.0);
                    let a = Matrix::from_fn(m, n, |_, _| u());
                    let d: Vec<f64> = (0..n).map(|_| u()).collect();
                    let b: Vec<f64> = (0..n).map(|_| u()).collect();
                    let gpu = &gpu;
                    let options = &options;
                    (n, Box::new(move || gpu.least_squares(&a, &d, &b, *options)))
                }
                "spd" => {
                    let mut c = Matrix::from_fn(m, m, |_, _| rng.random_range(-1.0..1.0));
                    for i in 0..m {
                        for j in 0..i {
                            c[(j, i)] = c[(i, j)];
                        }
                        c[(i, i)] = m as f64;
                    }
                    let b: Vec<f64> = (0..m).map(|_| rng.random_range(0.0..1.0)).collect();
                    let gpu = &gpu;
                    let options = &options;
                    (m, Box::new(move || gpu.spd_solve(&c, &b, *options)))
                }
                "solve" => {
                    // One solve with a factor kept on the GPU (what each refinement step and
                    // each of the condition estimate's solves costs), C as for "spd".
                    let mut c = Matrix::from_fn(m, m, |_, _| rng.random_range(-1.0f32..1.0));
                    for i in 0..m {
                        c[(i, i)] = m as f32;
                    }
                    let l = gpu.cholesky(&c, symraster::Options::default())?;
                    let b: Vec<f32> = (0..m).map(|_| rng.random_range(0.0..1.0)).collect();
                    l.solve(&b)?;
                    {
                        use symraster::internal::GpuInternals;
                        gpu.preheat().run(gpu.context());
                    }
                    let mut times = Vec::new();
                    for _ in 0..reps {
                        let t = Instant::now();
                        l.solve(&b)?;
                        times.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    times.sort_by(f64::total_cmp);
                    println!(
                        "solve,{m},{m},{:.3},{:.3},,,",
                        times[times.len() / 2],
                        times[0]
                    );
                    let two = Matrix::from_fn(m, 2, |i, _| b[i]);
                    l.solve_many(&two)?;
                    let mut times = Vec::new();
                    for _ in 0..reps {
                        let t = Instant::now();
                        l.solve_many(&two)?;
                        times.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    times.sort_by(f64::total_cmp);
                    println!(
                        "solve_blocked_2rhs,{m},{m},{:.3},{:.3},,,",
                        times[times.len() / 2],
                        times[0]
                    );
                    {
                        use symraster::internal::GpuInternals;
                        let chained = gpu.tiled_kernels()?.chained_solves();
                        eprintln!("# m = {m}: {chained} solves chained so far");
                    }
                    continue;
                }
                other => return Err(format!("unknown op {other} (wls, spd, solve)").into()),
            };
            let mut solution = run()?;
            {
                use symraster::internal::GpuInternals;
                gpu.preheat().run(gpu.context());
            }
            let mut times = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                solution = run()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{op},{m},{n},{:.3},{:.3},{},{:.2e},{}",
                times[times.len() / 2],
                times[0],
                solution.iterations,
                solution.backward_error,
                solution.fallback.is_some()
            );
        }
    }
    Ok(())
}
