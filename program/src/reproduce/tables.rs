//! Tables 1 and 2 of section 5.3 regenerated: random and ill-conditioned weighted least squares
//! solved on the GPU with refinement (Algorithm 1), against a double-precision CPU solve.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use symraster::error::{Error, InputError, NumericalError, Result};
use symraster::gpu::{Gpu, Method};
use symraster::least_squares::solve_normal_equations_faer;
use symraster::least_squares::{SolveOptions, relative_error_vec};
use symraster::problems::{
    LeastSquaresProblem, ill_conditioned_least_squares, random_least_squares,
};

/// The seed of the generated problems (problem at size m uses `seed + m`).
pub const DEFAULT_SEED: u64 = 2008;

/// Which of section 5.3's problems a table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// Table 1: A, D² and b uniform in (0, 1), n = 2m.
    Random,
    /// Table 2: as Random but D²(i) = 10^(−4+8i/(n−1)).
    IllConditioned,
}

impl ProblemKind {
    /// The problem of order m from `seed`.
    pub fn generate(self, seed: u64, m: usize) -> LeastSquaresProblem {
        match self {
            ProblemKind::Random => random_least_squares(seed, m),
            ProblemKind::IllConditioned => ill_conditioned_least_squares(seed, m),
        }
    }

    /// The paper's table number.
    pub fn number(self) -> usize {
        match self {
            ProblemKind::Random => 1,
            ProblemKind::IllConditioned => 2,
        }
    }

    /// The paper's caption.
    pub fn caption(self) -> &'static str {
        match self {
            ProblemKind::Random => "Results for randomly generated weighted least squares",
            ProblemKind::IllConditioned => {
                "Results for randomly generated ill-conditioned weighted least squares"
            }
        }
    }

    /// The paper's own rows (Intel Xeon 3.0 GHz with MATLAB/MKL, GeForce 7800 GTX).
    pub fn paper(self) -> &'static [PaperRow] {
        match self {
            ProblemKind::Random => PAPER_TABLE_1,
            ProblemKind::IllConditioned => PAPER_TABLE_2,
        }
    }
}

/// One row of a regenerated table; times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableRow {
    /// How the GPU formed and factored AD²Aᵀ.
    pub method: Method,
    /// Order of AD²Aᵀ.
    pub m: usize,
    /// Columns of A (2m).
    pub n: usize,
    /// ‖x⁰ − x_CPU‖/‖x_CPU‖.
    pub x0_error: f64,
    /// ‖x − x_CPU‖/‖x_CPU‖ after refinement.
    pub refined_error: f64,
    /// Refinement iterations.
    pub iterations: usize,
    /// Whether refinement reached ε.
    pub converged: bool,
    /// The single-precision factor failed (AD²Aᵀ is not positive definite to f32 accuracy):
    /// the column, and no solution (errors and times are NaN).
    pub factor_failed: Option<usize>,
    /// Time to x⁰: upload, GPU assembly and factorization, reading L back, substitutions.
    pub gpu_x0_s: f64,
    /// Time of the refinement loop.
    pub refine_s: f64,
    /// `gpu_x0_s + refine_s`.
    pub gpu_total_s: f64,
    /// The f64 CPU solve (forming C, factoring, solving with faer), best of three.
    pub cpu_s: f64,
    /// `cpu_s / gpu_total_s`.
    pub speedup: f64,
    /// torch f64 on the same GPU solving a problem of this shape from host arrays (C =
    /// (A·d)·Aᵀ, potrf, potrs, x back), from `vendor.csv`'s `wls` rows
    /// (`scripts/vendor_baseline.py --wls`), when measured.
    pub torch_s: Option<f64>,
}

impl TableRow {
    /// `torch_s / gpu_total_s`: above 1 where ours is faster.
    pub fn speedup_torch(&self) -> Option<f64> {
        self.torch_s.map(|t| t / self.gpu_total_s)
    }
}

impl TableRow {
    /// The row of a run whose single-precision factor failed at `column`.
    fn failed(method: Method, m: usize, n: usize, column: usize, cpu_s: f64) -> Self {
        Self {
            method,
            m,
            n,
            x0_error: f64::NAN,
            refined_error: f64::NAN,
            iterations: 0,
            converged: false,
            factor_failed: Some(column),
            gpu_x0_s: f64::NAN,
            refine_s: f64::NAN,
            gpu_total_s: f64::NAN,
            cpu_s,
            speedup: f64::NAN,
            torch_s: None,
        }
    }
}

