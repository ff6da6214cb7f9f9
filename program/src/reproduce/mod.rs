//! Regenerates the paper's results: Fig 8 (assembly time), Fig 9 (Cholesky time, with LU) and,
//! through [`tables`], Tables 1 and 2, as CSV and plots under one folder.
//!
//! GPU times come from GL_TIME_ELAPSED around the passes only (uploads and readback excluded,
//! as in the paper's Figs 8 and 9), wall time beside them; one warm-up run per series, then the
//! median of several repetitions. The CPU baseline is faer, multi-threaded, in f32 (as ATLAS's
//! ssyrk and spotrf were in the paper).

mod beyond;
mod figure;
mod plot;
mod sysinfo;
pub mod tables;
mod timing;

pub use sysinfo::{cpu_model, utc_date};

use faer::Mat;
use figure::{Column, Figure, Key, Label};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;
use symraster::baseline;
use symraster::error::{Error, InputError, Result};
use symraster::internal::GpuInternals;
use symraster::{Format, Gpu, Method, Options, problems as testing};
use timing::{median, time_finish};

/// Which part of the reproduction to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Fig 8: time to assemble A·D²·Aᵀ.
    Fig8,
    /// Fig 9: Cholesky (and LU) time.
    Fig9,
    /// Tables 1 and 2: weighted least squares.
    Tables,
    /// GFLOP/s against m of every method, the CPU and the vendor library (past the paper).
    Throughput,
    /// GFLOP/s of the inversions against the order (Benner et al.'s comparison).
    Inversion,
}

/// The sizes m of each part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Fig 8 (n = 2m).
    pub fig8: Vec<usize>,
    /// Fig 9.
    pub fig9: Vec<usize>,
    /// Tables 1 and 2 (n = 2m).
    pub tables: Vec<usize>,
    /// The throughput figures (assembly with n = 2m, and Cholesky).
    pub throughput: Vec<usize>,
    /// The inversion figure (orders s).
    pub inversion: Vec<usize>,
}

impl Sizes {
    /// About five minutes on a 2-core machine with llvmpipe.
    pub fn quick() -> Self {
        Self {
            fig8: vec![64, 128, 256, 512, 768, 1024],
            fig9: vec![64, 128, 256, 512, 768, 1024, 1536],
            tables: vec![64, 128, 256, 512, 1024],
            throughput: vec![256, 512, 1024],
            inversion: vec![64, 128, 256, 512],
        }
    }

    /// The paper's ranges (assembly to m = 2048, Cholesky to 4096, tables 512..2048, with
    /// 4096 added for the tiled method's row), and past them for the fast methods.
    pub fn paper() -> Self {
        Self {
            fig8: (1..=8).map(|i| 256 * i).collect(),
            fig9: (1..=16).map(|i| 256 * i).collect(),
            tables: vec![512, 1024, 1536, 2048, 4096],
            throughput: vec![1024, 2048, 4096, 8192, 16384],
            inversion: vec![512, 1024, 2048, 4096, 8192, 16384],
        }
    }

    /// The same list for every part.
    pub fn list(sizes: Vec<usize>) -> Self {
        Self {
            fig8: sizes.clone(),
            fig9: sizes.clone(),
            tables: sizes.clone(),
            throughput: sizes.clone(),
            inversion: sizes,
        }
    }

    /// `quick`, `paper` or a comma-separated list of positive integers.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "quick" => Ok(Self::quick()),
            "paper" => Ok(Self::paper()),
            list => {
                let sizes = list
                    .split(',')
                    .map(|s| match s.trim().parse::<usize>() {
                        Ok(m) if m > 0 => Ok(m),
                        _ => Err(format!(
                            "sizes must be quick, paper or a comma-separated list of positive \
                             integers, not {text:?}"
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Self::list(sizes))
            }
        }
    }
}

/// What to run and where to write it.
#[derive(Clone, Debug)]
pub struct Config {
    /// Sizes per part.
    pub sizes: Sizes,
    /// Only this part, or all when `None`.
    pub only: Option<Part>,
    /// Output folder.
    pub out: PathBuf,
    /// Timed repetitions after the warm-up (the median is reported).
    pub repetitions: usize,
    /// CPU threads for faer (0: all).
    pub threads: usize,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Where the throughput part writes its tiled timings, the solves' among them
    /// (`reproduce --stability`); `None`: no solves timed, no file.
    pub stability: Option<PathBuf>,
}

/// The files written.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Paths written, in order.
    pub files: Vec<PathBuf>,
}

