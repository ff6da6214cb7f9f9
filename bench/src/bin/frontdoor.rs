//! The Rust API's front door end to end (issue 42): each public operation timed from the
//! caller's host arrays (`Matrix`, slices, `Batch`) to its host results, as a Rust user calls
//! it, in one process. The `Gpu` is opened once before anything is timed (its context, not
//! counted); every op and size then gets one first call (the warm-up, printed as `first_ms`:
//! it carries that op's kernel compilation and first touch of its buffers at that size) and
//! `--runs` timed calls (wall time, `std::time::Instant`), whose median is `symraster_ms`. The
//! GPU's clocks are not brought up first: the caller's first call is the only warm-up.
//!
//! Ops (f64 unless said; C symmetric with entries uniform in (−1, 1) off the diagonal and m on
//! it, as solve_bench's; A, d, b uniform in (0, 1), section 5.3's random problem):
//! - `solve_pos`: `Gpu::spd_solve(C, b)`, C m×m, b m; float64, and float32 (C and b rounded
//!   to f32: the solve refined to f64's accuracy of the f32 system); its factor as
//!   `--spd-factor auto|single|double` names it (`SpdFactor`, default auto).
//! - `cholesky` float64: `Gpu::cholesky_double(C)` (C's lower triangle read where it lies);
//!   float32: `Gpu::cholesky(C32)` then `.into_l()`.
//! - `cho_factor_solve`: `Gpu::cholesky_double(C)` then `host::cholesky_solve(L, b)`, one right
//!   side.
//! - `inv_pos`: `Gpu::invert(C, InvertOptions::spd())`.
//! - `inv`: `Gpu::invert(G, InvertOptions::default())` of a general G (C with its upper
//!   triangle redrawn uniform in (−1, 1): nonsymmetric, diagonally dominant).
//! - `weighted_lstsq`: `Gpu::least_squares_view(A, d, b)`, A m×n with n = 2m read where it lies
//!   from X = Aᵀ (n, m) row-major, as the Python package is given it (`--lstsq-layout rows`: A
//!   row-major); d and b n.
//! - batched, float32, order n and B problems (`--batched n:B,...`, default the issue's
//!   8:100000,16:100000,32:20000): `batched_weighted_lstsq` (`gpu.batched().least_squares_as`,
//!   A (B, n, 2n) read where it lies from X = Aᵀ (B, 2n, n) row-major, as the Python package
//!   is given it; `--lstsq-layout rows`: A row-major; d and b (B, 2n)), `batched_cholesky`
//!   (C (B, n, n)), `batched_solve` (`spd_solve_as`, C (B, n, n) and b (B, n)), `BatchOptions`
//!   with the upper triangles checked finite as the Python package's default (scipy's
//!   `check_finite`) checks them (`--check-upper off`: the library's default, not checked); x
//!   in float32, as the Python package returns it for float32 stacks.
//!
//! CSV on stdout: `op,m,n,api,dtype,symraster_ms,first_ms` with api `rust`; m the order (n
//! for the batched ops), n: m for the square ops, 2m for weighted_lstsq, B for the batched
//! ones. Each result is checked after the timing, untimed and cheaply (a backward error
//! through products with one vector; the batched ops on four problems against f64 sums); a
//! failed check prints `WRONG op,m,dtype: ...` on stderr, an error `ERROR op,m,dtype: ...`,
//! and that op's row is left out.
//!
//!     cargo run --release -p symraster-bench --bin frontdoor -- [--runs 5] [--large-runs 3]
//!         [--max-seconds 30] [--ops solve_pos,...] [--batched 8:100000,...|none] [1024 4096 8192]
//!
//! `--large-runs`: the timed runs at m ≥ 8192; `--max-seconds`: no further run of an op and
//! size once its timed runs add up to this (at least one runs); `--on-thread`: the `Gpu` opened
//! and every call made on a thread spawned for it, as the Python package's worker makes them;
//! `--chain plain`: the chained Cholesky (f32 and f64) without its fold, look-ahead and polls by
//! loads (`Tuning::chain_fold`, `chain_ahead`, `chain_poll`), to time against the default.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;
use symraster::matrix::MatrixView;
use symraster::{
    Batch, BatchOptions, BatchRef, Gpu, InvertOptions, Matrix, Options, SolveOptions, SpdFactor,
    SymmetricView, host,
};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const DENSE_OPS: [&str; 6] = [
    "solve_pos",
    "cholesky",
    "cho_factor_solve",
    "inv_pos",
    "inv",
    "weighted_lstsq",
];
const BATCHED_OPS: [&str; 3] = [
    "batched_weighted_lstsq",
    "batched_cholesky",
    "batched_solve",
];