/// One row of the paper's Tables 1 and 2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperRow {
    /// Order.
    pub m: usize,
    /// Relative error of x⁰.
    pub x0_error: f64,
    /// Relative error after refinement.
    pub refined_error: f64,
    /// Refinement iterations.
    pub iterations: usize,
    /// GPU time to x⁰ (s).
    pub x0_s: f64,
    /// Refinement time (s).
    pub refine_s: f64,
    /// GPU total (s).
    pub total_s: f64,
    /// CPU time (s).
    pub cpu_s: f64,
    /// Speed-up.
    pub speedup: f64,
}

const fn paper_row(
    m: usize,
    x0_error: f64,
    refined_error: f64,
    iterations: usize,
    times: [f64; 5],
) -> PaperRow {
    PaperRow {
        m,
        x0_error,
        refined_error,
        iterations,
        x0_s: times[0],
        refine_s: times[1],
        total_s: times[2],
        cpu_s: times[3],
        speedup: times[4],
    }
}

/// The paper's Table 1 (random problems).
pub const PAPER_TABLE_1: &[PaperRow] = &[
    paper_row(512, 3.11e-4, 3.37e-13, 4, [0.39, 0.02, 0.41, 0.20, 0.49]),
    paper_row(1024, 3.10e-4, 4.25e-13, 4, [0.49, 0.04, 0.53, 1.03, 1.94]),
    paper_row(1536, 4.61e-4, 6.96e-13, 4, [1.33, 0.09, 1.42, 3.41, 2.40]),
    paper_row(2048, 1.01e-3, 1.76e-12, 5, [2.99, 0.22, 3.21, 7.95, 2.48]),
];

/// The paper's Table 2 (ill-conditioned problems).
pub const PAPER_TABLE_2: &[PaperRow] = &[
    paper_row(512, 2.92e-2, 1.16e-10, 7, [0.36, 0.02, 0.38, 0.20, 0.53]),
    paper_row(1024, 7.19e-2, 2.01e-10, 10, [0.48, 0.10, 0.58, 1.05, 1.81]),
    paper_row(1536, 9.35e-2, 2.37e-10, 13, [1.33, 0.30, 1.63, 3.41, 2.09]),
    paper_row(2048, 1.13e-1, 3.41e-10, 15, [3.00, 0.66, 3.66, 7.98, 2.18]),
];

/// Solves the problem of kind `kind` and order m on the GPU with each of `methods` (the faster
/// of two solves) and with faer in f64 (best of three), and measures: one row per method.
///
/// Not converging is recorded in the row (`converged`), not an error; a singular matrix is.
pub fn measure(
    gpu: &Gpu,
    kind: ProblemKind,
    m: usize,
    options: SolveOptions,
    methods: &[Method],
    seed: u64,
) -> Result<Vec<TableRow>> {
    let p = kind.generate(seed.wrapping_add(m as u64), m);
    let mut x_cpu = Vec::new();
    let mut cpu_s = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b)?;
        cpu_s = cpu_s.min(t.elapsed().as_secs_f64());
    }
    methods
        .iter()
        .map(|&method| {
            let options = options.gpu(options.gpu.method(method));
            // The faster of two solves (as the CPU's best of three): the first at a new size
            // also pays for first-touch allocations and kernel variants compiled for it.
            let solve = || gpu.least_squares(&p.a, &p.d, &p.b, options);
            let solution = match solve().and_then(|first| {
                let second = solve()?;
                Ok(if second.timings.total < first.timings.total {
                    second
                } else {
                    first
                })
            }) {
                Ok(solution) => solution,
                // Too ill-conditioned for a single-precision factor: a row that says so.
                Err(Error::Numerical(
                    NumericalError::NotPositiveDefinite { column, .. }
                    | NumericalError::NumericallySingular { column, .. },
                )) => return Ok(TableRow::failed(method, m, p.a.cols(), column, cpu_s)),
                Err(e) => return Err(e),
            };
            let gpu_total_s = solution.timings.total.as_secs_f64();
            Ok(TableRow {
                method,
                m,
                n: p.a.cols(),
                x0_error: relative_error_vec(&solution.x0, &x_cpu),
                refined_error: relative_error_vec(&solution.x, &x_cpu),
                iterations: solution.iterations,
                converged: solution.converged,
                factor_failed: None,
                gpu_x0_s: solution.timings.x0.as_secs_f64(),
                refine_s: solution.timings.refine.as_secs_f64(),
                gpu_total_s,
                cpu_s,
                speedup: cpu_s / gpu_total_s,
                torch_s: None,
            })
        })
        .collect()
}

