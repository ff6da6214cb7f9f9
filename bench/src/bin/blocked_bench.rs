//! The blocked method against the faithful one, side by side in one run: GPU time
//! (GL_TIME_ELAPSED around the passes, no upload or readback, as the paper's Figs 8-9) of
//! assembly (m x n, n = 2m) and Cholesky (m x m), printed as CSV.
//!
//! `cargo run --release --example blocked_bench -- [sizes] [repeats] [methods] [ops]`, e.g.
//! `-- 256,512,1024 3 faithful,blocked` (the default); `blocked` is the default blocking
//! (4 x 4 blocks over four render targets), `blocked2` and `blocked4` name 2 x 2 and 4 x 4; a
//! `-32` suffix factors by block columns of 32 instead of 16 (`blocked4-32`); a `-packed`
//! suffix, last, stores C and L in the rectangular packed format (`blocked,blocked-packed`
//! compares the blocked method's two formats); `ops` is `assembly,cholesky` (the default) or
//! either alone. Each time is the median of `repeats` runs after one warm-up, methods
//! alternating within a repeat. Columns: method, op, format,
//! m, n, ms (GPU), wall_ms (passes to glFinish), gflops (m²n for assembly, m³/3 for
//! Cholesky, over the GPU time), rel_error against the f64 reference (faer on every core),
//! min_ms (the fastest repeat's GPU time, less sensitive than the median to other work on a
//! shared machine), blocking (2x2 or 4x4 for the blocked method), block_column (16 or 32 for
//! the blocked method). `BREAKDOWN=1` then prints GPU ms per kernel for each blocked method
//! listed, stepping pass by pass. The SPD matrix factored is
//! `problems::well_conditioned_spd` up to m = 1024, `diagonally_dominant_spd` beyond.

use symraster::baseline;
use symraster::draw::execution::Execution;
use symraster::gl::{GpuTimer, TexelFormat};
use symraster::internal::GpuInternals;
use symraster::layout::BlockLayout;
use symraster::timing::{Preheat, median, time_finish};
use symraster::{BlockColumn, Blocking, Format, Gpu, Method, Options, problems, relative_error};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args
        .first()
        .map_or("256,512,1024", String::as_str)
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let repeats: usize = args.get(1).map_or(Ok(3), |s| s.parse())?;
    let methods: Vec<(Method, Format, Blocking, BlockColumn)> = args
        .get(2)
        .map_or("faithful,blocked", String::as_str)
        .split(',')
        .map(|name| {
            let (method, format) = match name.strip_suffix("-packed") {
                Some(method) => (method, Format::Packed),
                None => (name, Format::Full),
            };
            let (method, column) = match method.strip_suffix("-32") {
                Some(method) => (method, BlockColumn::ThirtyTwo),
                None => (method, BlockColumn::Sixteen),
            };
            match method {
                "faithful" => Ok((Method::Faithful, format, Blocking::default(), column)),
                "blocked" => Ok((Method::Blocked, format, Blocking::default(), column)),
                "blocked2" => Ok((Method::Blocked, format, Blocking::Two, column)),
                "blocked4" => Ok((Method::Blocked, format, Blocking::Four, column)),
                other => Err(anyhow::anyhow!("unknown method {other}")),
            }
        })
        .collect::<Result<_, _>>()?;
    let ops = args.get(3).map_or("assembly,cholesky", String::as_str);
    let (do_assembly, do_cholesky) = (ops.contains("assembly"), ops.contains("cholesky"));
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    eprintln!("{} | {}", gpu.info().renderer, gpu.info().version);
    println!("method,op,format,m,n,ms,wall_ms,gflops,rel_error,min_ms,blocking,block_column");
    for &m in &sizes {
        let n = 2 * m;
        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        // Beyond m = 1024 the O(m²) diagonally dominant SPD matrix (the O(m³) well-conditioned
        // one would take a minute to make at m = 4096).
        let spd = if !do_cholesky {
            symraster::Matrix::zeros(1, 1)
        } else if m <= 1024 {
            problems::well_conditioned_spd(&mut rng, m)
        } else {
            problems::diagonally_dominant_spd(&mut rng, m)
        };
        let all = baseline::par(0);
        let c_ref = if do_assembly {
            let d64: Vec<f64> = d.iter().map(|&v| f64::from(v)).collect();
            baseline::assemble(&a.to_f64(), &d64, all)
        } else {
            symraster::Matrix::zeros(1, 1)
        };
        let l_ref = if do_cholesky {
            baseline::cholesky(&spd.to_f64(), all)?
        } else {
            symraster::Matrix::zeros(1, 1)
        };
        // times[method][op] in ms: (gpu, wall), and the last result's error.
        let mut times: Vec<[Samples; 2]> = (0..methods.len()).map(|_| Default::default()).collect();
        for repeat in 0..=repeats {
            for (i, &(method, format, blocking, column)) in methods.iter().enumerate() {
                let options = Options::new(format).method(method);
                let blocked = method == Method::Blocked;
                let blocks = BlockLayout::with(m, format, blocking).with_column(column);
                let mut results = [None, None];
                if do_assembly {
                    results[0] = Some(if blocked {
                        let run = gpu.start_blocked_assembly_as(&a, &d, blocks)?;
                        measure(run, gpu.preheat(), |r| r.download_lower(), &c_ref)?
                    } else {
                        let run = gpu.start_assembly(&a, &d, options)?;
                        measure(run, gpu.preheat(), |r| r.download_lower(), &c_ref)?
                    });
                }
                if do_cholesky {
                    results[1] = Some(if blocked {
                        let run = gpu.start_blocked_cholesky_as(&spd, blocks)?;
                        measure(run, gpu.preheat(), |r| r.download_lower(), &l_ref)?
                    } else {
                        let run = gpu.start_cholesky(&spd, options)?;
                        measure(run, gpu.preheat(), |r| r.download_lower(), &l_ref)?
                    });
                }
                if repeat > 0 {
                    for (op, result) in results.into_iter().enumerate() {
                        if let Some((ms, wall, err)) = result {
                            times[i][op].0.push(ms);
                            times[i][op].1.push(wall);
                            times[i][op].2 = err;
                        }
                    }
                }
            }
        }
        if std::env::var_os("BREAKDOWN").is_some() {
            for &(method, format, blocking, column) in &methods {
                if method != Method::Blocked {
                    continue;
                }
                let blocks = BlockLayout::with(m, format, blocking).with_column(column);
                println!("# {format} {blocking} block column {column}");
                if do_assembly {
                    let run = gpu.start_blocked_assembly_as(&a, &d, blocks)?;
                    breakdown(&gpu, run, m)?;
                }
                if do_cholesky {
                    let run = gpu.start_blocked_cholesky_as(&spd, blocks)?;
                    breakdown(&gpu, run, m)?;
                }
            }
        }
        for (i, (method, format, blocking, column)) in methods.iter().enumerate() {
            for (op, name) in ["assembly", "cholesky"].iter().enumerate() {
                let (gpu_ms, wall_ms, err) = &times[i][op];
                if gpu_ms.is_empty() {
                    continue;
                }
                let ms = median(gpu_ms);
                let flops = if op == 0 {
                    (m * m * n) as f64
                } else {
                    (m * m * m) as f64 / 3.0
                };
                let (blocking, column) = if *method == Method::Blocked {
                    (blocking.name().to_string(), column.to_string())
                } else {
                    ("-".to_string(), "-".to_string())
                };
                println!(
                    "{method},{name},{format},{m},{},{ms:.3},{:.3},{:.3},{err:.3e},{:.3},{blocking},{column}",
                    if op == 0 { n } else { m },
                    median(wall_ms),
                    flops / ms * 1e-6,
                    gpu_ms.iter().copied().fold(f64::INFINITY, f64::min)
                );
            }
        }
    }
    Ok(())
}

