//! The work group's shape: problems per group, invocations per problem, the storage each
//! needs, and the per-invocation loop count checked against llvmpipe's limit.

use crate::gl::ComputeLimits;
use super::*;

/// The shape of one work group: invocations per problem, problems per group, staged loads
/// and columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GroupShape {
    pub(super) threads: usize,
    pub(super) problems: usize,
    pub(super) loads: StagedLoads,
    pub(super) columns: usize,
    /// The observations k where A stays resident (None: staged block by block).
    pub(super) resident: Option<usize>,
    /// Whether the solves take L⁻¹ ([`TriangularSolves::Inverse`]).
    pub(super) inverse: bool,
    /// Whether C (and g) come from the separate assembly (nothing of A staged), and with
    /// them the residual ([`Residual::Normal`]: no weighted residuals in shared memory).
    pub(super) separate: bool,
    pub(super) normal: bool,
}

/// Where the problems' matrices live: shared memory when everything of all the group's
/// problems fits there (L⁻¹ apart: see [`inverse_storage_for`]).
pub(super) fn storage_for(job: Job, n: usize, shape: GroupShape, limits: &ComputeLimits) -> WorkStorage {
    let bytes = shape.problems * shared_bytes(job, n, shape, WorkStorage::Shared);
    if bytes as u64 <= limits.max_shared_bytes {
        WorkStorage::Shared
    } else {
        WorkStorage::Global
    }
}

/// Where L⁻¹ lives beside the factor in `storage`: shared memory when it fits there too for
/// all the group's problems, else the work buffer (the factor keeps its place).
pub(super) fn inverse_storage_for(
    job: Job,
    n: usize,
    shape: GroupShape,
    storage: WorkStorage,
    limits: &ComputeLimits,
) -> WorkStorage {
    let bytes = shape.problems * (shared_bytes(job, n, shape, storage) + 4 * packed(n));
    if shape.inverse && bytes as u64 <= limits.max_shared_bytes {
        WorkStorage::Shared
    } else {
        WorkStorage::Global
    }
}

/// The default group shapes, one row per range of orders (one line to switch a range):
/// (largest order n, invocations per problem, problems per group). Invocations: at least n
/// (invocation i owns row i) and enough to spread the triangle's n(n+1)/2 entries. Each row is
/// the fastest shape of the fused least squares at its order (`batched_bench --profile
/// 32,64,128 --problems-per-group 1,2,4`, `figures/h200/experiments/batched_shapes.csv`).
pub(super) const DEFAULT_SHAPES: [(usize, usize, usize); 6] = [
    (8, 32, 2),
    (16, 32, 1),
    (32, 128, 1),
    (64, 128, 1),
    (128, 512, 1),
    (MAX_ORDER, 1024, 1),
];

/// The default shape's row for order n.
pub(super) fn default_shape(n: usize) -> (usize, usize, usize) {
    DEFAULT_SHAPES
        .into_iter()
        .find(|&(largest, _, _)| n <= largest)
        .unwrap_or(DEFAULT_SHAPES[DEFAULT_SHAPES.len() - 1])
}

/// Problems per work group for order n by default (`DEFAULT_SHAPES`).
pub fn problems_per_group(n: usize) -> usize {
    default_shape(n).2
}

/// Invocations per problem for order n by default (`DEFAULT_SHAPES`).
pub fn threads(n: usize) -> usize {
    default_shape(n).1
}

