//! The methods past the paper in the reproduction: their times beside the faithful curves of
//! Figs 8-9, the throughput figures (GFLOP/s against m for every method, the CPU and the
//! vendor library) and the inversion figure (after Benner et al.).
//!
//! A method contributes a point where the device runs it and the problem fits its storage;
//! the slow ones (the faithful method, the CPU) stop at the caps below so that one run stays
//! within minutes.

use super::figure::{Column, Figure, Key, Label};
use super::{
    Config, Report, VendorRow, cpu_assembly_seconds, cpu_cholesky_seconds, measure_cpu,
    measure_gpu, vendor_time,
};
use faer::linalg::solvers::DenseSolveCore as _;
use symraster::draw::execution::Execution;
use symraster::error::Result;
use symraster::gl::Rgba32F;
use symraster::internal::GpuInternals;
use symraster::inverse::{self, Inverter, Kind};
use symraster::tiled::bench as tiled_bench;
use symraster::{Format, Gpu, Matrix, Method, Options, baseline, problems};

/// The largest m the faithful method is timed at in the throughput figures (assembly,
/// Cholesky): past it a run takes many seconds and the curve's slope is already plain.
const FAITHFUL_MAX: (usize, usize) = (2048, 4096);
/// The largest m the blocked method and the CPU are timed at there.
const BLOCKED_MAX: usize = 4096;
const CPU_MAX: usize = 4096;
/// The largest order the CPU inverts in the inversion figure.
const CPU_INVERSE_MAX: usize = 2048;

/// GPU seconds of the methods past the paper at one point of Fig 8 or 9 (`None` where the
/// device does not run the method or the problem does not fit it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    pub blocked: Option<f64>,
    pub blocked_packed: Option<f64>,
    pub tiled_full: Option<f64>,
    pub tiled_rfp: Option<f64>,
}

/// Whether `method` runs here for an m x m problem with n columns of A in `format`.
fn runs(gpu: &Gpu, method: Method, m: usize, n: usize, format: Format) -> bool {
    gpu.check_problem_size(m, n, Options::new(format).method(method))
        .is_ok()
}

/// The operation a tiled timing measures.
#[derive(Clone, Copy)]
enum Op {
    Assembly,
    Cholesky,
}

/// Tiled GPU seconds (full, RFP) of `op` at order m (n columns of A for assembly); `None`
/// where the problem does not fit the storage buffers. The tiled benchmark times its own
/// random problem.
fn tiled_times(gpu: &Gpu, op: Op, m: usize, n: usize, reps: usize) -> Result<[Option<f64>; 2]> {
    let mut out = [None; 2];
    for (format, slot) in [Format::Full, Format::Packed].into_iter().zip(&mut out) {
        if runs(gpu, Method::Tiled, m, n, format) {
            let k = gpu.tiled_kernels()?;
            let storage = symraster::gpu::storage_of(format);
            let timing = match op {
                Op::Assembly => tiled_bench::time_assembly(&k, m, n, storage, reps)?,
                Op::Cholesky => tiled_bench::time_cholesky(&k, m, storage, reps)?,
            };
            *slot = Some(timing.ms / 1e3);
        }
    }
    Ok(out)
}

/// Appends the rows `op,m,format,ms` of tiled times in seconds (full, RFP) to `csv`, for
/// `reproduce --stability`.
fn stability_rows(csv: &mut String, op: &str, m: usize, [full, rfp]: [Option<f64>; 2]) {
    for (format, seconds) in [("full", full), ("rfp", rfp)] {
        if let Some(s) = seconds {
            csv.push_str(&format!("{op},{m},{format},{:.4}\n", s * 1e3));
        }
    }
}

/// Blocked GPU seconds (full, packed) of the runs `start` makes in each format.
fn blocked_times<'g>(
    gpu: &'g Gpu,
    m: usize,
    n: usize,
    reps: usize,
    warm_up: bool,
    start: impl Fn(Format) -> Result<Execution<'g, Rgba32F>>,
) -> Result<[Option<f64>; 2]> {
    let mut out = [None; 2];
    for (format, slot) in [Format::Full, Format::Packed].into_iter().zip(&mut out) {
        if runs(gpu, Method::Blocked, m, n, format) {
            *slot = Some(measure_gpu(gpu, reps, warm_up, || start(format))?.gpu);
        }
    }
    Ok(out)
}

