//! Benchmark of the batched weighted least squares (issue 28): B problems of n unknowns and
//! 2n observations, fused in one dispatch (assembly, factor, both solves, one refinement step
//! with the residual in f64). Two times per size, the median of --runs after a warm-up:
//! `batched_wls`, GPU time (GL_TIME_ELAPSED) of the launch with the data already on the GPU,
//! and `batched_wls_with_upload`, wall time from the upload of A, d and b to the end of
//! glFinish (no read-back). CSV on stdout: op,m,n,ms (m: the order n, n: the batch size B, as
//! `figures/h200/vendor_parity.csv` puts them). Each size's result is checked against an f64
//! reference on a few problems (stderr).
//!
//! `cargo run --release --example batched_bench -- [--runs R] [--assembly-pass P] [N:B ...]`;
//! default 8:100000 16:100000 32:20000 128:1000 (the sizes); one `--assembly-pass`
//! (below) times that pass instead of the plan's own, and one `--residual` that residual.
//!
//! `--profile T,...` times each job alone per group shape instead: T invocations per problem
//! (0: the plan's own), with `--problems-per-group P,...` (0: the plan's own) and
//! `--staged-loads scalar,vector,default` (the assembly's shared loads) and `--solve-block
//! SB,...` (rows per barrier of the triangular solves; 0: the plan's own) and
//! `--assembly-rows single,pair,default` (rows of A·diag(d) in registers) and
//! `--assembly-tiling rows,tiles2,tiles4,default` (pairs of rows, or 2 x 2 / 4 x 4 register
//! tiles of C per invocation) and `--staged-columns KC,...` (observations staged per step; 0:
//! the plan's own) and `--residual restaged,resident,direct,default` (the residual from A
//! restaged out of global memory, A, d and b kept in shared memory from the assembly, or the
//! rows' sums read from global memory unstaged, or `normal`: g − C·x from the separate
//! assembly's f64 C and g) and `--solves substitution,inverse,default`
//! (the triangular solves by substitution, or as products with L⁻¹ formed by the factor) and
//! `--assembly-pass fused,separate,TxL,staged,default` (C and g formed in the job's launch, or
//! in a launch of their own first: `separate` with the default tiles, `TxL` with T x T tiles
//! and L invocations per tile, `staged` a work group per problem with A staged), every combination the device runs; `--fused-only` times only the fused least squares with one refinement
//! step (what `batched_wls` times). Each shape's least-squares answers are checked (a wrong
//! one is marked WRONG in its row).

