//! GPU timings of the inversion methods for the reproduction binary's inversion figure
//! (GFLOP/s against the order s, standard flop counts: 2s³ general, s³ SPD, as Benner et al.
//! Figs 6-7). The matrix is uploaded before the timer starts and read back after it stops
//! (the paper leaves the first transfer and the last retrieval out too); the GL_TIME_ELAPSED
//! query covers all the inversion's dispatches, the status check follows it.

use super::gje::PivotWork;
use super::kernels::{DeviceSquare, Inverter};
use super::{InverseMethod, Kind, Storage, check_method, gje, lu, pivot_tolerance, rfp, spd};
use crate::error::{InputError, Result};
use crate::gl::GpuTimer;
use crate::layout::rfp as rfp_layout;
use crate::matrix::Matrix;
use crate::timing::median;
use std::time::Instant;

/// One timed configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InverseTiming {
    /// SPD or general.
    pub kind: Kind,
    /// The method.
    pub method: InverseMethod,
    /// Full or RFP storage.
    pub storage: Storage,
    /// The order s.
    pub order: usize,
    /// The block size b.
    pub block: usize,
    /// Median GPU time (GL_TIME_ELAPSED) in milliseconds.
    pub gpu_ms: f64,
    /// Median wall time to the end of glFinish, in milliseconds.
    pub wall_ms: f64,
    /// Standard flops over the median GPU time, in GFLOP/s (over the wall time where the driver's
    /// timer query reports under 1% of it: llvmpipe does not count compute dispatches).
    pub gflops: f64,
}

/// A stable nonsymmetric test matrix of order s for the sign function and Lyapunov
/// (bench/src/bin/sign_timing.rs, sign_phases.rs): −(the SPD test matrix)/s plus a skew part, with
/// eigenvalues' real parts in about [−1.5, −0.5].
pub fn stable_test_matrix(s: usize) -> Matrix<f64> {
    let spd = test_matrix(Kind::Spd, s).symmetric_from_lower();
    let skew = test_matrix(Kind::General, s);
    Matrix::from_fn(s, s, |i, j| {
        let k = if (i + 1) % s == j || (j + 1) % s == i {
            0.0
        } else {
            f64::from(skew[(i, j)] - skew[(j, i)])
        };
        -f64::from(spd[(i, j)]) / s as f64 + k / (s as f64).sqrt()
    })
}