/// Packed entries of an order-n triangle.
pub fn packed(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Shared memory the job's kernel declares per problem at order n (bytes), with the triangle
/// there or not.
pub(super) fn shared_bytes(job: Job, n: usize, shape: GroupShape, storage: WorkStorage) -> usize {
    let threads = shape.threads;
    let kc = shape.columns;
    // Columns of A, d and b in shared memory: one block, or all of them.
    let staged = shape.resident.map_or(kc, |k| resident_columns(k, kc));
    let mut bytes = 4 * n; // V
    if storage == WorkStorage::Shared {
        bytes += 4 * packed(n);
    }
    if job.reads_observations() && !shape.separate {
        bytes += 4 * n * shape.loads.row_floats(staged) + 4 * staged; // As, Ds
    }
    if job.solves() {
        bytes += 8 * n; // X
        if shape.inverse {
            bytes += 4 * n; // W (L⁻¹ itself: inverse_storage_for)
        }
    }
    if job == Job::LeastSquares && !shape.separate {
        bytes += 4 * staged; // Bs
    }
    if job == Job::LeastSquares && !shape.normal {
        // Part (T residuals, or all of them where resident)
        bytes += 8 * shape.resident.map_or(threads, |_| staged);
    }
    bytes
}

/// Rows per block of the triangular solves (SB in the kernels): one barrier per block of 8 rows,
/// each invocation solving the block's small triangle itself; one row per block past order
/// 128, where the repeated small solves would cost more than the barriers they save (and
/// llvmpipe's loop budget, with many refinement steps).
pub fn solve_block(n: usize) -> usize {
    if n <= 128 { 8 } else { 1 }
}

/// The most rows per block of the triangular solves ([`Plan::with_solve_block`]).
pub const MAX_SOLVE_BLOCK: usize = 16;

/// Invocations sharing a pair of rows (p, n − 1 − p) in the kernels' loops over the triangle
/// (G in glsl/batched/common.glsl).
pub(super) fn pair_lanes(n: usize, threads: usize) -> usize {
    (threads / n.div_ceil(2).max(1)).max(1)
}

/// The loops one invocation runs (for [`loop_iterations`]): the staged columns per step and
/// the assembly's tiling beside the order, observations and invocations.
#[derive(Clone, Copy, Debug)]
pub struct LoopShape {
    /// Invocations per problem.
    pub threads: usize,
    /// Observations staged per step.
    pub columns: usize,
    /// The assembly's tiling.
    pub tiling: AssemblyTiling,
    /// Rows per block of the triangular solves.
    pub solve_block: usize,
    /// Whether the solves take L⁻¹ (formed in the factor's sweep).
    pub inverse: bool,
}

/// An upper estimate of the loop iterations one invocation runs (all loops together).
pub fn loop_iterations(job: Job, n: usize, k: usize, shape: LoopShape, refine: usize) -> usize {
    let LoopShape {
        threads: t,
        columns: kc,
        tiling,
        solve_block: sb,
        inverse,
    } = shape;
    let per = |entries: usize| entries.div_ceil(t);
    let blocks = k.div_ceil(kc);
    let stage = per(n * kc) + 1;
    let g = pair_lanes(n, t);
    // A pair's two rows, G lanes each: at most ⌈(p+1)/G⌉ + ⌈(n−p)/G⌉ entries per lane.
    let pair_entries = (n + 1) / g + 2;
    let assembly = match tiling.tile() {
        None => per(packed(n)) + blocks * (stage + 2 * kc + pair_entries * (kc + 1)),
        // Per tile and staged column: the column's loop, the reads, the products; then the
        // parts' stores in turn.
        Some(tile) => {
            let (split, held) = tile_split(n, tile, t);
            let per_column = 1 + 3 * tile + tile * tile;
            held * (tile * tile + 2)
                + blocks * (stage + held * (2 * tile + kc.div_ceil(split) * per_column))
                + split * held * (tile + tile * tile)
        }
    };
    let mut factor = n * (n / g + 2) + pair_entries;
    // Both sweeps: per block its loop, the small triangle (sb rows, sb(sb − 1)/2 products)
    // and the later rows' update; with L⁻¹ two products of n.
    let mut solve = 2 * n.div_ceil(sb) * (1 + sb + sb * (sb - 1) / 2 + sb) + 2;
    if inverse && job.solves() {
        // Per pivot block: two rows' entries before the block's end, the block's columns.
        factor += n.div_ceil(4) * (2 * ((n + 4) / g + 1) + (n + 4) / t + 1);
        solve = 2 * n + 2;
    }
    let copy = per(n * n).max(per(packed(n)));
    let residual = match job {
        // Per T observations a column of n rows, then per staged block its KC products.
        Job::LeastSquares => k.div_ceil(t) * (n + 2) + blocks * (stage + kc + 1),
        _ => n,
    };
    match job {
        Job::Assemble => assembly + copy,
        Job::Cholesky => copy + factor + copy,
        Job::SpdSolve => copy + factor + (1 + refine) * solve + refine * residual + n,
        Job::LeastSquares => assembly + factor + (1 + refine) * solve + refine * residual + n,
    }
}