use symraster::batched::device::{Inputs, Poison, Resident};
use symraster::batched::gram::GramShape;
use symraster::batched::plan::{
    AssemblyPass, AssemblyRows, AssemblyTiling, Job, Plan, Residual, StagedLoads, TriangularSolves,
};
use symraster::gl::GpuTimer;
use symraster::internal::GpuInternals;
use symraster::timing::median;
use symraster::{BatchOptions, Gpu, problems, reference};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let mut runs = 10;
    let mut sizes = Vec::new();
    let mut profile: Option<Vec<usize>> = None;
    let mut shapes = Shapes {
        problems: vec![0],
        loads: vec![None],
        solve_blocks: vec![0],
        rows: vec![None],
        tilings: vec![None],
        columns: vec![0],
        residuals: vec![None],
        solves: vec![None],
        passes: vec![PassChoice::Default],
        fused_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args.next().ok_or("--runs needs a value")?.parse()?;
        } else if a == "--profile" {
            let list = args
                .next()
                .ok_or("--profile needs invocation counts (0: default)")?;
            profile = Some(
                list.split(',')
                    .map(|t| t.parse())
                    .collect::<std::result::Result<_, _>>()?,
            );
        } else if a == "--problems-per-group" {
            let list = args
                .next()
                .ok_or("--problems-per-group needs counts (0: the plan's own)")?;
            shapes.problems = list
                .split(',')
                .map(|p| p.parse())
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--staged-loads" {
            let list = args
                .next()
                .ok_or("--staged-loads needs scalar, vector or default (comma-separated)")?;
            shapes.loads = list
                .split(',')
                .map(|l| match l {
                    "scalar" => Ok(Some(StagedLoads::Scalar)),
                    "vector" => Ok(Some(StagedLoads::Vector)),
                    "default" => Ok(None),
                    other => Err(format!("--staged-loads: unknown {other}")),
                })
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--solve-block" {
            let list = args
                .next()
                .ok_or("--solve-block needs rows per block (0: the plan's own)")?;
            shapes.solve_blocks = list
                .split(',')
                .map(|p| p.parse())
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--assembly-rows" {
            let list = args
                .next()
                .ok_or("--assembly-rows needs single, pair or default (comma-separated)")?;
            shapes.rows = list
                .split(',')
                .map(|l| match l {
                    "single" => Ok(Some(AssemblyRows::Single)),
                    "pair" => Ok(Some(AssemblyRows::Pair)),
                    "default" => Ok(None),
                    other => Err(format!("--assembly-rows: unknown {other}")),
                })
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--assembly-tiling" {
            let list = args.next().ok_or(
                "--assembly-tiling needs rows, tiles2, tiles4 or default (comma-separated)",
            )?;
            shapes.tilings = list
                .split(',')
                .map(|l| match l {
                    "rows" => Ok(Some(AssemblyTiling::Rows)),
                    "tiles2" => Ok(Some(AssemblyTiling::Tiles2)),
                    "tiles4" => Ok(Some(AssemblyTiling::Tiles4)),
                    "default" => Ok(None),
                    other => Err(format!("--assembly-tiling: unknown {other}")),
                })
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--staged-columns" {
            let list = args
                .next()
                .ok_or("--staged-columns needs counts (0: the plan's own)")?;
            shapes.columns = list
                .split(',')
                .map(|p| p.parse())
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--residual" {
            let list = args.next().ok_or(
                "--residual needs restaged, resident, direct, normal or default (comma-separated)",
            )?;
            shapes.residuals = list
                .split(',')
                .map(|r| match r {
                    "restaged" => Ok(Some(Residual::Restaged)),
                    "resident" => Ok(Some(Residual::Resident)),
                    "direct" => Ok(Some(Residual::Direct)),
                    "normal" => Ok(Some(Residual::Normal)),
                    "default" => Ok(None),
                    other => Err(format!("--residual: unknown {other}")),
                })
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--solves" {
            let list = args
                .next()
                .ok_or("--solves needs substitution, inverse or default (comma-separated)")?;
            shapes.solves = list
                .split(',')
                .map(|r| match r {
                    "substitution" => Ok(Some(TriangularSolves::Substitution)),
                    "inverse" => Ok(Some(TriangularSolves::Inverse)),
                    "default" => Ok(None),
                    other => Err(format!("--solves: unknown {other}")),
                })
                .collect::<std::result::Result<_, _>>()?;
        } else if a == "--assembly-pass" {
            let list = args
                .next()
                .ok_or("--assembly-pass needs fused, separate, TxL or default (comma-separated)")?;
            shapes.passes = list
                .split(',')
                .map(|r| -> Result<PassChoice> {
                    Ok(match r {
                        "fused" => PassChoice::Fused,
                        "separate" => PassChoice::Separate(None),
                        "staged" => PassChoice::Separate(Some(GramShape::STAGED)),
                        "default" => PassChoice::Default,
                        other => {
                            let (t, l) = other
                                .split_once('x')
                                .ok_or(format!("--assembly-pass: unknown {other}"))?;
                            PassChoice::Separate(Some(GramShape::new(t.parse()?, l.parse()?)?))
                        }
                    })
                })
                .collect::<Result<_>>()?;
        } else if a == "--fused-only" {
            shapes.fused_only = true;
        } else {
            let (n, b) = a.split_once(':').ok_or("sizes are N:B")?;
            sizes.push((n.parse::<usize>()?, b.parse::<usize>()?));
        }
    }
    if sizes.is_empty() {
        sizes = vec![(8, 100_000), (16, 100_000), (32, 20_000), (128, 1000)];
    }
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let kernels = gpu.batched().internal_kernels(&BatchOptions::default())?;
    let ctx = gpu.context().clone();
    eprintln!(
        "# {} | {} | {:?}",
        gpu.info().renderer,
        gpu.info().version,
        kernels.limits()
    );
    if let Some(threads) = profile {
        return profile_jobs(&gpu, &kernels, &sizes, &threads, &shapes, runs);
    }
    println!("op,m,n,ms");
    for (n, count) in sizes {
        let k = 2 * n;
        let (a, d, b) = observations(n, count);
        let mut plan = Plan::new(Job::LeastSquares, n, k, 1, kernels.limits())?;
        // One --assembly-pass names the pass these rows take (else the plan's own): `fused`
        // the fused kernel's own plan (Plan::fused), the others on the plan's shape.
        match shapes.passes[..] {
            [PassChoice::Fused] => {
                plan = Plan::fused(Job::LeastSquares, n, k, 1, kernels.limits())?
            }
            [choice] => {
                if let Some(pass) = choice.at(n) {
                    plan = plan.with_assembly_pass(pass, kernels.limits())?;
                }
            }
            _ => {}
        }
        // And one --residual the residual they take.
        if let [Some(residual)] = shapes.residuals[..] {
            plan = plan.with_residual(residual, kernels.limits())?;
        }
        if plan.chunk < count {
            eprintln!(
                "# n {n} B {count}: one buffer takes {} problems here; skipped",
                plan.chunk
            );
            continue;
        }
        let inputs = Inputs {
            a: Some(&a),
            d: Some(&d),
            b: Some(&b),
            ..Inputs::default()
        };
        // Data on the GPU: the launch alone.
        let resident = Resident::upload(&kernels, &plan, &inputs, 0..count, Poison::No)?;
        resident.launch()?;
        let out = resident.read()?;
        check(&a, &d, &b, n, count, &out)?;
        gpu.preheat().run(&ctx);
        let timer = GpuTimer::new(&ctx)?;
        let mut gpu_ms = Vec::new();
        for _ in 0..runs {
            let start = std::time::Instant::now();
            timer.begin();
            resident.launch()?;
            timer.end();
            ctx.finish();
            let wall = start.elapsed().as_secs_f64() * 1e3;
            // A software renderer's timer reads (about) 0: its wall time is its GPU time.
            let gpu_time = timer.elapsed()?.as_secs_f64() * 1e3;
            gpu_ms.push(if gpu.info().software { wall } else { gpu_time });
        }
        drop(resident);
        // The upload counted: new buffers filled from host memory, the launch, glFinish.
        let mut wall_ms = Vec::new();
        for run in 0..=runs {
            ctx.finish();
            let start = std::time::Instant::now();
            let r = Resident::upload(&kernels, &plan, &inputs, 0..count, Poison::No)?;
            r.launch()?;
            ctx.finish();
            if run > 0 {
                wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        println!("batched_wls,{n},{count},{:.4}", median(&gpu_ms));
        println!(
            "batched_wls_with_upload,{n},{count},{:.4}",
            median(&wall_ms)
        );
    }
    Ok(())
}

/// Every INFO 0, and the first and last problems' x against the f64 normal equations
/// (stderr).
fn check(
    a: &[f32],
    d: &[f32],
    b: &[f32],
    n: usize,
    count: usize,
    out: &symraster::batched::device::Outputs,
) -> Result<()> {
    let k = 2 * n;
    let failed = out.info.iter().filter(|&&s| s != 0).count();
    let mut worst = 0.0f64;
    // The first and the last problems (the last group's slots where it is not full).
    let mut checked: Vec<usize> = (0..count.min(4))
        .chain(count.saturating_sub(4)..count)
        .collect();
    checked.dedup();
    for p in checked {
        let am = symraster::Matrix::from_fn(n, k, |i, j| f64::from(a[p * n * k + i * k + j]));
        let dp: Vec<f64> = d[p * k..(p + 1) * k].iter().map(|&v| v.into()).collect();
        let c = reference::assemble(&am, &dp);
        let g: Vec<f64> = (0..n)
            .map(|i| {
                (0..k)
                    .map(|j| am[(i, j)] * dp[j] * f64::from(b[p * k + j]))
                    .sum()
            })
            .collect();
        let x = symraster::least_squares::solve_with_factor(&reference::cholesky(&c)?, &g);
        let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (got, want) in out.x[p * n..(p + 1) * n].iter().zip(&x) {
            worst = worst.max((got - want).abs() / scale);
        }
    }
    eprintln!(
        "# n {n} B {count}: {failed} problems failed; relative error {worst:.2e} on the first \
         and last 4"
    );
    if failed > 0 || worst.is_nan() || worst >= 1e-6 {
        return Err(format!("n {n}: wrong results ({failed} failed, error {worst:.2e})").into());
    }
    Ok(())
}

/// The group shapes `--profile` compares (beside its invocation counts).
struct Shapes {
    /// Problems per work group (0: the plan's own).
    problems: Vec<usize>,
    /// The assembly's staged loads (None: the plan's own).
    loads: Vec<Option<StagedLoads>>,
    /// Rows per block of the triangular solves (0: the plan's own).
    solve_blocks: Vec<usize>,
    /// Rows of A·diag(d) per invocation in the assembly (None: the plan's own).
    rows: Vec<Option<AssemblyRows>>,
    /// The assembly's tiling (None: the plan's own).
    tilings: Vec<Option<AssemblyTiling>>,
    /// Observations staged per step (0: the plan's own).
    columns: Vec<usize>,
    /// Where the residual reads A (None: the plan's own).
    residuals: Vec<Option<Residual>>,
    /// How the solves apply the factor (None: the plan's own).
    solves: Vec<Option<TriangularSolves>>,
    /// Where C and g are formed.
    passes: Vec<PassChoice>,
    /// Only the fused least squares with one refinement step.
    fused_only: bool,
}

/// Where `--assembly-pass` forms C and g.
#[derive(Clone, Copy, Debug)]
enum PassChoice {
    /// The plan's own.
    Default,
    /// In the job's launch.
    Fused,
    /// In a launch of their own, with this shape (None: the default for the order).
    Separate(Option<GramShape>),
}

impl PassChoice {
    /// The pass at order n (None: the plan's own).
    fn at(self, n: usize) -> Option<AssemblyPass> {
        match self {
            PassChoice::Default => None,
            PassChoice::Fused => Some(AssemblyPass::Fused),
            PassChoice::Separate(shape) => Some(AssemblyPass::Separate(
                shape.unwrap_or_else(|| GramShape::default_for(n)),
            )),
        }
    }
}

/// The pass's name in the profile's rows.
fn pass_name(plan: &Plan) -> String {
    match plan.gram_shape() {
        Some(s) if s.staged => "separate-staged".into(),
        Some(s) => format!("separate-{}x{}", s.tile, s.lanes),
        None => "fused".into(),
    }
}

/// `plan` with `threads` invocations per problem, `problems` per group and `loads` (0 and
/// None: the plan's own); None where the device does not run that shape.
fn shaped(
    plan: Plan,
    threads: usize,
    problems: usize,
    loads: Option<StagedLoads>,
    limits: &symraster::gl::ComputeLimits,
) -> Option<Plan> {
    let mut plan = plan;
    if let Some(l) = loads {
        plan = plan.with_staged_loads(l, limits).ok()?;
    }
    let problems = if problems == 0 {
        plan.problems_per_group
    } else {
        problems
    };
    if threads != 0 {
        plan = plan.with_problems_per_group(1, limits).ok()?;
        plan = plan.with_threads(threads, limits).ok()?;
    }
    plan.with_problems_per_group(problems, limits).ok()
}

/// GPU time of each job alone (and the solves with 0 to 2 refinement steps) at each size and
/// group shape, data on the GPU: where the fused solve's time goes. CSV
/// `job,n,count,threads,problems_per_group,staged_loads,assembly_rows,solve_block,refine,ms,
/// assembly_tiling,staged_columns,residual,solves,assembly_pass[,failures]`.
fn profile_jobs(
    gpu: &Gpu,
    kernels: &symraster::batched::kernels::BatchedKernels,
    sizes: &[(usize, usize)],
    threads: &[usize],
    shapes: &Shapes,
    runs: usize,
) -> Result<()> {
    let ctx = gpu.context().clone();
    let timer = GpuTimer::new(&ctx)?;
    let limits = kernels.limits();
    println!(
        "job,n,count,threads,problems_per_group,staged_loads,assembly_rows,solve_block,refine,ms,\
         assembly_tiling,staged_columns,residual,solves,assembly_pass"
    );
    for &(n, count) in sizes {
        let k = 2 * n;
        let (a, d, b) = observations(n, count);
        // C from the batched assembly itself (lower triangles; the upper is never read).
        let plan = Plan::new(Job::Assemble, n, k, 0, limits)?;
        let inputs = Inputs {
            a: Some(&a),
            d: Some(&d),
            ..Inputs::default()
        };
        let c = symraster::batched::device::run(kernels, &plan, &inputs, count, Poison::No)?.matrix;
        let bn = &b[..count * n];
        let all_jobs = [
            (Job::Assemble, 0),
            (Job::Cholesky, 0),
            (Job::SpdSolve, 0),
            (Job::SpdSolve, 1),
            (Job::LeastSquares, 0),
            (Job::LeastSquares, 1),
            (Job::LeastSquares, 2),
        ];
        let fused = [(Job::LeastSquares, 1)];
        let jobs: &[(Job, usize)] = if shapes.fused_only { &fused } else { &all_jobs };
        let mut seen = std::collections::HashSet::new();
        for &t in threads {
            for &problems in &shapes.problems {
                let variants = shapes.loads.iter().flat_map(|l| {
                    shapes.solve_blocks.iter().flat_map(move |b| {
                        shapes.rows.iter().flat_map(move |r| {
                            shapes.tilings.iter().flat_map(move |tl| {
                                shapes.columns.iter().flat_map(move |c| {
                                    shapes
                                        .residuals
                                        .iter()
                                        .map(move |re| (*l, *b, *r, *tl, *c, *re))
                                })
                            })
                        })
                    })
                });
                for (loads, sb, rows, tiling, columns, residual) in variants {
                    let with_solves = jobs.iter().flat_map(|j| {
                        shapes.solves.iter().flat_map(move |s| {
                            shapes.passes.iter().map(move |pass| (*j, *s, *pass))
                        })
                    });
                    for ((job, refine), solves, pass) in with_solves {
                        let kk = if job.reads_observations() { k } else { 0 };
                        let base = Plan::new(job, n, kk, refine, limits)?;
                        let Some(mut plan) = shaped(base, t, problems, loads, limits) else {
                            continue;
                        };
                        if let Some(r) = rows {
                            plan = plan.with_assembly_rows(r);
                        }
                        if sb != 0 {
                            let Ok(p) = plan.with_solve_block(sb) else {
                                continue;
                            };
                            plan = p;
                        }
                        if columns != 0 {
                            let Ok(p) = plan.with_staged_columns(columns, limits) else {
                                continue;
                            };
                            plan = p;
                        }
                        if let Some(tl) = tiling {
                            let Ok(p) = plan.with_assembly_tiling(tl) else {
                                continue;
                            };
                            plan = p;
                        }
                        if let Some(pass) = pass.at(n).filter(|_| job.reads_observations()) {
                            let Ok(p) = plan.with_assembly_pass(pass, limits) else {
                                continue;
                            };
                            plan = p;
                        }
                        if let Some(re) = residual {
                            let Ok(p) = plan.with_residual(re, limits) else {
                                continue;
                            };
                            plan = p;
                        }
                        if let Some(s) = solves.filter(|_| job.solves()) {
                            let Ok(p) = plan.with_solves(s, limits) else {
                                continue;
                            };
                            plan = p;
                        }
                        // Each program once (loads matter only to the jobs that stage A, the
                        // solve's blocks only to the solves).
                        let key = (job, plan.defines(), plan.gram_defines());
                        if plan.chunk < count || !seen.insert(key) {
                            continue;
                        }
                        let inputs = Inputs {
                            a: Some(&a),
                            d: Some(&d),
                            b: Some(if job == Job::SpdSolve { bn } else { &b }),
                            c: Some(&c),
                            ..Inputs::default()
                        };
                        let resident =
                            Resident::upload(kernels, &plan, &inputs, 0..count, Poison::No)?;
                        resident.launch()?;
                        let out = resident.read()?;
                        let failed = out.info.iter().filter(|&&s| s != 0).count();
                        // Every shape's answers checked (a shape that is wrong says so).
                        let wrong = job == Job::LeastSquares
                            && refine > 0
                            && check(&a, &d, &b, n, count, &out).is_err();
                        let ms_ = std::time::Duration::from_millis;
                        let limits = symraster::timing::PreheatLimits {
                            min: ms_(150),
                            settle: ms_(50),
                            ..Default::default()
                        };
                        gpu.preheat().run_with(&ctx, limits);
                        let mut ms = Vec::new();
                        for _ in 0..runs {
                            timer.begin();
                            resident.launch()?;
                            timer.end();
                            ctx.finish();
                            ms.push(timer.elapsed()?.as_secs_f64() * 1e3);
                        }
                        println!(
                            "{},{n},{count},{},{},{:?},{:?},{},{refine},{:.4},{:?},{},{:?},{:?},{}{}",
                            job.name().replace(' ', "_"),
                            plan.threads,
                            plan.problems_per_group,
                            plan.staged_loads,
                            plan.assembly_rows,
                            plan.solve_block,
                            median(&ms),
                            plan.assembly_tiling,
                            plan.staged_columns,
                            plan.residual,
                            plan.solves,
                            pass_name(&plan),
                            if wrong {
                                format!(",WRONG ({failed} failed)")
                            } else if failed > 0 {
                                format!(",{failed} failed")
                            } else {
                                String::new()
                            }
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// A (entries in [−1, 1)), d (in [0.5, 1.5)) and b of `count` problems of n unknowns and 2n
/// observations, seeded by n.
fn observations(n: usize, count: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let k = 2 * n;
    let mut rng = problems::rng(n as u64);
    let a = problems::uniform_vector(&mut rng, count * n * k)
        .iter()
        .map(|v| 2.0 * v - 1.0)
        .collect();
    let d = problems::uniform_vector(&mut rng, count * k)
        .iter()
        .map(|v| v + 0.5)
        .collect();
    let b = problems::uniform_vector(&mut rng, count * k);
    (a, d, b)
}
