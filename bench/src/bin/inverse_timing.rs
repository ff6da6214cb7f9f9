//! GPU timings of every inversion method at the orders given (default 128 256 512), one line
//! each: kind, method, s, block, GPU ms, wall ms, GFLOP/s (standard counts). For the
//! reproduction figure; `cargo run --release --example inverse_timing -- 1024 2048`. The
//! general inverse's panel flags (bench/src/panel_flags.rs: `--pivoting
//! partial,tournament --chunk 128,256 --block 64,128 --update products,rank --step
//! shared,registers,combined,broadcast --split columns,steps,registers --fuse off,on
//! --prefetch off,on`) repeat the general rows per combination (column `panel`; the SPD rows
//! run with the first). `--general`: the
//! general rows only (no SPD, no CPU rows); `--check`: each general row's inverse also formed
//! whole (upload, sweep, download) and its residual ‖I − A·X‖_F estimated (column `residual`);
//! `--rank-variant 16:0:1`: the rank kernel's variant (`RankVariant::parse`) for every row;
//! `--method lu` (or `gje`): the general rows of that method only.

use faer::linalg::solvers::DenseSolveCore;
use std::time::Instant;
use symraster::Gpu;
use symraster::inverse::kernels::rank::RankVariant;
use symraster::inverse::{self, InverseMethod as Method, Inverter, Kind, Storage, bench, check};

use symraster_bench::panel_flags;

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
    env_logger::init();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let general_only = args.iter().any(|a| a == "--general");
    let check = args.iter().any(|a| a == "--check");
    args.retain(|a| a != "--general" && a != "--check");
    // `--rank-variant 16:0:1`: the rank kernel's variant for every row (`RankVariant::parse`).
    let rank_variant = take_value(&mut args, "--rank-variant")?
        .map(|v| {
            RankVariant::parse(&v).ok_or_else(|| {
                anyhow::anyhow!("--rank-variant takes depth_slice:c_first[:prefetch]")
            })
        })
        .transpose()?;
    // `--method lu`: the general rows of one method only.
    let methods = match take_value(&mut args, "--method")?.as_deref() {
        None => vec![Method::Gje, Method::Lu],
        Some("gje") => vec![Method::Gje],
        Some("lu") => vec![Method::Lu],
        Some(m) => anyhow::bail!("--method takes gje or lu, not {m}"),
    };
    let (sizes, panels) = panel_flags::parse(args.into_iter())?;
    let sizes = if sizes.is_empty() {
        vec![128, 256, 512]
    } else {
        sizes
    };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inverters = panels
        .iter()
        .map(|p| {
            let inv = Inverter::new(&gpu)?.with_panel(*p);
            if let Some(v) = rank_variant {
                inv.set_rank_variant(v);
            }
            Ok((inv, panel_flags::label(p)))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    println!("# {}", gpu.info().renderer);
    println!("kind,method,storage,s,block,gpu_ms,wall_ms,gflops,panel,residual");
    for &s in &sizes {
        let general = inverters.iter().flat_map(|(inv, label)| {
            methods
                .iter()
                .map(move |&m| (inv, label.as_str(), Kind::General, m, Storage::Full))
        });
        let (inv0, _) = &inverters[0];
        let spd = [
            (Kind::Spd, Method::Gje, Storage::Full),
            (Kind::Spd, Method::Cholesky, Storage::Full),
            (Kind::Spd, Method::Cholesky, Storage::Rfp),
        ]
        .map(|(k, m, st)| (inv0, "-", k, m, st));
        let spd = spd.into_iter().filter(|_| !general_only);
        for (inv, label, kind, method, storage) in general.chain(spd) {
            // Medians of 5 (3 past 4096) after a warm-up, as the torch baseline's medians of 5:
            // the first timed runs of a process on the H200 ran up to 1.2x slower.
            let reps = if s <= 4096 { 5 } else { 3 };
            let t = bench::time_inverse_in(inv, kind, method, storage, s, None, reps)?;
            let residual = if check && kind == Kind::General {
                let a = bench::test_matrix(kind, s);
                match inverse::invert(inv, &a, kind, method) {
                    Ok(x) => format!("{:.3e}", check::residual_estimate(&a, &x)),
                    Err(e) => format!("failed: {}", e.to_string().replace(',', ";")),
                }
            } else {
                "-".into()
            };
            println!(
                "{},{},{},{},{},{:.4},{:.3},{:.3},{label},{residual}",
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
        for kind in [Kind::General, Kind::Spd]
            .into_iter()
            .filter(|_| !general_only)
        {
            let ms = faer_ms(kind, s);
            println!(
                "{},faer-cpu,-,{},-,-,{:.3},{:.3},-,-",
                kind.name(),
                s,
                ms,
                kind.flops(s) / (ms * 1e6)
            );
        }
    }
    Ok(())
}

/// Removes `flag` and the value after it from `args`, returning the value.
fn take_value(args: &mut Vec<String>, flag: &str) -> anyhow::Result<Option<String>> {
    let Some(i) = args.iter().position(|a| a == flag) else {
        return Ok(None);
    };
    anyhow::ensure!(i + 1 < args.len(), "{flag} needs a value");
    let value = args.remove(i + 1);
    args.remove(i);
    Ok(Some(value))
}
