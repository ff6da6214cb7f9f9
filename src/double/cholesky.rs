//! L with C = L·Lᵀ in f64 on the GPU (LAPACK's dpotrf): C scaled by powers of two to a unit
//! diagonal (dpoequ's scaling, exact) on its way up, then factored by one chained launch
//! ([`super::chain`], [`DoubleSchedule::Chained`]) or by blocks ([`DoubleSchedule::Blocked`]):
//! each diagonal block factored with the transpose of its inverse beside it and the panel
//! L21 = A21·L11⁻ᵀ formed in the same launch, the trailing A22 − L21·L21ᵀ (its lower triangle)
//! as an f64 product.

use super::chain::FailedPivot;
use super::kernels::{CHAIN_TILE, DoubleKernels, MAX_BLOCK};
use crate::error::{Error, InputError, NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::inverse::kernels::double::{DoubleOperand, DoubleProduct};
pub(crate) use crate::layout::by_rows::SharedRows;
use crate::layout::by_rows::{first_column, runs};
use crate::matrix::Matrix;
use crate::phases::Phases;
use crate::scaling::{equilibration_exponents, pivot_in_units, times_power_of_two};
use crate::symmetric::{SymmetricView, Triangle};
use crate::tiled::View;

/// How [`Gpu::cholesky_double`](crate::Gpu::cholesky_double) factors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DoubleCholeskyOptions {
    /// The order of the blocked schedule's diagonal blocks, 1 to [`MAX_BLOCK`] (at most what
    /// the device's shared memory holds); `None` (the default):
    /// [`DoubleCholeskyOptions::auto_block`]. Each is one work group's, so smaller blocks
    /// shorten the serial part of each step and lengthen the chain of steps.
    pub block: Option<usize>,
    /// Chained or blocked ([`DoubleSchedule`]).
    pub schedule: DoubleSchedule,
}

/// The launches of the f64 Cholesky.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DoubleSchedule {
    /// Chained up to order [`DoubleSchedule::CHAINED_UP_TO`] where no block is asked for,
    /// else blocked.
    #[default]
    Auto,
    /// One launch, left-looking by tiles of 32 that wait on the GPU for the tiles they read
    /// (glsl/double/potrf_chain.comp), where one launch takes the tiles; else blocked.
    Chained,
    /// Two launches a diagonal block: its factor with the panel below it, then the trailing
    /// update (glsl/double/potrf_block.comp).
    Blocked,
}

impl DoubleSchedule {
    /// The largest order [`DoubleSchedule::Auto`] chains: the chain is quicker at every order
    /// measured up to it, where the two meet (`figures/h200/experiments/frontdoor/
    /// double_chain.csv`); past it the blocked schedule's larger products.
    pub const CHAINED_UP_TO: usize = 8192;
}

impl DoubleCholeskyOptions {
    /// Diagonal blocks of `block` (the blocked schedule).
    pub fn block(block: usize) -> Self {
        Self {
            block: Some(block),
            ..Self::default()
        }
    }

    /// The given schedule.
    pub fn schedule(schedule: DoubleSchedule) -> Self {
        Self {
            schedule,
            ..Self::default()
        }
    }

