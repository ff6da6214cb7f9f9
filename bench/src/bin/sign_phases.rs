//! Where the sign function's and the Lyapunov solver's time goes (issue 26): wall times of
//! their phases at the orders given (default 256), each after a warm-up at the same order —
//! the f32 Newton iteration on the device (newton::iterate, with and without keeping the
//! inverses), one f32 Gauss-Jordan and one LU inverse, the polish (f64 and f32 corrections),
//! the commutation test, one f64 product, one Lyapunov residual, and whole Lyapunov and sign
//! calls (with the kept squares released before each: `_fresh`, the allocations' cost;
//! `_perpass`: the Newton iteration's three read-backs per step, NewtonSync::PerPass). CSV `phase,s,ms,detail` on stdout.
//! `cargo run --release --example sign_phases -- 1024 4096`; the general inverse's panel
//! flags (bench/src/panel_flags.rs: `--pivoting partial,tournament --chunk 128,256
//! --block 64,128`) repeat the Newton and inverse phases per combination (detail: the panel),
//! the rest runs with the first.

use std::time::Instant;
use symraster::inverse::kernels::double::{DoubleWork, PolishCorrection};
use symraster::inverse::{self, InverseMethod, Inverter, Kind, bench, newton};
use symraster::{Gpu, Matrix};

use symraster_bench::panel_flags;

/// The wall time of `f` in ms after `f` once (warm-up), finishing the GPU's work both times.
fn timed<T>(inv: &Inverter, mut f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(f64, T)> {
    let t = Instant::now();
    f()?;
    inv.context().finish();
    eprintln!("warm-up {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let out = f()?;
    inv.context().finish();
    Ok((t.elapsed().as_secs_f64() * 1e3, out))
}

fn main() -> anyhow::Result<()> {
    env_logger::init();
    let (sizes, panels) = panel_flags::parse(std::env::args().skip(1))?;
    let sizes = if sizes.is_empty() { vec![256] } else { sizes };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    println!("# {}", gpu.info().renderer);
    println!("phase,s,ms,detail");
    for &s in &sizes {
        let a = bench::stable_test_matrix(s);
        let scale = inverse::sign::power_of_two_scale(&a);
        let a = a.map(|v| v * scale);
        let mut first = None;
        for panel in &panels {
            let inv = Inverter::new(&gpu)?.with_panel(*panel);
            let label = panel_flags::label(panel);
            let (ms, run) = timed(&inv, || Ok(newton::iterate(&inv, &a, 20, true, false)?))?;
            println!(
                "newton_iterate,{s},{ms:.2},{} iterations; panel {label}",
                run.iterations
            );
            let x = run.x.download()?.to_f64();
            // The earlier choice: three read-backs per step (NewtonSync::PerPass).
            inv.set_newton_sync(inverse::kernels::NewtonSync::PerPass);
            let (ms, run) = timed(&inv, || Ok(newton::iterate(&inv, &a, 20, true, false)?))?;
            inv.set_newton_sync(inverse::kernels::NewtonSync::Once);
            println!(
                "newton_iterate_perpass,{s},{ms:.2},{} iterations; panel {label}",
                run.iterations
            );
            drop(run);
            let (ms, run) = timed(&inv, || Ok(newton::iterate(&inv, &a, 20, true, true)?))?;
            println!(
                "newton_iterate_keep,{s},{ms:.2},{} iterations; panel {label}",
                run.iterations
            );
            drop(run);
            let a32 = a.to_f32();
            for method in [InverseMethod::Gje, InverseMethod::Lu] {
                let (ms, _) = timed(&inv, || {
                    Ok(inverse::invert(&inv, &a32, Kind::General, method)?)
                })?;
                println!(
                    "invert_{},{s},{ms:.2},host in and out; panel {label}",
                    method.name()
                );
            }
            first.get_or_insert((inv, x));
        }
        let (inv, x) = first.expect("at least one panel setting");
        let mut work = DoubleWork::new(&inv, s)?;
        let mut sm = None;
        for (name, correction) in [
            ("polish_f64_correction", PolishCorrection::Double),
            ("polish", PolishCorrection::Single),
        ] {
            let (ms, (m, steps, r)) = timed(&inv, || Ok(work.polish(&inv, &x, 6, correction)?))?;
            println!("{name},{s},{ms:.2},{steps} steps; residual {r:.1e}");
            sm = Some(m);
        }
        let sm = sm.expect("two polishes");
        let (ms, c) = timed(&inv, || Ok(work.commutation(&inv, &a, &sm)?))?;
        println!("commutation,{s},{ms:.2},{c:.1e}");
        let (ms, _) = timed(&inv, || {
            let p = inverse::kernels::double::DoubleProduct::new(
                work.t.op(false),
                work.m.op(false),
                work.x.op(false),
            );
            Ok(inv.dgemm(p, false)?)
        })?;
        println!(
            "dgemm,{s},{ms:.2},{:.2} TFLOP/s",
            2.0 * (s as f64).powi(3) / ms / 1e9
        );
        let (ms, _) = timed(&inv, || {
            let p = inverse::kernels::double::DoubleProduct::new(
                work.t.op(false),
                work.m.op(false),
                work.x.op(true),
            );
            Ok(inv.dgemm(p, false)?)
        })?;
        println!(
            "dgemm_bt,{s},{ms:.2},{:.2} TFLOP/s",
            2.0 * (s as f64).powi(3) / ms / 1e9
        );
        let q = Matrix::from_fn(s, s, |i, j| if i == j { 1.0 } else { 0.0 });
        work.m.write(&a)?;
        work.r.write(&q)?;
        let (ms, _) = timed(&inv, || Ok(work.lyapunov_residual(&inv, &x)?))?;
        println!("lyapunov_residual,{s},{ms:.2},2 dgemm + up/down");
        let (ms, l) = timed(&inv, || {
            Ok(inverse::solve_continuous_lyapunov(&inv, &a, &q, 2)?)
        })?;
        println!("lyapunov_total,{s},{ms:.2},{} residuals", l.residuals.len());
        let (ms, _) = timed(&inv, || {
            inv.release_kept_squares();
            Ok(inverse::solve_continuous_lyapunov(&inv, &a, &q, 2)?)
        })?;
        println!("lyapunov_total_fresh,{s},{ms:.2},squares allocated in the call");
        inv.set_newton_sync(inverse::kernels::NewtonSync::PerPass);
        let (ms, _) = timed(&inv, || {
            Ok(inverse::solve_continuous_lyapunov(&inv, &a, &q, 2)?)
        })?;
        inv.set_newton_sync(inverse::kernels::NewtonSync::Once);
        println!("lyapunov_total_perpass,{s},{ms:.2},three read-backs per Newton step");
        for (name, correction) in [
            ("sign_total_f64_correction", PolishCorrection::Double),
            ("sign_total", PolishCorrection::Single),
        ] {
            let options = inverse::SignOptions {
                refine_inverses: false,
                polish_correction: correction,
                ..Default::default()
            };
            let (ms, _) = timed(&inv, || Ok(inverse::sign(&inv, &a, options)?))?;
            println!("{name},{s},{ms:.2},f32 iteration");
        }
    }
    Ok(())
}