/// A deterministic test matrix of order s that inverts without trouble: for SPD, symmetric
/// with entries in (−½, ½) plus s·I (diagonally dominant); for general, the same without
/// symmetry and with the shift on the superdiagonal, so partial pivoting swaps rows.
pub fn test_matrix(kind: Kind, s: usize) -> Matrix<f32> {
    use rayon::prelude::*;
    let hash = |i: usize, j: usize| {
        let mut h =
            (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j as u64).wrapping_add(0x632B_E59B);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        (h >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    // Rows in parallel: at s = 16384 these are 2^28 entries per call of the timing entry.
    let mut data = vec![0.0f32; s * s];
    data.par_chunks_mut(s.max(1))
        .enumerate()
        .for_each(|(i, row)| {
            for (j, v) in row.iter_mut().enumerate() {
                *v = match kind {
                    Kind::Spd => hash(i.max(j), i.min(j)) + if i == j { s as f32 } else { 0.0 },
                    Kind::General => hash(i, j) + if j == (i + 1) % s { s as f32 } else { 0.0 },
                };
            }
        });
    Matrix::from_row_major(s, s, data).expect("s x s values")
}

/// Times `method` on an order-`s` matrix of `kind` with block size `block` (None: the
/// default), `reps` runs after one warm-up; fails as the inversion would (e.g. a Cholesky
/// request for a general matrix).
pub fn time_inverse(
    inv: &Inverter,
    kind: Kind,
    method: InverseMethod,
    s: usize,
    block: Option<usize>,
    reps: usize,
) -> Result<InverseTiming> {
    time_inverse_in(inv, kind, method, Storage::Full, s, block, reps)
}

/// [`time_inverse`] in full or RFP storage (RFP: the SPD inverse via Cholesky only).
pub fn time_inverse_in(
    inv: &Inverter,
    kind: Kind,
    method: InverseMethod,
    storage: Storage,
    s: usize,
    block: Option<usize>,
    reps: usize,
) -> Result<InverseTiming> {
    check_method(kind, method, storage)?;
    let method = method.resolve(kind, s);
    if s == 0 {
        return Err(InputError::Unsupported(format!(
            "timing {} inversion of an order-{s} {} matrix",
            method.name(),
            kind.name()
        ))
        .into());
    }
    let block = block
        .unwrap_or_else(|| super::default_block(inv, kind, method, s))
        .max(1);
    let a = test_matrix(kind, s);
    // The LU of an SPD matrix runs without pivoting, failing on a pivot not positive.
    let spd_lu = kind == Kind::Spd && method == InverseMethod::Lu;
    let tol = if spd_lu { 0.0 } else { pivot_tolerance(&a) };
    let ctx = inv.context().clone();
    let timer = GpuTimer::new(&ctx)?;
    if storage == Storage::Rfp {
        return time_rfp(inv, &a, reps, &timer);
    }
    let full = if spd_lu { a.symmetric_from_lower() } else { a };
    let work = DeviceSquare::upload(inv, &full)?;
    let y = DeviceSquare {
        buffer: inv.buffer("workspace", s * s)?,
        n: s,
    };
    let x = DeviceSquare {
        buffer: inv.buffer("workspace", s * s)?,
        n: s,
    };
    let mut pw = PivotWork::new(inv, s, block)?;
    pw.pivoting = !spd_lu;
    let leaf = inv.buffer("a diagonal block", inv.tiled().config().nb.pow(2))?;
    let (mut gpu, mut wall) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        work.buffer.write(0, full.as_slice())?;
        inv.reset_status()?;
        inv.tiled().reset_status()?;
        inv.tiled().preheat().run(&ctx);
        ctx.finish();
        let start = Instant::now();
        timer.begin();
        match (kind, method) {
            (Kind::Spd, InverseMethod::Cholesky) => spd::cholesky_inverse(inv, &work, &y, &leaf)?,
            (Kind::Spd, InverseMethod::Gje) => {
                spd::gje_negative_inverse(inv, &work, &pw.row_block, block)?
            }
            (_, InverseMethod::Gje) => gje::invert_in_place(inv, &work, &pw, tol)?,
            (_, InverseMethod::Lu) => {
                lu::factor_in_place(inv, &work, &pw, tol)?;
                lu::inverse_from_factors(inv, &work, &y, &x)?;
            }
            (Kind::General, InverseMethod::Cholesky) => unreachable!("refused above"),
            (_, InverseMethod::Auto) => unreachable!("resolved above"),
        }
        timer.end();
        ctx.finish();
        let w = start.elapsed().as_secs_f64() * 1e3;
        let g = timer.elapsed()?.as_secs_f64() * 1e3;
        if spd_lu {
            inv.check_status_positive()?;
        } else {
            inv.check_status(tol)?;
        }
        inv.tiled().check_status()?;
        if rep > 0 {
            gpu.push(g);
            wall.push(w);
        }
    }
    Ok(summary(kind, method, Storage::Full, s, block, &gpu, &wall))
}

/// The SPD inverse via Cholesky in place in RFP storage, timed as [`time_inverse`].
fn time_rfp(
    inv: &Inverter,
    a: &Matrix<f32>,
    reps: usize,
    timer: &GpuTimer,
) -> Result<InverseTiming> {
    let s = a.rows();
    let ctx = inv.context().clone();
    let arf = rfp_layout::from_lower(a)?;
    let work = inv.buffer("an RFP matrix", arf.len())?;
    let w = inv.buffer("the RFP inverse's workspace", rfp::workspace_len(inv, s))?;
    let (mut gpu, mut wall) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        work.write(0, &arf)?;
        inv.tiled().reset_status()?;
        inv.tiled().preheat().run(&ctx);
        ctx.finish();
        let start = Instant::now();
        timer.begin();
        rfp::cholesky_inverse(inv, &work, s, &w)?;
        timer.end();
        ctx.finish();
        let wall_ms = start.elapsed().as_secs_f64() * 1e3;
        let gpu_ms = timer.elapsed()?.as_secs_f64() * 1e3;
        inv.tiled().check_status()?;
        if rep > 0 {
            gpu.push(gpu_ms);
            wall.push(wall_ms);
        }
    }
    let block = inv.tiled().config().nb;
    Ok(summary(
        Kind::Spd,
        InverseMethod::Cholesky,
        Storage::Rfp,
        s,
        block,
        &gpu,
        &wall,
    ))
}

