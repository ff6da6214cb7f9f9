//! GPU timings of the tiled method for benchmarks and the reproduction binary: GL timer
//! queries (wall time to glFinish where the driver's timer misses them) around the kernels only (uploads and readback excluded, as the paper's Figs 8-9),
//! after a warm-up run and [`TiledKernels::preheat`], the median of several runs back to back.

use super::assembly::{DeviceProduct, add_to_diagonal, assemble};
use super::cholesky::{factor, factor_unchecked};
use super::kernels::{Operand, TiledKernels};
use super::launches::LaunchCounts;
use super::product::Product;
use super::solve::{DeviceRhs, solve_in_place};
use super::storage::{Storage, TiledMatrix, max_buffer_bytes, part_bytes};
use super::view::View;
use crate::error::Result;
use crate::gl::GpuTimer;
use crate::matrix::Matrix;
use crate::problems;
use crate::timing::median;
use std::time::Instant;

/// One timed operation.
#[derive(Clone, Debug, PartialEq)]
pub struct TiledTiming {
    /// "assembly", "cholesky" or "solve".
    pub op: &'static str,
    /// Full or RFP.
    pub storage: Storage,
    /// Order.
    pub m: usize,
    /// Columns of A (assembly), right-hand sides (solve), m (Cholesky).
    pub n: usize,
    /// Median GPU time in milliseconds.
    pub ms: f64,
    /// Useful floating-point operations per second, in GFLOP/s: m(m+1)·n for the lower
    /// triangle of the product, m³/3 for Cholesky, 2m²·n for the two solves.
    pub gflops: f64,
    /// Every timed run's milliseconds, in the order they ran (the median is `ms`).
    pub runs: Vec<f64>,
    /// Milliseconds of busy work ([`crate::timing::Preheat`]) before the timed runs.
    pub preheat_ms: f64,
}

impl TiledTiming {
    fn new(
        op: &'static str,
        storage: Storage,
        m: usize,
        n: usize,
        (runs, preheat_ms): (Vec<f64>, f64),
    ) -> Self {
        let ms = median(&runs);
        let (mf, nf) = (m as f64, n as f64);
        let flops = match op {
            "assembly" => mf * (mf + 1.0) * nf,
            "cholesky" => mf * mf * mf / 3.0,
            _ => 2.0 * mf * mf * nf,
        };
        Self {
            op,
            storage,
            m,
            n,
            ms,
            gflops: flops / (ms * 1e6),
            runs,
            preheat_ms,
        }
    }
}

/// Milliseconds of one run of `work`: GL_TIME_ELAPSED, or the wall time to the end of
/// glFinish where the timer reads under 1% of it (llvmpipe runs compute work outside its timer).
fn time_once(k: &TiledKernels, timer: &GpuTimer, work: impl FnOnce() -> Result<()>) -> Result<f64> {
    k.context().finish();
    let start = Instant::now();
    timer.begin();
    work()?;
    timer.end();
    k.context().finish();
    let wall = start.elapsed().as_secs_f64() * 1e3;
    let gpu = timer.elapsed()?.as_secs_f64() * 1e3;
    Ok(if gpu >= 0.01 * wall { gpu } else { wall })
}

/// Milliseconds of each of `runs` runs of `work` after one warm-up, and of the busy work
/// before them.
fn time_gpu(
    k: &TiledKernels,
    runs: usize,
    mut work: impl FnMut() -> Result<()>,
) -> Result<(Vec<f64>, f64)> {
    let timer = GpuTimer::new(k.context())?;
    work()?;
    let preheat = k.preheat().run(k.context()).as_secs_f64() * 1e3;
    let mut ms = Vec::new();
    for _ in 0..runs.max(1) {
        ms.push(time_once(k, &timer, &mut work)?);
    }
    Ok((ms, preheat))
}

fn random_product(k: &TiledKernels, m: usize, n: usize) -> Result<DeviceProduct> {
    let mut rng = problems::rng(1);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 4) as f32 * 0.25).collect();
    let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
    DeviceProduct::upload(k, &a, &d, max)
}

/// GPU time of the lower triangle of A·diag(d)·Aᵀ (A random m x n) in `storage`.
pub fn time_assembly(
    k: &TiledKernels,
    m: usize,
    n: usize,
    storage: Storage,
    runs: usize,
) -> Result<TiledTiming> {
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    let p = random_product(k, m, n)?;
    let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    let ms = time_gpu(k, runs, || assemble(k, &p, &mut c))?;
    Ok(TiledTiming::new("assembly", storage, m, n, ms))
}