/// Times of assembling A·diag(d)·Aᵀ by the blocked and tiled methods.
pub fn assembly_times(
    gpu: &Gpu,
    a: &Matrix<f32>,
    d: &[f32],
    reps: usize,
    warm_up: bool,
) -> Result<Times> {
    let (m, n) = a.shape();
    let [blocked, blocked_packed] = blocked_times(gpu, m, n, reps, warm_up, |format| {
        gpu.step(
            symraster::Operation::Assembly { a, d },
            symraster::Options::new(format).method(symraster::Method::Blocked),
        )
        .and_then(symraster::Run::into_blocks)
    })?;
    let [tiled_full, tiled_rfp] = tiled_times(gpu, Op::Assembly, m, n, reps)?;
    Ok(Times {
        blocked,
        blocked_packed,
        tiled_full,
        tiled_rfp,
    })
}

/// Times of factoring `c` by the blocked and tiled methods.
pub fn cholesky_times(gpu: &Gpu, c: &Matrix<f32>, reps: usize, warm_up: bool) -> Result<Times> {
    let m = c.rows();
    let [blocked, blocked_packed] = blocked_times(gpu, m, 0, reps, warm_up, |format| {
        gpu.step(
            symraster::Operation::Cholesky(c),
            symraster::Options::new(format).method(symraster::Method::Blocked),
        )
        .and_then(symraster::Run::into_blocks)
    })?;
    let [tiled_full, tiled_rfp] = tiled_times(gpu, Op::Cholesky, m, 0, reps)?;
    Ok(Times {
        blocked,
        blocked_packed,
        tiled_full,
        tiled_rfp,
    })
}

/// One point of a throughput figure: GFLOP/s of each method at order m.
struct RatePoint {
    m: usize,
    n: usize,
    faithful: Option<f64>,
    blocked: Option<f64>,
    tiled_full: Option<f64>,
    tiled_rfp: Option<f64>,
    cpu: Option<f64>,
    vendor: Option<f64>,
    /// The vendor's lower-triangle-only operation (cuBLAS SSYRK for the assembly), where
    /// `vendor.csv` has it.
    vendor_lower: Option<f64>,
}

macro_rules! rate_figure {
    ($stem:literal, $cpu:literal, $vendor:literal) => {
        Figure {
            stem: $stem,
            y_label: "GFLOP/s",
            keys: &[
                Key {
                    header: "m",
                    value: |p: &RatePoint| p.m,
                },
                Key {
                    header: "n",
                    value: |p: &RatePoint| p.n,
                },
            ],
            columns: &[
                Column {
                    header: "faithful_gflops",
                    value: |p: &RatePoint| p.faithful,
                    curve: Some(Label::Fixed("GPU faithful (the paper's passes)")),
                },
                Column {
                    header: "blocked_gflops",
                    value: |p: &RatePoint| p.blocked,
                    curve: Some(Label::Fixed("GPU blocked (float4 blocks)")),
                },
                Column {
                    header: "tiled_full_gflops",
                    value: |p: &RatePoint| p.tiled_full,
                    curve: Some(Label::Fixed("GPU tiled full (compute)")),
                },
                Column {
                    header: "tiled_rfp_gflops",
                    value: |p: &RatePoint| p.tiled_rfp,
                    curve: Some(Label::Fixed("GPU tiled RFP (compute)")),
                },
                Column {
                    header: "cpu_faer_f32_gflops",
                    value: |p: &RatePoint| p.cpu,
                    curve: Some(Label::Cpu($cpu)),
                },
                Column {
                    header: "vendor_gflops",
                    value: |p: &RatePoint| p.vendor,
                    curve: Some(Label::Vendor($vendor)),
                },
                Column {
                    header: "vendor_lower_gflops",
                    value: |p: &RatePoint| p.vendor_lower,
                    curve: Some(Label::Fixed(
                        "vendor library: cuBLAS SSYRK fp32, lower triangle (CuPy)",
                    )),
                },
            ],
        }
    };
}