/// Medians and the rate of one timed configuration.
fn summary(
    kind: Kind,
    method: InverseMethod,
    storage: Storage,
    s: usize,
    block: usize,
    gpu: &[f64],
    wall: &[f64],
) -> InverseTiming {
    let gpu_ms = median(gpu);
    let wall_ms = median(wall);
    // llvmpipe's timer query does not count compute dispatches (it reports microseconds for
    // seconds of work): a GPU time under 1% of the wall time is not believed.
    let ms = if gpu_ms > 0.01 * wall_ms {
        gpu_ms
    } else {
        wall_ms
    };
    InverseTiming {
        kind,
        method,
        storage,
        order: s,
        block,
        gpu_ms,
        wall_ms,
        gflops: kind.flops(s) / (ms * 1e6),
    }
}

/// Times the block update C −= X·Y of the general inverses on its own: C n × n, X n × depth,
/// Y depth × n, all row-major in one buffer each, by `update` (the rank kernel's tiles or the
/// tiled products), `reps` runs after one warm-up; the median GPU milliseconds.
pub fn time_block_update(
    inv: &Inverter,
    n: usize,
    depth: usize,
    update: super::kernels::rank::BlockUpdate,
    reps: usize,
) -> Result<f64> {
    use super::kernels::rank::{RankProduct, rank_update};
    use crate::tiled::{Operand, Product, Update, View};
    let fill = |len: usize, seed: usize| -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 2654435761 + seed) % 1000) as f32 / 1000.0 - 0.5)
            .collect()
    };
    let c = inv.buffer_with("the updated block", &fill(n * n, 1))?;
    let x = inv.buffer_with("the left factor", &fill(n * depth, 2))?;
    let y = inv.buffer_with("the right factor", &fill(depth * n, 3))?;
    let (cv, xv, yv) = (
        View::row_major(n, n),
        View::row_major(n, depth),
        View::row_major(depth, n),
    );
    let ctx = inv.context().clone();
    let timer = GpuTimer::new(&ctx)?;
    let mut gpu = Vec::new();
    for rep in 0..=reps {
        inv.tiled().preheat().run(&ctx);
        ctx.finish();
        timer.begin();
        match update.tile(n, n, depth) {
            Some(tile) => rank_update(
                inv,
                RankProduct {
                    c: Operand::new(&c, cv),
                    x: Operand::new(&x, xv),
                    y: Operand::new(&y, yv),
                    below: None,
                    update: Update::Subtract,
                },
                tile,
            )?,
            None => inv.tiled().gemm(
                Product::new(Operand::new(&c, cv), Operand::new(&x, xv), Operand::new(&y, yv.t()))
                    .update(Update::Subtract),
            )?,
        }
        timer.end();
        ctx.finish();
        if rep > 0 {
            gpu.push(timer.elapsed()?.as_secs_f64() * 1e3);
        }
    }
    Ok(median(&gpu))
}