/// A well-conditioned SPD matrix of order m in `storage`, made on the GPU: A·diag(d)·Aᵀ with A
/// random m x 2m where one buffer holds A, else as wide as one buffer allows plus m·I where
/// that leaves A no wider than m.
fn spd(k: &TiledKernels, m: usize, storage: Storage) -> Result<TiledMatrix> {
    let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
    let n = (2 * m).min((max / 4) as usize / m.max(1));
    let p = random_product(k, m, n)?;
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    assemble(k, &p, &mut c)?;
    if n <= m {
        add_to_diagonal(k, &mut c, m as f32)?;
    }
    Ok(c)
}

/// GPU time of the in-place Cholesky factorization of an SPD matrix of order m (the copy of
/// C into the work buffer before each run is not timed).
pub fn time_cholesky(
    k: &TiledKernels,
    m: usize,
    storage: Storage,
    runs: usize,
) -> Result<TiledTiming> {
    time_cholesky_of(k, &spd(k, m, storage)?, runs)
}

/// The SPD matrix [`time_cholesky`] factors (made once, for timing several kernels' tunings on
/// it with [`time_cholesky_of`]: at m = 16384 making it takes seconds).
pub fn spd_matrix(k: &TiledKernels, m: usize, storage: Storage) -> Result<TiledMatrix> {
    spd(k, m, storage)
}

/// [`time_cholesky`] of a copy of `c` (left as it is), with the kernels `k` (of its context).
pub fn time_cholesky_of(k: &TiledKernels, c: &TiledMatrix, runs: usize) -> Result<TiledTiming> {
    let (m, storage) = (c.order(), c.storage());
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    let mut work = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    work.copy_from(c)?;
    factor(k, &mut work)?;
    let timer = GpuTimer::new(k.context())?;
    let preheat = k.preheat().run(k.context()).as_secs_f64() * 1e3;
    let mut ms = Vec::new();
    for _ in 0..runs.max(1) {
        work.copy_from(c)?;
        ms.push(time_once(k, &timer, || factor_unchecked(k, &mut work))?);
    }
    Ok(TiledTiming::new("cholesky", storage, m, m, (ms, preheat)))
}

/// The launches of one Cholesky factorization of order m in `storage`, per kind, counted in a
/// dry run (nothing is launched or computed: any device counts the schedule of these kernels,
/// at any order whose buffers it can allocate). `max_storage_block_bytes` stands for the
/// device's where given: the matrix is cut into buffers as on a device with that limit, so a
/// software renderer counts a GPU's schedule.
pub fn count_cholesky(
    k: &TiledKernels,
    m: usize,
    storage: Storage,
    max_storage_block_bytes: Option<u64>,
) -> Result<LaunchCounts> {
    let block = max_storage_block_bytes.unwrap_or(k.limits().max_storage_block_bytes);
    let part = part_bytes(block, None);
    let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    let before = k.launch_counts();
    k.set_dry_run(true);
    let done = factor_unchecked(k, &mut c);
    k.set_dry_run(false);
    done?;
    Ok(k.launch_counts().since(&before))
}

/// Where a factorization's time goes, per kind of dispatch: for each entry, its name, the
/// dispatches timed, GPU microseconds per dispatch and CPU microseconds per dispatch to issue
/// them (glDispatchCompute returns before the GPU runs it: issuing slower than the GPU runs
/// means the GPU waits on the CPU). First the whole Cholesky of order m (full storage), then
/// `reps` back-to-back launches of each kernel it chains (on the same blocks: only the time
/// means anything) and of a 1 x 1 product (the fixed cost of a dispatch).
pub fn dispatch_profile(
    k: &TiledKernels,
    m: usize,
    reps: usize,
) -> Result<Vec<(String, u64, f64, f64)>> {
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    let c = spd(k, m, Storage::Full)?;
    let mut work = TiledMatrix::uninitialized(k.context(), m, Storage::Full, part)?;
    work.copy_from(&c)?;
    factor(k, &mut work)?;
    let timer = GpuTimer::new(k.context())?;
    k.preheat().run(k.context());
    let mut out = Vec::new();
    let mut measure = |name: String, work: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        k.context().finish();
        let before = k.launches();
        let start = Instant::now();
        timer.begin();
        work()?;
        timer.end();
        let submit = start.elapsed().as_secs_f64() * 1e6;
        k.context().finish();
        let gpu = timer.elapsed()?.as_secs_f64() * 1e6;
        let n = (k.launches() - before).max(1);
        out.push((name, n, gpu / n as f64, submit / n as f64));
        Ok(())
    };
    work.copy_from(&c)?;
    measure(format!("cholesky m={m}"), &mut || {
        factor_unchecked(k, &mut work)
    })?;
    let v = View::row_major(m, m);
    let buffer = work.buffer();
    let (d, reps) = (k.diag(), reps.max(1));
    let diagonal = Operand::new(buffer, v.sub(0, 0, d, d));
    measure(format!("potrf_inv_block {d}"), &mut || {
        (0..reps).try_for_each(|_| k.potrf_inv_block(diagonal, 0, 0))
    })?;
    let panel = Operand::new(buffer, v.sub(d, 0, m - d, d));
    measure(format!("multiply_by_inverse {}x{d}", m - d), &mut || {
        (0..reps).try_for_each(|_| k.multiply_by_inverse(panel, 0, d))
    })?;
    let w = k.outer() - d;
    let update = Operand::new(buffer, v.sub(d, d, m - d, w));
    let right = Operand::new(buffer, v.sub(d, 0, w, d));
    measure(format!("update {}x{w} depth {d}", m - d), &mut || {
        (0..reps).try_for_each(|_| k.gemm(Product::new(update, panel, right).subtract().lower()))
    })?;
    let one = Operand::new(buffer, v.sub(m - 1, 0, 1, 1));
    measure("product 1x1x1".into(), &mut || {
        (0..reps).try_for_each(|_| k.gemm(Product::new(one, one, one)))
    })?;
    k.check("the dispatch profile")?;
    Ok(out)
}