/// Assembly's throughput: useful flops m(m+1)·n (the lower triangle with the diagonal, a
/// multiply and an add per term) for every line, the vendor's full product included; cuBLAS
/// SSYRK (the same lower-triangle operation as ours) from `vendor.csv`'s `syrk` rows.
const THROUGHPUT_ASSEMBLY: Figure<RatePoint> =
    rate_figure!("throughput_assembly", "CPU faer f32", "torch fp32 (A·d)·Aᵀ");
/// Cholesky's throughput: m³/3 flops.
const THROUGHPUT_CHOLESKY: Figure<RatePoint> = rate_figure!(
    "throughput_cholesky",
    "CPU faer f32 Cholesky",
    "torch.linalg.cholesky fp32"
);

fn assembly_flops(m: usize, n: usize) -> f64 {
    m as f64 * (m as f64 + 1.0) * n as f64
}

fn cholesky_flops(m: usize) -> f64 {
    (m as f64).powi(3) / 3.0
}

/// GFLOP/s from flops and seconds.
fn rate(flops: f64, seconds: Option<f64>) -> Option<f64> {
    seconds.filter(|&s| s > 0.0).map(|s| flops / s / 1e9)
}

/// The throughput figures: assembly (n = 2m) and Cholesky, GFLOP/s against m. The tiled method
/// runs at every size that fits; the slower lines stop at their caps.
pub fn throughput(
    gpu: &Gpu,
    config: &Config,
    vendor: &[VendorRow],
    report: &mut Report,
) -> Result<()> {
    let reps = config.repetitions;
    let (mut assembly, mut cholesky) = (Vec::new(), Vec::new());
    let mut stability = String::from("op,m,format,ms\n");
    for &m in &config.sizes.throughput {
        let n = 2 * m;
        let [tiled_full, tiled_rfp] = tiled_times(gpu, Op::Assembly, m, n, reps)?;
        stability_rows(&mut stability, "assembly", m, [tiled_full, tiled_rfp]);
        // The tiled Cholesky and solves before the fragment methods at this order: right after
        // the blocked method's passes the chained Cholesky of full storage runs several times
        // slower for its next few factorizations (docs/results.md, "Stability across process
        // orders"), which is their aftermath, not the kernel's speed.
        let [cholesky_full, cholesky_rfp] = tiled_times(gpu, Op::Cholesky, m, 0, reps)?;
        stability_rows(&mut stability, "cholesky", m, [cholesky_full, cholesky_rfp]);
        if config.stability.is_some() && runs(gpu, Method::Tiled, m, 0, Format::Full) {
            let k = gpu.tiled_kernels()?;
            for rhs in [1, 16] {
                let t = tiled_bench::time_solve(&k, m, rhs, symraster::tiled::Storage::Full, reps)?;
                stability.push_str(&format!("solve-rhs{rhs},{m},full,{:.4}\n", t.ms));
            }
        }
        let (mut faithful_s, mut blocked, mut cpu) = (None, None, None);
        if m <= BLOCKED_MAX.max(CPU_MAX).max(FAITHFUL_MAX.0) {
            let mut rng = problems::rng(12_000 + m as u64);
            let a = problems::uniform_matrix(&mut rng, m, n);
            let d = problems::uniform_vector(&mut rng, n);
            if m <= BLOCKED_MAX && runs(gpu, Method::Blocked, m, n, Format::Full) {
                let run = measure_gpu(gpu, reps, true, || {
                    gpu.step(
                        symraster::Operation::Assembly { a: &a, d: &d },
                        symraster::Options::default().method(symraster::Method::Blocked),
                    )
                    .and_then(symraster::Run::into_blocks)
                })?;
                blocked = Some(run.gpu);
            }
            if m <= FAITHFUL_MAX.0 && runs(gpu, Method::Faithful, m, n, Format::Full) {
                let opts = super::faithful(Format::Full);
                faithful_s = Some(
                    measure_gpu(gpu, reps, true, || {
                        gpu.step(symraster::Operation::Assembly { a: &a, d: &d }, opts)
                            .and_then(symraster::Run::into_texels)
                    })?
                    .gpu,
                );
            }
            if m <= CPU_MAX {
                cpu = Some(cpu_assembly_seconds(&a, &d, config));
            }
        }
        let flops = assembly_flops(m, n);
        assembly.push(RatePoint {
            m,
            n,
            faithful: rate(flops, faithful_s),
            blocked: rate(flops, blocked),
            tiled_full: rate(flops, tiled_full),
            tiled_rfp: rate(flops, tiled_rfp),
            cpu: rate(flops, cpu),
            vendor: rate(flops, vendor_time(vendor, "assembly", m)),
            vendor_lower: rate(flops, vendor_time(vendor, "syrk", m)),
        });

        let [tiled_full, tiled_rfp] = [cholesky_full, cholesky_rfp];
        let (mut faithful_s, mut blocked, mut cpu) = (None, None, None);
        if m <= BLOCKED_MAX.max(CPU_MAX).max(FAITHFUL_MAX.1) {
            let c = problems::diagonally_dominant_spd(&mut problems::rng(13_000 + m as u64), m);
            if m <= BLOCKED_MAX && runs(gpu, Method::Blocked, m, 0, Format::Full) {
                blocked = Some(
                    measure_gpu(gpu, reps, true, || {
                        gpu.step(
                            symraster::Operation::Cholesky(&c),
                            symraster::Options::default().method(symraster::Method::Blocked),
                        )
                        .and_then(symraster::Run::into_blocks)
                    })?
                    .gpu,
                );
            }
            if m <= FAITHFUL_MAX.1 && runs(gpu, Method::Faithful, m, 0, Format::Full) {
                let opts = super::faithful(Format::Full);
                faithful_s = Some(
                    measure_gpu(gpu, reps, true, || {
                        gpu.step(symraster::Operation::Cholesky(&c), opts)
                            .and_then(symraster::Run::into_texels)
                    })?
                    .gpu,
                );
            }
            if m <= CPU_MAX {
                cpu = Some(cpu_cholesky_seconds(&c, config));
            }
        }
        let flops = cholesky_flops(m);
        cholesky.push(RatePoint {
            m,
            n: m,
            faithful: rate(flops, faithful_s),
            blocked: rate(flops, blocked),
            tiled_full: rate(flops, tiled_full),
            tiled_rfp: rate(flops, tiled_rfp),
            cpu: rate(flops, cpu),
            vendor: rate(flops, vendor_time(vendor, "cholesky", m)),
            vendor_lower: None,
        });
    }
    if let Some(path) = &config.stability {
        super::write_text(path, &stability)?;
        report.files.push(path.clone());
    }
    let device = &gpu.info().renderer;
    THROUGHPUT_ASSEMBLY.write(
        &config.out,
        &format!("Assembly throughput, n = 2m (useful flops m(m+1)n) — {device}"),
        &assembly,
        config.threads,
        vendor,
        report,
    )?;
    THROUGHPUT_CHOLESKY.write(
        &config.out,
        &format!("Cholesky throughput (m³/3 flops) — {device}"),
        &cholesky,
        config.threads,
        vendor,
        report,
    )
}