/// Runs the chosen parts and writes their files into `config.out`.
pub fn run(gpu: &Gpu, config: &Config) -> Result<Report> {
    std::fs::create_dir_all(&config.out).map_err(|e| {
        Error::from(InputError::Unsupported(format!(
            "cannot create the output folder {}: {e}",
            config.out.display()
        )))
    })?;
    let wants = |p: Part| config.only.is_none_or(|o| o == p);
    let mut report = Report::default();
    let progress = Progress::new(config);
    let vendor = read_vendor(&config.out.join("vendor.csv"));
    if wants(Part::Fig8) {
        fig8(gpu, config, &progress, &vendor, &mut report)?;
    }
    if wants(Part::Fig9) {
        fig9(gpu, config, &progress, &vendor, &mut report)?;
    }
    if wants(Part::Tables) {
        progress.message("tables 1-2");
        let tables = tables::write_tables(
            gpu,
            &config.sizes.tables,
            &config.out,
            symraster::SolveOptions::paper(),
            tables::DEFAULT_SEED,
            &|m| vendor_time(&vendor, "wls", m),
        )?;
        report.files.extend(tables.files);
        progress.done(config.sizes.tables.iter().map(|&m| cost_tables(m)).sum());
    }
    if wants(Part::Throughput) {
        progress.message("throughput");
        beyond::throughput(gpu, config, &vendor, &mut report)?;
    }
    if wants(Part::Inversion) {
        progress.message("inversion");
        beyond::inversion(gpu, config, &vendor, &mut report)?;
    }
    progress.finish();
    let device = device_text(gpu, config);
    let path = config.out.join("device.txt");
    write_text(&path, &device)?;
    report.files.push(path);
    Ok(report)
}

/// A median GPU time and wall time in seconds.
#[derive(Clone, Copy, Debug)]
struct Measured {
    gpu: f64,
    wall: f64,
}