/// Steps `run` pass by pass, each under a timer query, and prints GPU ms per kernel.
fn breakdown<F: TexelFormat>(gpu: &Gpu, mut run: Execution<'_, F>, m: usize) -> anyhow::Result<()> {
    let mut per_kernel: Vec<(&'static str, f64, usize)> = Vec::new();
    let timer = GpuTimer::new(gpu.context())?;
    gpu.context().finish();
    while run.next_pass().is_some() {
        timer.begin();
        let pass = run.step()?.expect("a pass");
        timer.end();
        let ms = timer.elapsed()?.as_secs_f64() * 1e3;
        match per_kernel
            .iter_mut()
            .find(|(k, ..)| *k == pass.kernel.name())
        {
            Some(entry) => {
                entry.1 += ms;
                entry.2 += 1;
            }
            None => per_kernel.push((pass.kernel.name(), ms, 1)),
        }
    }
    for (kernel, ms, passes) in per_kernel {
        println!("# m={m} {kernel}: {ms:.3} ms in {passes} passes");
    }
    Ok(())
}

/// GPU ms and wall ms of the repeats, and the last relative error.
type Samples = (Vec<f64>, Vec<f64>, f64);

/// Runs the passes of `run` under a timer query; (GPU ms, wall ms, relative error of the
/// downloaded result against `reference`).
fn measure<F: TexelFormat>(
    mut run: Execution<'_, F>,
    heat: &Preheat,
    download: impl Fn(&Execution<'_, F>) -> symraster::Result<symraster::Matrix<f32>>,
    reference: &symraster::Matrix<f64>,
) -> anyhow::Result<(f64, f64, f64)> {
    let t = time_finish(&mut run, heat)?;
    let out = download(&run)?;
    Ok((
        t.gpu.as_secs_f64() * 1e3,
        t.wall.as_secs_f64() * 1e3,
        relative_error(&out, reference),
    ))
}