/// One point of the inversion figure: GFLOP/s of each way to invert at order s.
struct InversePoint {
    s: usize,
    spd_gje: Option<f64>,
    spd_cholesky: Option<f64>,
    spd_cholesky_rfp: Option<f64>,
    general_gje: Option<f64>,
    general_lu: Option<f64>,
    cpu_spd: Option<f64>,
    cpu_general: Option<f64>,
    vendor_spd: Option<f64>,
    vendor_general: Option<f64>,
}

/// The inversion figure (standard flops: s³ SPD, 2s³ general, as Benner et al.).
const INVERSION: Figure<InversePoint> = Figure {
    stem: "inversion",
    y_label: "GFLOP/s",
    keys: &[Key {
        header: "s",
        value: |p| p.s,
    }],
    columns: &[
        Column {
            header: "spd_gje_gflops",
            value: |p| p.spd_gje,
            curve: Some(Label::Fixed("GPU SPD, Gauss-Jordan")),
        },
        Column {
            header: "spd_cholesky_gflops",
            value: |p| p.spd_cholesky,
            curve: Some(Label::Fixed("GPU SPD, via Cholesky")),
        },
        Column {
            header: "spd_cholesky_rfp_gflops",
            value: |p| p.spd_cholesky_rfp,
            curve: Some(Label::Fixed("GPU SPD, via Cholesky in RFP")),
        },
        Column {
            header: "general_gje_gflops",
            value: |p| p.general_gje,
            curve: Some(Label::Fixed("GPU general, Gauss-Jordan")),
        },
        Column {
            header: "general_lu_gflops",
            value: |p| p.general_lu,
            curve: Some(Label::Fixed("GPU general, via LU")),
        },
        Column {
            header: "cpu_spd_gflops",
            value: |p| p.cpu_spd,
            curve: Some(Label::Cpu("CPU faer f32 SPD (Cholesky)")),
        },
        Column {
            header: "cpu_general_gflops",
            value: |p| p.cpu_general,
            curve: Some(Label::Cpu("CPU faer f32 general (LU)")),
        },
        Column {
            header: "vendor_spd_gflops",
            value: |p| p.vendor_spd,
            curve: Some(Label::Vendor("torch.cholesky_inverse fp32")),
        },
        Column {
            header: "vendor_general_gflops",
            value: |p| p.vendor_general,
            curve: Some(Label::Vendor("torch.linalg.inv fp32")),
        },
    ],
};