/// The methods the tables compare: the paper's (faithful) always, and the tiled method where
/// this device runs it.
pub fn table_methods(gpu: &Gpu) -> Vec<Method> {
    let mut methods = vec![Method::Faithful];
    if gpu.methods().contains(&Method::Tiled) {
        methods.push(Method::Tiled);
    }
    methods
}

/// One table: rows per size and method, after a small warm-up solve per method (shader
/// compilation, thread pools).
pub fn table(
    gpu: &Gpu,
    kind: ProblemKind,
    sizes: &[usize],
    options: SolveOptions,
    seed: u64,
) -> Result<Vec<TableRow>> {
    let methods = table_methods(gpu);
    measure(gpu, kind, 8, options, &methods, seed)?;
    let mut rows = Vec::new();
    for &m in sizes {
        rows.extend(measure(gpu, kind, m, options, &methods, seed)?);
    }
    Ok(rows)
}

/// The rows as CSV with a header line.
pub fn to_csv(rows: &[TableRow]) -> String {
    let mut out = String::from(
        "method,m,n,x0_relative_error,refined_relative_error,iterations,converged,\
         gpu_x0_s,refine_s,gpu_total_s,cpu_s,speedup,factor_failed_column,torch_s,\
         speedup_torch\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{:.3e},{:.3e},{},{},{:.6},{:.6},{:.6},{:.6},{:.4},{},{},{}",
            r.method,
            r.m,
            r.n,
            r.x0_error,
            r.refined_error,
            r.iterations,
            r.converged,
            r.gpu_x0_s,
            r.refine_s,
            r.gpu_total_s,
            r.cpu_s,
            r.speedup,
            r.factor_failed.map_or(String::new(), |c| c.to_string()),
            r.torch_s.map_or(String::new(), |t| format!("{t:.6}")),
            r.speedup_torch()
                .map_or(String::new(), |t| format!("{t:.4}"))
        );
    }
    out
}

const HEADER: &str = "| m | Rel. error x⁰_sgl | Rel. error refined | Refinement iterations \
                      | GPU x⁰_sgl (s) | GPU refine (s) | GPU total (s) | CPU (s) | Speed-up |\n\
                      |---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";

const METHOD_HEADER: &str = "| m | method | Rel. error x⁰_sgl | Rel. error refined | Refinement \
                             iterations | GPU x⁰_sgl (s) | GPU refine (s) | GPU total (s) | CPU (s) \
                             | Speed-up | torch f64 GPU (s) | Speed-up vs torch |\n\
                             |---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";

/// The table in Markdown with the paper's columns, followed by the paper's own numbers.
/// `device` names the GPU and CPU measured.
pub fn to_markdown(
    kind: ProblemKind,
    rows: &[TableRow],
    device: &str,
    options: SolveOptions,
) -> String {
    let mut out = format!(
        "## Table {}: {}\n\nMeasured here: {device}. n = 2m; ε = {:e}, at most {} iterations, \
         {} format; relative errors against x_CPU (faer, f64); CPU time is faer's f64 solve \
         (forming AD²Aᵀ, Cholesky, substitutions), best of three; GPU times are the faster of \
         two solves; speed-up = CPU / GPU total. \
         torch f64 GPU is torch in double on the same GPU from host arrays (C = (A·d)·Aᵀ, \
         Cholesky, both solves, x back; median after a warm-up, `scripts/vendor_baseline.py \
         --wls`; — where not measured), speed-up vs torch = torch / GPU total. \
         `faithful` is the paper's method (rasterized passes); `tiled` forms and factors AD²Aᵀ \
         with compute shaders; refinement runs the same way for both.\n\n",
        kind.number(),
        kind.caption(),
        options.tolerance_for(1),
        options.max_iterations,
        options.gpu.format,
    );
    out.push_str(METHOD_HEADER);
    for r in rows {
        let iterations = match r.factor_failed {
            Some(column) => format!("f32 factor failed (column {column})"),
            None if r.converged => r.iterations.to_string(),
            None => format!("{} (not converged)", r.iterations),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.2e} | {:.2e} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.m,
            r.method,
            r.x0_error,
            r.refined_error,
            iterations,
            short(r.gpu_x0_s),
            short(r.refine_s),
            short(r.gpu_total_s),
            short(r.cpu_s),
            short(r.speedup),
            r.torch_s.map_or("—".into(), short),
            r.speedup_torch().map_or("—".into(), short)
        );
    }
    let _ = write!(
        out,
        "\nThe paper's Table {} (Intel Xeon 3.0 GHz with MATLAB/MKL in double; GeForce 7800 GTX \
         in single):\n\n",
        kind.number()
    );
    out.push_str(HEADER);
    for r in kind.paper() {
        let _ = writeln!(
            out,
            "| {} | {:.2e} | {:.2e} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            r.m,
            r.x0_error,
            r.refined_error,
            r.iterations,
            r.x0_s,
            r.refine_s,
            r.total_s,
            r.cpu_s,
            r.speedup
        );
    }
    out
}