struct Settings {
    runs: usize,
    large_runs: usize,
    max_seconds: f64,
    /// The SPD solve's factor (`--spd-factor auto|single|double`).
    spd_factor: SpdFactor,
    /// The batched Cholesky's and solve's upper triangles checked finite (`--check-upper
    /// on|off`, default on: what the Python package's default, scipy's `check_finite`, asks).
    check_upper: bool,
    /// The least squares' A (dense and batched) given as X = Aᵀ, observations first, as the
    /// Python package takes it (`--lstsq-layout observations`, the default), or row-major (`rows`).
    observations_first: bool,
}

impl Settings {
    fn runs_at(&self, m: usize) -> usize {
        if m >= 8192 {
            self.large_runs
        } else {
            self.runs
        }
    }
}

/// The first call's ms, the median ms of the timed runs after it, and the last result.
struct Timed<R> {
    first_ms: f64,
    median_ms: f64,
    result: R,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One first call, then up to `runs` timed calls (at least one; none more once they add up to
/// `max_seconds`).
fn time<R>(
    runs: usize,
    max_seconds: f64,
    mut f: impl FnMut() -> symraster::Result<R>,
) -> Result<Timed<R>> {
    let t = Instant::now();
    let mut result = f()?;
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::new();
    let mut spent = 0.0;
    while times.len() < runs.max(1) && (times.is_empty() || spent < max_seconds) {
        let t = Instant::now();
        result = f()?;
        let s = t.elapsed().as_secs_f64();
        spent += s;
        times.push(s * 1e3);
    }
    Ok(Timed {
        first_ms,
        median_ms: median(times),
        result,
    })
}

/// C symmetric, uniform in (−1, 1) off the diagonal and m on it (diagonally dominant: SPD and
/// well conditioned).
fn spd_matrix(m: usize, rng: &mut ChaCha8Rng) -> Matrix<f64> {
    let mut c = Matrix::from_fn(m, m, |_, _| rng.random_range(-1.0..1.0));
    for i in 0..m {
        for j in 0..i {
            c[(j, i)] = c[(i, j)];
        }
        c[(i, i)] = m as f64;
    }
    c
}

fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |a, x| a.max(x.abs()))
}