/// GPU time of the two triangular solves with a factor of order m for `rhs` right-hand sides.
pub fn time_solve(
    k: &TiledKernels,
    m: usize,
    rhs: usize,
    storage: Storage,
    runs: usize,
) -> Result<TiledTiming> {
    let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
    let mut l = spd(k, m, storage)?;
    factor(k, &mut l)?;
    let b = problems::uniform_matrix(&mut problems::rng(2), m, rhs);
    let mut x = DeviceRhs::upload(k, &b, max)?;
    let ms = time_gpu(k, runs, || solve_in_place(k, &l, &mut x))?;
    Ok(TiledTiming::new("solve", storage, m, rhs, ms))
}

/// One end-to-end run at a large order ([`large_run`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LargeRun {
    /// Order.
    pub m: usize,
    /// Columns of A (the rank of the product before the shift).
    pub n: usize,
    /// Full or RFP.
    pub storage: Storage,
    /// Storage buffers holding C.
    pub parts: usize,
    /// Bytes of C.
    pub bytes: u64,
    /// GPU milliseconds: assembly with the shift, Cholesky, the two solves (one right side).
    pub assembly_ms: f64,
    /// Cholesky.
    pub factor_ms: f64,
    /// Kernel launches of the Cholesky (the dependent chain; more where C is split).
    pub factor_launches: u64,
    /// Solves.
    pub solve_ms: f64,
    /// ‖b − C·x̂‖ / ‖b‖ in f64, C applied on the CPU through A.
    pub residual: f64,
    /// ‖x̂ − x‖ / ‖x‖ against the x that made b.
    pub forward_error: f64,
}

/// C = A·diag(d)·Aᵀ + m·I of order m (A seeded m x n, so C is made on the GPU without an m x m
/// host matrix; its condition number is about n/4), assembled, factored and solved for one
/// right side on the GPU, C split over storage buffers where one cannot hold it; assembly and
/// Cholesky `runs` times after a warm-up (median; the first run builds the launch tile lists),
/// the solves once, the solution checked on the CPU through A.
pub fn large_run(
    k: &TiledKernels,
    m: usize,
    n: usize,
    storage: Storage,
    runs: usize,
) -> Result<LargeRun> {
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    super::storage::check_order(m, storage, part, &k.limits())?;
    let mut rng = problems::rng(1);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 4) as f32 * 0.25).collect();
    let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
    let p = DeviceProduct::upload(k, &a, &d, max)?;
    let sigma = m as f32;
    let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    let timer = GpuTimer::new(k.context())?;
    let (mut assembly, mut factoring, mut factor_launches) = (Vec::new(), Vec::new(), 0);
    k.preheat().run(k.context());
    for run in 0..=runs.max(1) {
        let assembly_ms = time_once(k, &timer, || {
            assemble(k, &p, &mut c)?;
            add_to_diagonal(k, &mut c, sigma)
        })?;
        k.reset_status()?;
        let before = k.launches();
        let factor_ms = time_once(k, &timer, || factor_unchecked(k, &mut c))?;
        factor_launches = k.launches() - before;
        k.check_status()?;
        if run > 0 {
            assembly.push(assembly_ms);
            factoring.push(factor_ms);
        }
    }
    let (assembly_ms, factor_ms) = (median(&assembly), median(&factoring));
    // b = C·x in f64 through A: A·(d ∘ (Aᵀ·x)) + σ·x.
    let x: Vec<f64> = (0..m).map(|i| 1.0 + (i % 7) as f64 / 7.0).collect();
    let apply = |x: &[f64]| -> Vec<f64> {
        let mut t = vec![0.0f64; n];
        for (i, &xi) in x.iter().enumerate() {
            for (tj, &aij) in t.iter_mut().zip(a.row(i)) {
                *tj += f64::from(aij) * xi;
            }
        }
        for (tj, &dj) in t.iter_mut().zip(&d) {
            *tj *= f64::from(dj);
        }
        (0..m)
            .map(|i| {
                let ai: f64 = a
                    .row(i)
                    .iter()
                    .zip(&t)
                    .map(|(&v, tj)| f64::from(v) * tj)
                    .sum();
                ai + f64::from(sigma) * x[i]
            })
            .collect()
    };
    let b = apply(&x);
    let b32 = Matrix::from_row_major(m, 1, b.iter().map(|&v| v as f32).collect())?;
    let mut rhs = DeviceRhs::upload(k, &b32, max)?;
    let solve_ms = time_once(k, &timer, || solve_in_place(k, &c, &mut rhs))?;
    let xh: Vec<f64> = rhs
        .download()?
        .as_slice()
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|e| e * e).sum::<f64>().sqrt();
    let cx = apply(&xh);
    let residual = norm(&mut b.iter().zip(&cx).map(|(p, q)| p - q)) / norm(&mut b.iter().copied());
    let forward_error =
        norm(&mut x.iter().zip(&xh).map(|(p, q)| p - q)) / norm(&mut x.iter().copied());
    Ok(LargeRun {
        m,
        n,
        storage,
        parts: c.part_count(),
        bytes: storage.len(m) as u64 * 4,
        assembly_ms,
        factor_ms,
        factor_launches,
        solve_ms,
        residual,
        forward_error,
    })
}