/// The inversion figure: GJE against factorization-based inversion, SPD and general.
pub fn inversion(
    gpu: &Gpu,
    config: &Config,
    vendor: &[VendorRow],
    report: &mut Report,
) -> Result<()> {
    if !gpu.methods().contains(&Method::Tiled) {
        log::warn!("no inversion figure: it needs compute shaders (the tiled method's kernels)");
        return Ok(());
    }
    let inv = Inverter::new(gpu)?;
    let reps = config.repetitions;
    let mut points = Vec::new();
    let (full, rfp) = (inverse::Storage::Full, inverse::Storage::Rfp);
    for &s in &config.sizes.inversion {
        let gpu_rate = |kind: Kind,
                        method: inverse::InverseMethod,
                        storage: inverse::Storage|
         -> Result<Option<f64>> {
            match inverse::bench::time_inverse_in(&inv, kind, method, storage, s, None, reps) {
                Ok(t) => Ok(Some(t.gflops)),
                Err(e)
                    if e.kind() == symraster::ErrorKind::Device
                        || e.kind() == symraster::ErrorKind::Input =>
                {
                    log::warn!("inversion s = {s} {kind:?} {method:?} {storage:?}: {e}");
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        };
        let (cpu_spd, cpu_general) = if s <= CPU_INVERSE_MAX {
            let spd = baseline::to_faer(&inverse::bench::test_matrix(Kind::Spd, s));
            let general = baseline::to_faer(&inverse::bench::test_matrix(Kind::General, s));
            let t_spd = measure_cpu(
                reps,
                || (),
                |()| {
                    let llt = spd.llt(faer::Side::Lower).expect("the test matrix is SPD");
                    std::hint::black_box(llt.inverse());
                },
            );
            let t_general = measure_cpu(
                reps,
                || (),
                |()| {
                    std::hint::black_box(general.partial_piv_lu().inverse());
                },
            );
            (
                rate(Kind::Spd.flops(s), Some(t_spd)),
                rate(Kind::General.flops(s), Some(t_general)),
            )
        } else {
            (None, None)
        };
        points.push(InversePoint {
            s,
            spd_gje: gpu_rate(Kind::Spd, inverse::InverseMethod::Gje, full)?,
            spd_cholesky: gpu_rate(Kind::Spd, inverse::InverseMethod::Cholesky, full)?,
            spd_cholesky_rfp: gpu_rate(Kind::Spd, inverse::InverseMethod::Cholesky, rfp)?,
            general_gje: gpu_rate(Kind::General, inverse::InverseMethod::Gje, full)?,
            general_lu: gpu_rate(Kind::General, inverse::InverseMethod::Lu, full)?,
            cpu_spd,
            cpu_general,
            vendor_spd: rate(Kind::Spd.flops(s), vendor_time(vendor, "inverse_spd", s)),
            vendor_general: rate(
                Kind::General.flops(s),
                vendor_time(vendor, "inverse_general", s),
            ),
        });
    }
    INVERSION.write(
        &config.out,
        &format!(
            "Inversion (s³ SPD, 2s³ general flops) — {}",
            gpu.info().renderer
        ),
        &points,
        config.threads,
        vendor,
        report,
    )
}