    /// An error naming the block if it is out of range.
    pub fn validate(&self) -> Result<()> {
        match self.block {
            Some(b) if b == 0 || b > MAX_BLOCK => Err(InputError::InvalidOption(format!(
                "the f64 Cholesky's block is {b}; it must be 1 to {MAX_BLOCK}"
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// Whether order n is factored chained (where the device can).
    fn chained(&self, n: usize) -> bool {
        match self.schedule {
            DoubleSchedule::Auto => self.block.is_none() && n <= DoubleSchedule::CHAINED_UP_TO,
            DoubleSchedule::Chained => true,
            DoubleSchedule::Blocked => false,
        }
    }

    /// The default block at order n: 32 below order 3072, where the shorter serial part of
    /// each step wins, [`MAX_BLOCK`] from there (`figures/h200/experiments/frontdoor/
    /// crossover.csv`).
    pub fn auto_block(n: usize) -> usize {
        if n < 3072 { 32 } else { MAX_BLOCK }
    }
}

/// L̃ with S·C·S = L̃·L̃ᵀ on the device: L̃ in the lower triangle of `w` (row-major, C's order;
/// above it unspecified), inv(L̃_bb)ᵀ of each diagonal block at rows k0..k0 + kb of `inv`
/// (n x nb, row-major), S = diag(2^k).
pub(crate) struct DeviceFactor {
    pub w: Buffer<f64>,
    pub inv: Buffer<f64>,
    pub nb: usize,
    pub k: Vec<i32>,
    /// The polls of the chained launches where the factor was chained (its tiles
    /// [`CHAIN_TILE`]), else `None`.
    pub chained: Option<usize>,
}

/// The whole of a buffer's order-n square, or a block of it.
pub(crate) fn view(offset: usize, rs: usize, rows: usize, cols: usize) -> View {
    View {
        offset,
        rs,
        cs: 1,
        rows,
        cols,
    }
}

pub(crate) fn op(buffer: &Buffer<f64>, view: View) -> DoubleOperand<'_> {
    DoubleOperand { buffer, view }
}

/// k_j with 4^k_j·C(j, j) near 1 (a diagonal entry that is not positive left unscaled: the
/// factor fails there).
pub(crate) fn exponents_of(c: &SymmetricView<'_>) -> Vec<i32> {
    equilibration_exponents((0..c.order()).map(|j| c.get(j, j)))
}

/// 2^(sign·e) for each e of `k` where every |e| is at most `limit` (so that the products a
/// caller forms of them stay normal f64s: one exact multiplication per entry), else `None`.
pub(crate) fn powers_of_two(k: &[i32], sign: i32, limit: i32) -> Option<Vec<f64>> {
    k.iter().all(|&e| e.abs() <= limit).then(|| {
        k.iter()
            .map(|&e| times_power_of_two(1.0, sign * e))
            .collect()
    })
}

/// v ↦ 2^(k_i + k_j)·v for entry (i, j): one exact multiplication where every such power is
/// a normal f64, else [`times_power_of_two`].
pub(crate) fn two_sided(k: &[i32]) -> impl Fn(f64, usize, usize) -> f64 + Sync + '_ {
    let powers = powers_of_two(k, 1, 500);
    move |v, i, j| match &powers {
        Some(p) => v * (p[i] * p[j]),
        None => times_power_of_two(v, k[i] + k[j]),
    }
}

/// S·C·S on the device as an order-n row-major square: the triangle `c` stores goes up packed
/// by rows (read where it lies, scaled on the way), and the GPU makes its lower triangle, or
/// with `both` the whole square, from it (NaN elsewhere).
pub(crate) fn upload_scaled(
    kernels: &DoubleKernels,
    c: &SymmetricView<'_>,
    k: &[i32],
    both: bool,
) -> Result<Buffer<f64>> {
    let n = c.order();
    // Refused before anything is allocated or launched: a square past one storage buffer
    // would be read truncated by the kernels.
    kernels.check_fits("C in f64", n * n)?;
    let upper = c.triangle() == Triangle::Upper;
    let scale = two_sided(k);
    let packed = Buffer::filled(
        kernels.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        n * (n + 1) / 2,
        |first, out| {
            runs(n, upper, first, out.len(), |i, place, at, take| {
                let from = &c.packed_row(i)[place..place + take];
                let held = &mut out[at..at + take];
                let j0 = first_column(upper, i) + place;
                for ((v, &x), j) in held.iter_mut().zip(from).zip(j0..) {
                    *v = scale(x, i, j);
                }
            });
        },
    )?;
    let square = Buffer::uninitialized(
        kernels.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        (n * n).max(1),
    )?;
    kernels.unpack(&packed, upper, &square, n, both)?;
    Ok(square)
}

/// Reads back the lower triangle L of the order-n square `square`, or with `upper` U = Lᵀ's
/// upper triangle, packed on the GPU so that only the triangle crosses the bus, handing each
/// run of a row to `consume(i, j0, values)` (row i's entries from column j0) on all cores.
pub(crate) fn read_triangle(
    kernels: &DoubleKernels,
    square: &Buffer<f64>,
    n: usize,
    upper: bool,
    consume: &(dyn Fn(usize, usize, &[f64]) + Sync),
) -> Result<()> {
    let len = n * (n + 1) / 2;
    if len == 0 {
        return Ok(());
    }
    let packed = Buffer::<f64>::uninitialized(
        kernels.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        len,
    )?;
    kernels.pack(square, n, &packed, upper)?;
    packed.read_pieces(&|first, values| {
        runs(n, upper, first, values.len(), |i, k, at, take| {
            consume(i, first_column(upper, i) + k, &values[at..at + take]);
        });
    })
}

/// Factors S·C·S held in `w` (its lower triangle) in place, running `meanwhile` on the host
/// once the GPU has the work.
pub(crate) fn factor(
    kernels: &DoubleKernels,
    w: Buffer<f64>,
    n: usize,
    k: Vec<i32>,
    options: DoubleCholeskyOptions,
    meanwhile: &(dyn Fn() + Sync),
) -> Result<DeviceFactor> {
    options.validate()?;
    let spins = options
        .chained(n)
        .then(|| super::chain::spin_limit(kernels, n))
        .flatten();
    let (inv, nb, failed) = match spins {
        Some(spins) => {
            let (inv, failed) = super::chain::factor(kernels, &w, n, spins, false, meanwhile)?;
            (inv, CHAIN_TILE, failed)
        }
        None => blocked(kernels, &w, n, options, meanwhile)?,
    };
    if let Some(FailedPivot { column, pivot }) = failed {
        let e = Error::from(NumericalError::NotPositiveDefinite { column, pivot });
        return Err(pivot_in_units(e, |j| k[j]));
    }
    Ok(DeviceFactor {
        w,
        inv,
        nb,
        k,
        chained: spins,
    })
}

/// [`factor`]'s blocked schedule: its diagonal blocks' inverses, their order, and the first
/// failed pivot's column and value, if any.
fn blocked(
    kernels: &DoubleKernels,
    w: &Buffer<f64>,
    n: usize,
    options: DoubleCholeskyOptions,
    meanwhile: &(dyn Fn() + Sync),
) -> Result<(Buffer<f64>, usize, Option<FailedPivot>)> {
    let ctx = kernels.context();
    let nb = options
        .block
        .unwrap_or_else(|| DoubleCholeskyOptions::auto_block(n))
        .min(kernels.max_block())
        .min(n.max(1));
    let storage = |len: usize| {
        Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len.max(1))
    };
    let inv = storage(n * nb)?;
    // Each block's L between its launch and the next (see `DoubleKernels::potrf_block`).
    let held = storage(n * nb)?;
    let status = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, &[0u32; 4])?;
    // Two launches a block: L11, its inverse and L21 = A21·L11⁻ᵀ in place, then the lower
    // triangle of A22 − L21·L21ᵀ.
    for k0 in (0..n).step_by(nb) {
        let kb = nb.min(n - k0);
        let r = n - k0 - kb;
        kernels.potrf_block(w, n, k0, kb, nb, &inv, &held, &status)?;
        if r == 0 {
            break;
        }
        let l21 = view((k0 + kb) * n + k0, n, r, kb);
        let a22 = view((k0 + kb) * (n + 1), n, r, r);
        kernels.dgemm(
            DoubleProduct::new(op(w, a22), op(w, l21), op(w, l21.t()))
                .alpha(-1.0)
                .plus(1.0, op(w, a22))
                .lower(),
        )?;
    }
    ctx.flush();
    meanwhile();
    let s = status.download()?;
    let failed = (s[0] != 0).then(|| FailedPivot {
        column: s[0] as usize - 1,
        pivot: f64::from_bits(u64::from(s[1]) | (u64::from(s[2]) << 32)),
    });
    Ok((inv, nb, failed))
}

/// L with C = L·Lᵀ (zeros above the diagonal) from `c`'s stored triangle, or with `upper`
/// U = Lᵀ (zeros below it; packed as U on the GPU, so only the triangle is read back).
pub(crate) fn cholesky(
    kernels: &DoubleKernels,
    c: &SymmetricView<'_>,
    options: DoubleCholeskyOptions,
    upper: bool,
) -> Result<Matrix<f64>> {
    let n = c.order();
    let mut l = crate::memory::zeros(n * n, || format!("the f64 Cholesky factor of order {n}"))?;
    // The zeros written while the GPU factors: their pages are then the host's before the
    // factor comes back.
    cholesky_into(kernels, c, options, upper, &mut l, |_, _, row| {
        row.fill(0.0)
    })?;
    Matrix::from_row_major(n, n, l)
}

/// [`cholesky`]'s factor written into its triangle of `square` (order n, row-major), and the
/// rest of each row i (from column j0) handed to `other(i, j0, row)`, over all cores while the
/// GPU factors.
pub(crate) fn cholesky_into(
    kernels: &DoubleKernels,
    c: &SymmetricView<'_>,
    options: DoubleCholeskyOptions,
    upper: bool,
    square: &mut [f64],
    other: impl Fn(usize, usize, &mut [f64]) + Sync,
) -> Result<()> {
    use rayon::prelude::*;
    let n = c.order();
    if square.len() != n * n {
        return Err(Error::shape(format!(
            "a factor of order {n} written into {} values: it needs {}",
            square.len(),
            n * n
        )));
    }
    let shared = SharedRows::new(square);
    let fill = || {
        (0..n).into_par_iter().for_each(|i| {
            let (j0, len) = if upper { (0, i) } else { (i + 1, n - i - 1) };
            // SAFETY: row i's part outside the factor's triangle: within the square, handed
            // out once, and never written by the factor's read-back.
            let row = unsafe { std::slice::from_raw_parts_mut(shared.at(i * n + j0), len) };
            other(i, j0, row);
        });
    };
    write_factor(kernels, c, options, upper, &shared, &fill)
}

/// Factors C and writes L (or with `upper` U) into its triangle of `out` (order n, row-major),
/// no other entry, running `meanwhile` on the host while the GPU factors; an error where the
/// factor's diagonal leaves f64's normal range.
fn write_factor(
    kernels: &DoubleKernels,
    c: &SymmetricView<'_>,
    options: DoubleCholeskyOptions,
    upper: bool,
    out: &SharedRows<f64>,
    meanwhile: &(dyn Fn() + Sync),
) -> Result<()> {
    let n = c.order();
    let mut phases = Phases::named("Cholesky in f64", std::time::Instant::now());
    let ctx = kernels.context();
    let k = exponents_of(c);
    let w = upload_scaled(kernels, c, &k, false)?;
    phases.mark_finished(ctx, "C̃ up");
    let f = factor(kernels, w, n, k, options, meanwhile)?;
    phases.mark_finished(ctx, "factored");
    // L = S⁻¹·L̃ (row i by 2^-k_i), or U = Lᵀ (column j by 2^-k_j), from the packed rows as
    // they come back.
    let powers = powers_of_two(&f.k, -1, 1000);
    let unscale = |x: f64, e: usize| match &powers {
        Some(p) => x * p[e],
        None => times_power_of_two(x, -f.k[e]),
    };
    read_triangle(kernels, &f.w, n, upper, &|i, j0, values| {
        let at = i * n + j0;
        // SAFETY: each (i, j) of the triangle comes once, so the writes are disjoint, and `out`
        // (n·n values) outlives the read.
        let row = unsafe { std::slice::from_raw_parts_mut(out.at(at), values.len()) };
        for ((v, &x), j) in row.iter_mut().zip(values).zip(j0..) {
            *v = unscale(x, if upper { j } else { i });
        }
    })?;
    phases.mark_finished(ctx, "read back, unscaled");
    // SAFETY: the diagonal is the factor's, written above.
    let diagonal = |j: usize| unsafe { *out.at(j * n + j) };
    if let Some(j) = (0..n).find(|&j| !diagonal(j).is_normal()) {
        return Err(NumericalError::ResultOutOfRange {
            what: if upper {
                "U (C = Uᵀ·U)"
            } else {
                "L (C = L·Lᵀ)"
            },
            row: j,
            col: j,
            value: diagonal(j),
        }
        .into());
    }
    Ok(())
}