/// Times `make()`'s run: `warm_up` untimed runs first, then `reps` timed ones (fewer when a run
/// takes over 20 s), each right after `gpu`'s preheat; the medians.
fn measure_gpu<'g, F: symraster::gl::TexelFormat>(
    gpu: &Gpu,
    reps: usize,
    warm_up: bool,
    mut make: impl FnMut() -> Result<symraster::draw::execution::Execution<'g, F>>,
) -> Result<Measured> {
    if warm_up {
        make()?.finish()?;
    }
    let (mut times, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(1) {
        let mut run = make()?;
        let t = time_finish(&mut run, gpu.preheat())?;
        times.push(t.gpu.as_secs_f64());
        wall.push(t.wall.as_secs_f64());
        if t.wall.as_secs_f64() > 20.0 {
            break;
        }
    }
    Ok(Measured {
        gpu: median(&times),
        wall: median(&wall),
    })
}

/// Median wall time of `reps` runs of `f`, after `setup` (untimed) before each.
fn measure_cpu<S>(reps: usize, mut setup: impl FnMut() -> S, mut f: impl FnMut(S)) -> f64 {
    let mut times = Vec::new();
    for _ in 0..reps.max(1) + 1 {
        let s = setup();
        let t = Instant::now();
        f(s);
        times.push(t.elapsed().as_secs_f64());
    }
    times.remove(0); // warm-up
    median(&times)
}

/// One point of Fig 8: the faithful method's GPU times in both formats, the CPU and the
/// vendor library.
struct AssemblyPoint {
    m: usize,
    n: usize,
    full: Measured,
    packed: Measured,
    beyond: beyond::Times,
    cpu: f64,
    vendor: Option<f64>,
}

/// Fig 8's table: CSV columns and curves.
const FIG8: Figure<AssemblyPoint> = Figure {
    stem: "fig8_assembly",
    y_label: "time (s)",
    keys: &[
        Key {
            header: "m",
            value: |p| p.m,
        },
        Key {
            header: "n",
            value: |p| p.n,
        },
    ],
    columns: &[
        Column {
            header: "gpu_full_s",
            value: |p| Some(p.full.gpu),
            curve: Some(Label::Fixed("GPU full (this work)")),
        },
        Column {
            header: "gpu_full_wall_s",
            value: |p| Some(p.full.wall),
            curve: None,
        },
        Column {
            header: "gpu_packed_s",
            value: |p| Some(p.packed.gpu),
            curve: Some(Label::Fixed("GPU packed (this work)")),
        },
        Column {
            header: "gpu_packed_wall_s",
            value: |p| Some(p.packed.wall),
            curve: None,
        },
        Column {
            header: "gpu_blocked_full_s",
            value: |p| p.beyond.blocked,
            curve: Some(Label::Fixed(
                "GPU blocked full (float4 blocks, rank-K passes)",
            )),
        },
        Column {
            header: "gpu_blocked_packed_s",
            value: |p| p.beyond.blocked_packed,
            curve: Some(Label::Fixed("GPU blocked packed")),
        },
        Column {
            header: "gpu_tiled_full_s",
            value: |p| p.beyond.tiled_full,
            curve: Some(Label::Fixed("GPU tiled full (compute shaders)")),
        },
        Column {
            header: "gpu_tiled_rfp_s",
            value: |p| p.beyond.tiled_rfp,
            curve: Some(Label::Fixed("GPU tiled RFP")),
        },
        Column {
            header: "cpu_faer_f32_s",
            value: |p| Some(p.cpu),
            curve: Some(Label::Cpu("CPU faer f32")),
        },
        Column {
            header: "vendor_s",
            value: |p| p.vendor,
            curve: Some(Label::Vendor("torch fp32 (A·d)·Aᵀ")),
        },
    ],
};

/// One point of Fig 9: Cholesky (faithful, both formats), LU, the CPU and the vendor library.
struct CholeskyPoint {
    m: usize,
    full: Measured,
    packed: Measured,
    beyond: beyond::Times,
    cpu: f64,
    lu: Measured,
    vendor: Option<f64>,
    vendor_lu: Option<f64>,
}

/// Fig 9's table: CSV columns and curves.
const FIG9: Figure<CholeskyPoint> = Figure {
    stem: "fig9_cholesky",
    y_label: "time (s)",
    keys: &[Key {
        header: "m",
        value: |p| p.m,
    }],
    columns: &[
        Column {
            header: "gpu_full_s",
            value: |p| Some(p.full.gpu),
            curve: Some(Label::Fixed("GPU Cholesky full (this work)")),
        },
        Column {
            header: "gpu_full_wall_s",
            value: |p| Some(p.full.wall),
            curve: None,
        },
        Column {
            header: "gpu_packed_s",
            value: |p| Some(p.packed.gpu),
            curve: Some(Label::Fixed("GPU Cholesky packed (this work)")),
        },
        Column {
            header: "gpu_packed_wall_s",
            value: |p| Some(p.packed.wall),
            curve: None,
        },
        Column {
            header: "gpu_blocked_full_s",
            value: |p| p.beyond.blocked,
            curve: Some(Label::Fixed(
                "GPU blocked full (float4 blocks, rank-K passes)",
            )),
        },
        Column {
            header: "gpu_blocked_packed_s",
            value: |p| p.beyond.blocked_packed,
            curve: Some(Label::Fixed("GPU blocked packed")),
        },
        Column {
            header: "gpu_tiled_full_s",
            value: |p| p.beyond.tiled_full,
            curve: Some(Label::Fixed("GPU tiled full (compute shaders)")),
        },
        Column {
            header: "gpu_tiled_rfp_s",
            value: |p| p.beyond.tiled_rfp,
            curve: Some(Label::Fixed("GPU tiled RFP")),
        },
        Column {
            header: "cpu_faer_f32_s",
            value: |p| Some(p.cpu),
            curve: Some(Label::Cpu("CPU faer f32 Cholesky")),
        },
        Column {
            header: "gpu_lu_s",
            value: |p| Some(p.lu.gpu),
            curve: Some(Label::Fixed("GPU LU, no pivoting (same framework)")),
        },
        Column {
            header: "gpu_lu_wall_s",
            value: |p| Some(p.lu.wall),
            curve: None,
        },
        Column {
            header: "vendor_s",
            value: |p| p.vendor,
            curve: Some(Label::Vendor("torch.linalg.cholesky fp32")),
        },
        Column {
            header: "vendor_lu_s",
            value: |p| p.vendor_lu,
            curve: Some(Label::Vendor("torch.linalg.lu_factor fp32")),
        },
    ],
};

/// The paper's method in `format`, named explicitly so that the figures stay the paper's
/// curves whatever [`Method::Auto`] picks.
fn faithful(format: Format) -> Options {
    Options::new(format).method(Method::Faithful)
}

fn fig8(
    gpu: &Gpu,
    config: &Config,
    progress: &Progress,
    vendor: &[VendorRow],
    report: &mut Report,
) -> Result<()> {
    let mut points = Vec::new();
    for (index, &m) in config.sizes.fig8.iter().enumerate() {
        progress.message(&format!("fig 8: assembly m={m}"));
        points.push(assembly_point(gpu, config, vendor, m, index == 0)?);
        progress.done(cost_assembly(m));
    }
    let title = format!(
        "Fig 8: assembling A·D²·Aᵀ, n = 2m — {}",
        gpu.info().renderer
    );
    FIG8.write(&config.out, &title, &points, config.threads, vendor, report)
}

fn assembly_point(
    gpu: &Gpu,
    config: &Config,
    vendor: &[VendorRow],
    m: usize,
    warm_up: bool,
) -> Result<AssemblyPoint> {
    let n = 2 * m;
    let mut rng = testing::rng(8_000 + m as u64);
    let a = testing::uniform_matrix(&mut rng, m, n);
    let d = testing::uniform_vector(&mut rng, n);
    let reps = config.repetitions;
    let full = measure_gpu(gpu, reps, warm_up, || {
        gpu.step(
            symraster::Operation::Assembly { a: &a, d: &d },
            faithful(Format::Full),
        )
        .and_then(symraster::Run::into_texels)
    })?;
    let packed = measure_gpu(gpu, reps, warm_up, || {
        gpu.step(
            symraster::Operation::Assembly { a: &a, d: &d },
            faithful(Format::Packed),
        )
        .and_then(symraster::Run::into_texels)
    })?;
    let cpu = cpu_assembly_seconds(&a, &d, config);
    let beyond = beyond::assembly_times(gpu, &a, &d, reps, warm_up)?;
    Ok(AssemblyPoint {
        m,
        n,
        full,
        packed,
        beyond,
        cpu,
        vendor: vendor_time(vendor, "assembly", m),
    })
}

fn fig9(
    gpu: &Gpu,
    config: &Config,
    progress: &Progress,
    vendor: &[VendorRow],
    report: &mut Report,
) -> Result<()> {
    let mut points = Vec::new();
    for (index, &m) in config.sizes.fig9.iter().enumerate() {
        progress.message(&format!("fig 9: Cholesky and LU m={m}"));
        points.push(cholesky_point(gpu, config, vendor, m, index == 0)?);
        progress.done(cost_cholesky(m));
    }
    let title = format!("Fig 9: Cholesky factorization — {}", gpu.info().renderer);
    FIG9.write(&config.out, &title, &points, config.threads, vendor, report)
}

fn cholesky_point(
    gpu: &Gpu,
    config: &Config,
    vendor: &[VendorRow],
    m: usize,
    warm_up: bool,
) -> Result<CholeskyPoint> {
    let c = testing::diagonally_dominant_spd(&mut testing::rng(9_000 + m as u64), m);
    let reps = config.repetitions;
    let full = measure_gpu(gpu, reps, warm_up, || {
        gpu.step(symraster::Operation::Cholesky(&c), faithful(Format::Full))
            .and_then(symraster::Run::into_texels)
    })?;
    let packed = measure_gpu(gpu, reps, warm_up, || {
        gpu.step(symraster::Operation::Cholesky(&c), faithful(Format::Packed))
            .and_then(symraster::Run::into_texels)
    })?;
    let lu = measure_gpu(gpu, reps, warm_up, || {
        gpu.step(symraster::Operation::Lu(&c), symraster::Options::default())
            .and_then(symraster::Run::into_texels)
    })?;
    let cpu = cpu_cholesky_seconds(&c, config);
    let beyond = beyond::cholesky_times(gpu, &c, reps, warm_up)?;
    Ok(CholeskyPoint {
        m,
        full,
        packed,
        beyond,
        cpu,
        lu,
        vendor: vendor_time(vendor, "cholesky", m),
        vendor_lu: vendor_time(vendor, "lu", m),
    })
}

/// faer's time (median, all configured threads) for the lower triangle of A·diag(d)·Aᵀ in f32.
fn cpu_assembly_seconds(a: &symraster::Matrix<f32>, d: &[f32], config: &Config) -> f64 {
    let par = baseline::par(config.threads);
    let fa = baseline::to_faer(a);
    let m = a.rows();
    measure_cpu(
        config.repetitions,
        || Mat::<f32>::zeros(m, m),
        |mut c| {
            let b = baseline::scale_columns(&fa, d);
            baseline::assemble_lower_into(&mut c, &fa, &b, par);
        },
    )
}

/// faer's f32 Cholesky time (median) of the SPD `c`.
fn cpu_cholesky_seconds(c: &symraster::Matrix<f32>, config: &Config) -> f64 {
    let par = baseline::par(config.threads);
    let fc = baseline::to_faer(c);
    measure_cpu(
        config.repetitions,
        || fc.clone(),
        |mut x| {
            baseline::cholesky_in_place(&mut x, par).expect("the test matrix is SPD");
        },
    )
}

/// Writes a text file whole or not at all.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    symraster::io::write_atomically(path, |w| w.write_all(text.as_bytes()))
        .map_err(|e| Error::from(InputError::Unsupported(e.to_string())))
}