/// Three significant digits: fixed point from 0.1 up, scientific below (times of micro-
/// seconds and speed-ups of thousandths stay readable).
fn short(x: f64) -> String {
    if x >= 0.1 {
        format!("{x:.2}")
    } else {
        format!("{x:.2e}")
    }
}

/// Both regenerated tables and the files written.
#[derive(Clone, Debug)]
pub struct Tables {
    /// table1.md, table1.csv, table2.md, table2.csv under the output folder.
    pub files: Vec<PathBuf>,
}

/// Regenerates Tables 1 and 2 at `sizes` and writes table{1,2}.{md,csv} under `out_dir`
/// (created if missing).
pub fn write_tables(
    gpu: &Gpu,
    sizes: &[usize],
    out_dir: &Path,
    options: SolveOptions,
    seed: u64,
    torch_s: &dyn Fn(usize) -> Option<f64>,
) -> Result<Tables> {
    if sizes.is_empty() {
        return Err(Error::from(InputError::InvalidOption(
            "no sizes given for the tables".into(),
        )));
    }
    std::fs::create_dir_all(out_dir).map_err(|source| {
        Error::from(InputError::Unsupported(format!(
            "could not create {}: {source}",
            out_dir.display()
        )))
    })?;
    let device = format!(
        "{} ({}) for the GPU part, {} CPU thread(s) for faer",
        gpu.info().renderer,
        gpu.info().version,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let mut files = Vec::new();
    for kind in [ProblemKind::Random, ProblemKind::IllConditioned] {
        let mut rows = table(gpu, kind, sizes, options, seed)?;
        for r in &mut rows {
            r.torch_s = torch_s(r.m);
        }
        let stem = format!("table{}", kind.number());
        for (ext, text) in [
            ("md", to_markdown(kind, &rows, &device, options)),
            ("csv", to_csv(&rows)),
        ] {
            let path = out_dir.join(format!("{stem}.{ext}"));
            super::write_text(&path, &text)?;
            files.push(path);
        }
    }
    Ok(Tables { files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_hold_every_row_and_the_paper() {
        let row = TableRow {
            method: Method::Faithful,
            m: 64,
            n: 128,
            x0_error: 1e-4,
            refined_error: 1e-13,
            iterations: 3,
            converged: false,
            factor_failed: None,
            gpu_x0_s: 0.5,
            refine_s: 0.01,
            gpu_total_s: 0.51,
            cpu_s: 0.001,
            speedup: 0.002,
            torch_s: Some(0.102),
        };
        let csv = to_csv(&[row, row]);
        assert_eq!(csv.lines().count(), 3);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("faithful,64,128,1.000e-4,")
        );
        let md = to_markdown(
            ProblemKind::IllConditioned,
            &[row],
            "test",
            SolveOptions::paper(),
        );
        assert!(
            md.contains("| 64 | faithful |") && md.contains("3 (not converged)"),
            "{md}"
        );
        assert!(md.contains("| 2048 | 1.13e-1 | 3.41e-10 | 15 |"), "{md}");
        // torch's time and the speed-up against it: 0.102 / 0.51.
        assert!(md.contains("| 0.10 | 0.20 |"), "{md}");
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",0.102000,0.2000"),
            "{csv}"
        );
    }

    #[test]
    fn a_failed_single_precision_factor_is_a_row_that_says_so() {
        let row = TableRow::failed(Method::Tiled, 4096, 8192, 3903, 1.25);
        let csv = to_csv(&[row]);
        let line = csv.lines().nth(1).unwrap();
        assert!(
            line.starts_with("tiled,4096,8192,NaN,NaN,0,false,"),
            "{line}"
        );
        assert!(line.ends_with(",3903,,"), "{line}");
        let md = to_markdown(
            ProblemKind::IllConditioned,
            &[row],
            "test",
            SolveOptions::paper(),
        );
        assert!(md.contains("f32 factor failed (column 3903)"), "{md}");
    }
}