/// ‖M‖∞ of a row-major matrix of `cols` columns.
fn matrix_norm_inf<T: Copy + Into<f64>>(data: &[T], cols: usize) -> f64 {
    data.chunks(cols)
        .map(|row| row.iter().map(|&x| x.into().abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// ‖Mᵀ‖∞ (the largest column sum) of a row-major matrix of `cols` columns.
fn matrix_norm_1<T: Copy + Into<f64>>(data: &[T], cols: usize) -> f64 {
    let mut sums = vec![0.0f64; cols];
    for row in data.chunks(cols) {
        for (s, &x) in sums.iter_mut().zip(row) {
            *s += x.into().abs();
        }
    }
    sums.into_iter().fold(0.0, f64::max)
}

/// M·v for a row-major matrix of `cols` columns (entries widened to f64).
fn mul<T: Copy + Into<f64>>(data: &[T], cols: usize, v: &[f64]) -> Vec<f64> {
    data.chunks(cols)
        .map(|row| row.iter().zip(v).map(|(&a, &x)| a.into() * x).sum())
        .collect()
}

/// Mᵀ·v for a row-major matrix of `cols` columns.
fn mul_t<T: Copy + Into<f64>>(data: &[T], cols: usize, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; cols];
    for (row, &x) in data.chunks(cols).zip(v) {
        for (o, &a) in out.iter_mut().zip(row) {
            *o += a.into() * x;
        }
    }
    out
}

/// ‖C·x − b‖∞ / (‖C‖∞‖x‖∞ + ‖b‖∞), C row-major of order b.len().
fn backward_error<T: Copy + Into<f64>>(c: &[T], x: &[f64], b: &[f64]) -> f64 {
    let m = b.len();
    let cx = mul(c, m, x);
    let r: Vec<f64> = cx.iter().zip(b).map(|(a, b)| a - b).collect();
    norm_inf(&r) / (matrix_norm_inf(c, m) * norm_inf(x) + norm_inf(b))
}

/// ‖L·(Lᵀ·v) − C·v‖∞ / (‖C‖∞‖v‖∞): L as given (its upper triangle too).
fn factor_error<T: Copy + Into<f64>>(l: &[T], c: &[f64], v: &[f64]) -> f64 {
    let m = v.len();
    let llv = mul(l, m, &mul_t(l, m, v));
    let cv = mul(c, m, v);
    let r: Vec<f64> = llv.iter().zip(&cv).map(|(a, b)| a - b).collect();
    norm_inf(&r) / (matrix_norm_inf(c, m) * norm_inf(v))
}

/// ‖A·diag(d)·(b − Aᵀx)‖∞ / (‖A‖∞‖d‖∞(‖Aᵀ‖∞‖x‖∞ + ‖b‖∞)): the normal equations' backward
/// error, A row-major m×n (0 at the exact least-squares solution).
fn lstsq_error<T: Copy + Into<f64>>(a: &[T], d: &[f64], b: &[f64], x: &[f64]) -> f64 {
    let n = b.len();
    let r: Vec<f64> = mul_t(a, n, x).iter().zip(b).map(|(ax, b)| b - ax).collect();
    let dr: Vec<f64> = r.iter().zip(d).map(|(r, d)| r * d).collect();
    let g = mul(a, n, &dr);
    let (norm_a, norm_at) = (matrix_norm_inf(a, n), matrix_norm_1(a, n));
    norm_inf(&g) / (norm_a * norm_inf(d) * (norm_at * norm_inf(x) + norm_inf(b)))
}

/// ‖X·(M·v) − v‖∞ / ‖v‖∞ of an inverse X of M (κ(M) is near 1 here).
fn inverse_error(x: &[f64], m: &Matrix<f64>, v: &[f64]) -> f64 {
    let n = v.len();
    let xmv = mul(x, n, &mul(m.as_slice(), n, v));
    let r: Vec<f64> = xmv.iter().zip(v).map(|(a, b)| a - b).collect();
    norm_inf(&r) / norm_inf(v)
}

/// Prints the row, or WRONG on stderr where `error` is above `tolerance`.
fn report<R>(op: &str, m: usize, n: usize, dtype: &str, timed: &Timed<R>, error: f64, tol: f64) {
    if error.is_nan() || error > tol {
        eprintln!("WRONG {op},{m},{dtype}: error {error:.3e} above {tol:.1e}");
        return;
    }
    eprintln!("# {op},{m},{dtype}: error {error:.2e}");
    println!(
        "{op},{m},{n},rust,{dtype},{:.3},{:.3}",
        timed.median_ms, timed.first_ms
    );
}

fn dense(gpu: &Gpu, settings: &Settings, ops: &[String], m: usize) -> Result<()> {
    let want = |op: &str| ops.iter().any(|o| o == op);
    let runs = settings.runs_at(m);
    let max = settings.max_seconds;
    let mut rng = ChaCha8Rng::seed_from_u64(m as u64);
    let c = spd_matrix(m, &mut rng);
    let b: Vec<f64> = (0..m).map(|_| rng.random_range(0.0..1.0)).collect();
    let v: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
    let fail = |op: &str, dtype: &str, e: Box<dyn std::error::Error>| {
        eprintln!("ERROR {op},{m},{dtype}: {e}")
    };
    if want("solve_pos") {
        let options = SolveOptions::default().spd_factor(settings.spd_factor);
        match time(runs, max, || gpu.spd_solve(&c, &b, options)) {
            Ok(t) => {
                let e = backward_error(c.as_slice(), &t.result.x, &b);
                report("solve_pos", m, m, "float64", &t, e, 1e-11);
            }
            Err(e) => fail("solve_pos", "float64", e),
        }
        let (c32, b32) = (
            c.map(|x| x as f32),
            b.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        );
        match time(runs, max, || gpu.spd_solve(&c32, &b32, options)) {
            Ok(t) => {
                let (c64, b64) = (
                    c32.map(f64::from),
                    b32.iter().map(|&x| f64::from(x)).collect::<Vec<_>>(),
                );
                let e = backward_error(c64.as_slice(), &t.result.x, &b64);
                report("solve_pos", m, m, "float32", &t, e, 1e-11);
            }
            Err(e) => fail("solve_pos", "float32", e),
        }
    }
    if want("cholesky") {
        let view = SymmetricView::lower(&c);
        match time(runs, max, || gpu.cholesky_double(view, Default::default())) {
            Ok(t) => {
                let e = factor_error(t.result.as_slice(), c.as_slice(), &v);
                report("cholesky", m, m, "float64", &t, e, 1e-12);
            }
            Err(e) => fail("cholesky", "float64", e),
        }
        let c32 = c.map(|x| x as f32);
        match time(runs, max, || {
            gpu.cholesky(&c32, Options::default())?.into_l()
        }) {
            Ok(t) => {
                let c32_64 = c32.map(f64::from);
                let e = factor_error(t.result.as_slice(), c32_64.as_slice(), &v);
                report("cholesky", m, m, "float32", &t, e, 2e-8 * m as f64);
            }
            Err(e) => fail("cholesky", "float32", e),
        }
    }
    if want("cho_factor_solve") {
        let rhs = Matrix::from_fn(m, 1, |i, _| b[i]);
        let solve = || {
            let l = gpu.cholesky_double(SymmetricView::lower(&c), Default::default())?;
            host::cholesky_solve(&l, &rhs)
        };
        match time(runs, max, solve) {
            Ok(t) => {
                let e = backward_error(c.as_slice(), t.result.as_slice(), &b);
                report("cho_factor_solve", m, m, "float64", &t, e, 1e-11);
            }
            Err(e) => fail("cho_factor_solve", "float64", e),
        }
    }
    if want("inv_pos") {
        match time(runs, max, || gpu.invert(&c, InvertOptions::spd())) {
            Ok(t) => {
                let e = inverse_error(t.result.x.as_slice(), &c, &v);
                report("inv_pos", m, m, "float64", &t, e, 1e-11);
            }
            Err(e) => fail("inv_pos", "float64", e),
        }
    }
    if want("inv") {
        let mut g = c.clone();
        for i in 0..m {
            for j in i + 1..m {
                g[(i, j)] = rng.random_range(-1.0..1.0);
            }
        }
        match time(runs, max, || gpu.invert(&g, InvertOptions::default())) {
            Ok(t) => {
                let e = inverse_error(t.result.x.as_slice(), &g, &v);
                report("inv", m, m, "float64", &t, e, 1e-11);
            }
            Err(e) => fail("inv", "float64", e),
        }
    }
    if want("weighted_lstsq") {
        drop(c);
        let n = 2 * m;
        let mut u = || rng.random_range(f64::MIN_POSITIVE..1.0);
        let a = Matrix::from_fn(m, n, |_, _| u());
        let d: Vec<f64> = (0..n).map(|_| u()).collect();
        let b: Vec<f64> = (0..n).map(|_| u()).collect();
        // A row-major, or as the Python package is given it: X = Aᵀ (n observations x m
        // unknowns) row-major, A read where it lies.
        let x = settings
            .observations_first
            .then(|| Matrix::from_fn(n, m, |i, j| a[(j, i)]));
        let view = match &x {
            Some(x) => MatrixView::new(x.as_slice(), n, m, m, 1)?.transpose(),
            None => MatrixView::from(&a),
        };
        match time(runs, max, || {
            gpu.least_squares_view(view, &d, &b, SolveOptions::default())
        }) {
            Ok(t) => {
                let e = lstsq_error(a.as_slice(), &d, &b, &t.result.x);
                report("weighted_lstsq", m, n, "float64", &t, e, 1e-12);
            }
            Err(e) => fail("weighted_lstsq", "float64", e),
        }
    }
    Ok(())
}

/// B float32 matrices C (B, n, n) as `spd_matrix`'s, and B right sides in (0, 1).
fn spd_batch(n: usize, count: usize, rng: &mut ChaCha8Rng) -> Result<(Batch<f32>, Batch<f32>)> {
    let mut c = vec![0f32; count * n * n];
    for p in c.chunks_mut(n * n) {
        for i in 0..n {
            for j in 0..i {
                let x = rng.random_range(-1.0f32..1.0);
                p[i * n + j] = x;
                p[j * n + i] = x;
            }
            p[i * n + i] = n as f32;
        }
    }
    let b = (0..count * n)
        .map(|_| rng.random_range(0.0f32..1.0))
        .collect();
    Ok((Batch::new(count, n, n, c)?, Batch::vectors(count, n, b)?))
}

fn batched(gpu: &Gpu, settings: &Settings, ops: &[String], n: usize, count: usize) -> Result<()> {
    let want = |op: &str| ops.iter().any(|o| o == op);
    let (runs, max) = (settings.runs, settings.max_seconds);
    let mut rng = ChaCha8Rng::seed_from_u64((n * 1_000_003 + count) as u64);
    let options = BatchOptions::default().check_upper(settings.check_upper);
    let batched = gpu.batched();
    let samples = [0, count / 3, count / 2, count - 1];
    let fail = |op: &str, e: Box<dyn std::error::Error>| {
        eprintln!("ERROR {op},{n},float32 (B = {count}): {e}")
    };
    let widen = |s: &[f32]| s.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let failed = |info: &[i32]| info.iter().filter(|&&i| i != 0).count() as f64;
    if want("batched_weighted_lstsq") {
        let k = 2 * n;
        let values: Vec<f32> = (0..count * n * k)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        // Each problem's A (n x k) row-major, or as the Python package is given it: X = Aᵀ
        // (k observations x n unknowns) row-major, A read where it lies by its strides.
        let a = if settings.observations_first {
            BatchRef::from_strides(count, n, k, [k * n, 1, n], &values)?
        } else {
            BatchRef::from_strides(count, n, k, [n * k, k, 1], &values)?
        };
        let a_of = |p: usize| -> Vec<f32> { (0..n * k).map(|e| a.get(p, e / k, e % k)).collect() };
        let d = Batch::vectors(
            count,
            k,
            (0..count * k)
                .map(|_| rng.random_range(0.5f32..1.5))
                .collect(),
        )?;
        let b = Batch::vectors(
            count,
            k,
            (0..count * k)
                .map(|_| rng.random_range(0.0f32..1.0))
                .collect(),
        )?;
        // x in float32, as the Python package returns it for float32 stacks.
        match time(runs, max, || {
            batched.least_squares_as::<f32, _>(&a, &d, &b, options)
        }) {
            Ok(t) => {
                let mut e = failed(&t.result.info);
                for &p in &samples {
                    let (dp, bp) = (widen(d.problem(p)), widen(b.problem(p)));
                    let x = widen(t.result.x.problem(p));
                    e = e.max(lstsq_error(&a_of(p), &dp, &bp, &x));
                }
                report("batched_weighted_lstsq", n, count, "float32", &t, e, 1e-5);
            }
            Err(e) => fail("batched_weighted_lstsq", e),
        }
    }
    if want("batched_cholesky") || want("batched_solve") {
        let (c, b) = spd_batch(n, count, &mut rng)?;
        let v: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        if want("batched_cholesky") {
            match time(runs, max, || batched.cholesky(&c, options)) {
                Ok(t) => {
                    let mut e = failed(&t.result.info);
                    for &p in &samples {
                        let cp = widen(c.problem(p));
                        e = e.max(factor_error(t.result.l.problem(p), &cp, &v));
                    }
                    report("batched_cholesky", n, count, "float32", &t, e, 1e-5);
                }
                Err(e) => fail("batched_cholesky", e),
            }
        }
        if want("batched_solve") {
            match time(runs, max, || {
                batched.spd_solve_as::<f32, _>(&c, &b, options)
            }) {
                Ok(t) => {
                    let mut e = failed(&t.result.info);
                    for &p in &samples {
                        let bp = widen(b.problem(p));
                        let x = widen(t.result.x.problem(p));
                        e = e.max(backward_error(c.problem(p), &x, &bp));
                    }
                    report("batched_solve", n, count, "float32", &t, e, 1e-5);
                }
                Err(e) => fail("batched_solve", e),
            }
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    env_logger::init();
    let mut settings = Settings {
        runs: 5,
        large_runs: 3,
        max_seconds: 30.0,
        spd_factor: SpdFactor::Auto,
        check_upper: true,
        observations_first: true,
    };
    let mut ops: Vec<String> = DENSE_OPS
        .iter()
        .chain(&BATCHED_OPS)
        .map(|s| s.to_string())
        .collect();
    let mut batches = vec![(8, 100_000), (16, 100_000), (32, 20_000)];
    let mut sizes = Vec::new();
    let mut on_thread = false;
    let mut tuning = symraster::Tuning::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{arg} needs {what}"));
        match arg.as_str() {
            "--on-thread" => on_thread = true,
            "--chain" => match value("plain or default")?.as_str() {
                "plain" => {
                    tuning.chain_fold = Some(false);
                    tuning.chain_ahead = Some(0);
                    tuning.chain_poll = Some(symraster::tiled::ChainPoll::Sparse);
                }
                "default" => {}
                other => return Err(format!("unknown --chain {other}").into()),
            },
            "--check-upper" => {
                settings.check_upper = match value("on or off")?.as_str() {
                    "on" => true,
                    "off" => false,
                    other => return Err(format!("unknown --check-upper {other}").into()),
                }
            }
            "--lstsq-layout" => {
                settings.observations_first = match value("observations or rows")?.as_str() {
                    "observations" => true,
                    "rows" => false,
                    other => return Err(format!("unknown --lstsq-layout {other}").into()),
                }
            }
            "--runs" => settings.runs = value("a count")?.parse()?,
            "--large-runs" => settings.large_runs = value("a count")?.parse()?,
            "--max-seconds" => settings.max_seconds = value("seconds")?.parse()?,
            "--spd-factor" => {
                settings.spd_factor = match value("auto, single or double")?.as_str() {
                    "auto" => SpdFactor::Auto,
                    "single" => SpdFactor::Single,
                    "double" => SpdFactor::Double,
                    other => return Err(format!("unknown --spd-factor {other}").into()),
                }
            }
            "--ops" => {
                ops = value("a list")?.split(',').map(String::from).collect();
                if let Some(o) = ops.iter().find(|o| {
                    !DENSE_OPS.contains(&o.as_str()) && !BATCHED_OPS.contains(&o.as_str())
                }) {
                    return Err(format!(
                        "unknown op {o} (one of {}, {})",
                        DENSE_OPS.join(", "),
                        BATCHED_OPS.join(", ")
                    )
                    .into());
                }
            }
            "--batched" => {
                let list = value("n:B pairs or none")?;
                batches = if list == "none" {
                    Vec::new()
                } else {
                    list.split(',')
                        .map(|item| -> Result<(usize, usize)> {
                            let (n, b) = item.split_once(':').ok_or("--batched takes n:B pairs")?;
                            Ok((n.trim().parse()?, b.trim().parse()?))
                        })
                        .collect::<Result<_>>()?
                };
            }
            list => {
                for s in list.split(',').filter(|s| !s.is_empty()) {
                    sizes.push(s.trim().parse()?);
                }
            }
        }
    }
    if sizes.is_empty() {
        sizes = vec![1024, 4096, 8192];
    }
    let run = move || run(tuning, &settings, &ops, &sizes, &batches).map_err(|e| e.to_string());
    if on_thread {
        let worker = std::thread::Builder::new().name("frontdoor-gpu".into());
        worker
            .spawn(run)?
            .join()
            .map_err(|_| "the GPU thread panicked")??;
    } else {
        run()?;
    }
    Ok(())
}

/// Opens the `Gpu` and times the ops at each size, then the batched ones.
fn run(
    tuning: symraster::Tuning,
    settings: &Settings,
    ops: &[String],
    sizes: &[usize],
    batches: &[(usize, usize)],
) -> Result<()> {
    let t = Instant::now();
    let gpu = Gpu::builder()
        .tuning(tuning)
        .vars(std::env::vars())?
        .build()?;
    eprintln!(
        "# {}; Gpu opened in {:.1} ms (not counted)",
        gpu.info().renderer,
        t.elapsed().as_secs_f64() * 1e3
    );
    println!("op,m,n,api,dtype,symraster_ms,first_ms");
    for &m in sizes {
        dense(&gpu, settings, ops, m)?;
    }
    for &(n, count) in batches {
        batched(&gpu, settings, ops, n, count)?;
    }
    Ok(())
}