fn device_text(gpu: &Gpu, config: &Config) -> String {
    let i = gpu.info();
    let list = |v: &[usize]| {
        v.iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "date (UTC)        {}\nGL_RENDERER       {}\nGL_VENDOR         {}\nGL_VERSION        {}\n\
         GL_MAX_TEXTURE    {}\nCPU               {}\nCPU threads       {} (faer uses {})\n\
         repetitions       {} (median; one warm-up run per series)\nsizes fig8        {}\n\
         sizes fig9        {}\nsizes tables      {}\nsizes throughput  {}\n\
         sizes inversion   {}\nsymraster         {}\n",
        utc_date(),
        i.renderer,
        i.vendor,
        i.version,
        i.max_texture_size,
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        threads_used(config.threads),
        config.repetitions,
        list(&config.sizes.fig8),
        list(&config.sizes.fig9),
        list(&config.sizes.tables),
        list(&config.sizes.throughput),
        list(&config.sizes.inversion),
        env!("CARGO_PKG_VERSION"),
    )
}

fn threads_used(threads: usize) -> usize {
    if threads == 0 {
        rayon_threads()
    } else {
        threads
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One row of the vendor library's timings (scripts/vendor_baseline.py).
#[derive(Clone, Debug)]
struct VendorRow {
    op: String,
    m: usize,
    seconds: f64,
    label: String,
}

/// Reads `vendor.csv` (op,m,seconds,label) if present; malformed rows are skipped.
fn read_vendor(path: &Path) -> Vec<VendorRow> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            // The label is the last field and may hold commas, quoted then (RFC 4180).
            let f: Vec<&str> = line.splitn(4, ',').collect();
            Some(VendorRow {
                op: f.first()?.trim().to_string(),
                m: f.get(1)?.trim().parse().ok()?,
                seconds: f.get(2)?.trim().parse().ok()?,
                label: f.get(3).map_or(String::new(), |s| unquote(s.trim())),
            })
        })
        .collect()
}