/// GPU times of the pieces of [`CholeskySchedule::Split`](super::schedule::CholeskySchedule)'s
/// first split of a copy of the full-storage `c` (order m, n1 = m/2 in whole tiles), each
/// timed alone in the order they run, median of `runs`: `split-l11` the left half's
/// factor (one chained launch where n1 is at most the split's chain order), `split-l21` the
/// solve of B21 (m − n1 by n1) as the split runs it (the kernels'
/// [`SplitSolve`](super::schedule::SplitSolve)), `split-syrk` the lower-tile
/// product B22 − L21·L21ᵀ, `split-l22` the trailing half's factor. GFLOP/s: n1³/3,
/// n1²·(m − n1), n1·(m − n1)², (m − n1)³/3. Where n1 is above the chain order (16384 with
/// halves of 4096) the slots hold the left half's last leaf's inverses: the solve's time is
/// right, its values are not.
pub fn time_split_pieces(k: &TiledKernels, c: &TiledMatrix, runs: usize) -> Result<Vec<TiledTiming>> {
    use super::cholesky::split::{block_column, left_width};
    use super::view::View;
    let m = c.order();
    let super::storage::Triangle::Square(v) = c.triangle() else {
        return Err(crate::error::Error::shape("the split's pieces are timed in full storage"));
    };
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    let work = TiledMatrix::uninitialized(k.context(), m, Storage::Full, part)?;
    let n1 = left_width(m, k.chain_tile()).min(m);
    let n2 = m - n1;
    let r = |view: View| work.region(view);
    let (l11, l21, l22) = (v.sub(0, 0, n1, n1), v.sub(n1, 0, n2, n1), v.sub(n1, n1, n2, n2));
    let timer = GpuTimer::new(k.context())?;
    let mut ms = vec![Vec::new(); 4];
    let mut preheat_ms = 0.0;
    for run in 0..=runs.max(1) {
        work.copy_from(c)?;
        let pieces: [&dyn Fn() -> Result<()>; 4] = [
            &|| block_column(k, r(l11), 0, &mut false),
            &|| super::cholesky::split::solve_below_leaf(k, r(l21), r(l11)),
            &|| super::parts::product(k, Product::new(r(l22), r(l21), r(l21)).subtract().lower()),
            &|| block_column(k, r(l22), n1, &mut false),
        ];
        if run == 1 {
            preheat_ms = k.preheat().run(k.context()).as_secs_f64() * 1e3;
        }
        for (times, piece) in ms.iter_mut().zip(pieces) {
            let t = time_once(k, &timer, piece)?;
            // The first run warms up.
            if run > 0 {
                times.push(t);
            }
        }
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let flops = [f1 * f1 * f1 / 3.0, f1 * f1 * f2, f1 * f2 * f2, f2 * f2 * f2 / 3.0];
    let names = ["split-l11", "split-l21", "split-syrk", "split-l22"];
    Ok(names
        .into_iter()
        .zip(ms)
        .zip(flops)
        .map(|((op, times), flops)| {
            let ms = median(&times);
            TiledTiming {
                op,
                storage: Storage::Full,
                m,
                n: n1,
                ms,
                gflops: flops / (ms * 1e6),
                runs: times,
                preheat_ms,
            }
        })
        .collect())
}
