//! Wall times of the sign function and the Lyapunov solver at the orders given (default 64
//! 256): a stable nonsymmetric A (−(shifted SPD) plus a skew part), Q = I; one line each with
//! the Newton iterations and the accuracy reached. Each is the median of 3 calls after
//! warm-up calls at the same order (kernels compile on first use, and an idle H200 runs its
//! first ~0.4 s of work at its idle clock: the first timed call of a process ran up to 3.7x
//! slower), as the vendor baseline times torch (median of 5). `cargo run --release --example sign_timing
//! -- 1024 2048`.

use std::time::Instant;
use symraster::inverse::kernels::NewtonSync;
use symraster::inverse::{self, Handover, Inverter, PolishCorrection, SignOptions, bench};
use symraster::{Gpu, Matrix};

/// Timed calls per order and operation (the median is reported).
const RUNS: usize = 3;

/// Seconds of warm-up calls before the timed ones (at least one call).
const WARM_UP_S: f64 = 0.5;

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let sizes = symraster_bench::sizes_or(&[64, 256])?;
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = Inverter::new(&gpu)?;
    println!("# {}", gpu.info().renderer);
    println!("what,s,iterations,wall_ms,accuracy");
    for &s in &sizes {
        let a = bench::stable_test_matrix(s);
        // The default (hand-over on GPUs to f32 Newton-Schulz steps and then the polish, f32
        // polish correction, squares kept between calls), then the earlier choices:
        // `sign_newton` (Newton to convergence, no hand-over), `sign_f64polish` (the hand-over
        // straight to the f64 polish), `sign_f64corr` (that with the f64 correction),
        // `lyap_fresh` (squares allocated per call), `sign_perpass` and `lyap_perpass` (three
        // read-backs per Newton step, NewtonSync::PerPass); `sign_refined` is the iteration
        // with each inverse refined in f64 (`refine_inverses`, the library's default).
        let handover = Handover::Auto;
        for (what, correction, sync, handover, schulz_in_f32, refine_inverses) in [
            (
                "sign",
                PolishCorrection::Single,
                NewtonSync::Once,
                handover,
                true,
                false,
            ),
            (
                "sign_newton",
                PolishCorrection::Single,
                NewtonSync::Once,
                Handover::Off,
                true,
                false,
            ),
            (
                "sign_f64polish",
                PolishCorrection::Single,
                NewtonSync::Once,
                handover,
                false,
                false,
            ),
            (
                "sign_f64corr",
                PolishCorrection::Double,
                NewtonSync::Once,
                handover,
                false,
                false,
            ),
            (
                "sign_perpass",
                PolishCorrection::Single,
                NewtonSync::PerPass,
                handover,
                true,
                false,
            ),
            (
                "sign_refined",
                PolishCorrection::Single,
                NewtonSync::Once,
                handover,
                true,
                true,
            ),
        ] {
            inv.set_newton_sync(sync);
            let options = SignOptions {
                refine_inverses,
                polish_correction: correction,
                handover,
                schulz_in_f32,
                ..SignOptions::default()
            };
            // Warm-up: at least one call and half a second of work. An idle H200 runs at its idle
            // clock (345 MHz) for about the first 0.4 s of work (nvidia-smi at 50 ms), which
            // made the first timed calls of a process up to 3.7x slower.
            let warm = Instant::now();
            while {
                inverse::sign(&inv, &a, options)?;
                warm.elapsed().as_secs_f64() < WARM_UP_S
            } {}
            let mut times = Vec::new();
            let mut sign = None;
            for _ in 0..RUNS {
                let t = Instant::now();
                sign = Some(inverse::sign(&inv, &a, options)?);
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let (sign, ms) = (sign.expect("RUNS > 0"), median(&mut times));
            // sign(A) = −I for stable A: the distance from it.
            let off = sign
                .s
                .as_slice()
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let want = if k / s == k % s { -1.0 } else { 0.0 };
                    (v - want).powi(2)
                })
                .sum::<f64>()
                .sqrt();
            println!("{what},{s},{},{ms:.1},{off:.2e}", sign.iterations);
        }
        let q = Matrix::from_fn(s, s, |i, j| if i == j { 1.0 } else { 0.0 });
        inverse::solve_continuous_lyapunov(&inv, &a, &q, 2)?;
        for (what, fresh, sync) in [
            ("lyap", false, NewtonSync::Once),
            ("lyap_fresh", true, NewtonSync::Once),
            ("lyap_perpass", false, NewtonSync::PerPass),
        ] {
            inv.set_newton_sync(sync);
            let mut times = Vec::new();
            let mut x = None;
            for _ in 0..RUNS {
                if fresh {
                    inv.release_kept_squares();
                }
                let t = Instant::now();
                x = Some(inverse::solve_continuous_lyapunov(&inv, &a, &q, 2)?);
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let (x, ms) = (x.expect("RUNS > 0"), median(&mut times));
            println!(
                "{what},{s},{},{ms:.1},{:.2e}",
                x.iterations,
                x.residuals.last().copied().unwrap_or(f64::NAN)
            );
        }
        inv.set_newton_sync(NewtonSync::default());
    }
    Ok(())
}