/// A CSV field without its quotes (`"a, b ""c"""` reads `a, b "c"`); an unquoted one as it is.
fn unquote(field: &str) -> String {
    match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => field.to_string(),
    }
}

fn vendor_time(rows: &[VendorRow], op: &str, m: usize) -> Option<f64> {
    rows.iter()
        .find(|r| r.op == op && r.m == m)
        .map(|r| r.seconds)
}

fn vendor_label(rows: &[VendorRow], what: &str) -> String {
    match rows.first() {
        Some(r) if !r.label.is_empty() => format!("vendor library: {what} ({})", r.label),
        _ => format!("vendor library: {what}"),
    }
}

/// Relative cost units for the progress estimate: fragments drawn.
fn cost_assembly(m: usize) -> u64 {
    (m as u64).pow(3) * 2
}

fn cost_tables(m: usize) -> u64 {
    (m as u64).pow(3) * 4 // two tables, each an assembly (n = 2m) and a Cholesky
}

fn cost_cholesky(m: usize) -> u64 {
    (m as u64).pow(3) // full + packed (m³/6 each) + LU (m³/3) + copies
}

/// A progress bar over the figures' work, with the part and size in its message.
struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(config: &Config) -> Self {
        let wants = |p: Part| config.only.is_none_or(|o| o == p);
        let mut total = 0;
        if wants(Part::Fig8) {
            total += config
                .sizes
                .fig8
                .iter()
                .map(|&m| cost_assembly(m))
                .sum::<u64>();
        }
        if wants(Part::Fig9) {
            total += config
                .sizes
                .fig9
                .iter()
                .map(|&m| cost_cholesky(m))
                .sum::<u64>();
        }
        let bar = if config.progress {
            ProgressBar::new(total.max(1))
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:32} [{elapsed_precise}] {wide_bar} {percent:>3}% (about {eta} left)",
            )
            .expect("a valid template"),
        );
        Self { bar }
    }

    fn message(&self, text: &str) {
        self.bar.set_message(text.to_string());
    }

    fn done(&self, cost: u64) {
        self.bar.inc(cost);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn a_quoted_label_reads_without_its_quotes() {
        assert_eq!(unquote("\"torch, f64 \"\"x\"\"\""), "torch, f64 \"x\"");
        assert_eq!(unquote("cuBLAS SSYRK"), "cuBLAS SSYRK");
    }
}
