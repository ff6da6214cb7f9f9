//! How a batch runs on the compute kernels: the job's kernel, the work group's shape (T ≥ n
//! invocations per problem, problems per group, the assembly's loads and rows, the solves'
//! blocks: typed choices with defaults here), where the problem's matrix lives (shared memory
//! where it fits, else a global work buffer), the per-invocation loop count checked against
//! llvmpipe's limit, and how many problems one set of buffers and one dispatch take.

use super::gram::GramShape;
use crate::compute_kernels as table;
use crate::error::{InputError, Result};
use crate::gl::{ComputeKernel, ComputeLimits, LOOP_LIMIT};

/// The batched operations, one kernel each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Job {
    /// Cₚ = Aₚ·diag(dₚ)·Aₚᵀ (lower triangle).
    Assemble,
    /// Cₚ = Lₚ·Lₚᵀ with INFO.
    Cholesky,
    /// Cₚ·xₚ = bₚ, refined.
    SpdSolve,
    /// min ‖Dₚ(bₚ − Aₚᵀxₚ)‖₂ in one pass, refined.
    LeastSquares,
}

impl Job {
    /// The job's kernel.
    pub fn kernel(self) -> &'static ComputeKernel {
        match self {
            Job::Assemble => &table::BATCHED_ASSEMBLE,
            Job::Cholesky => &table::BATCHED_CHOLESKY,
            Job::SpdSolve => &table::BATCHED_SPD_SOLVE,
            Job::LeastSquares => &table::BATCHED_LEAST_SQUARES,
        }
    }

    /// Whether the job reads A and d (observations) rather than C.
    pub fn reads_observations(self) -> bool {
        matches!(self, Job::Assemble | Job::LeastSquares)
    }

    /// Whether the job solves (writes x in f64 and refines).
    pub fn solves(self) -> bool {
        matches!(self, Job::SpdSolve | Job::LeastSquares)
    }

    /// The operation's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Job::Assemble => "batched assembly",
            Job::Cholesky => "batched Cholesky",
            Job::SpdSolve => "batched SPD solve",
            Job::LeastSquares => "batched least squares",
        }
    }
}

/// The largest order n of a batched problem (one work group holds a problem; larger orders
/// take the single-problem operations, one call per problem).
pub const MAX_ORDER: usize = 256;

/// Observations staged per step (KC in the kernels) unless told otherwise
/// ([`Plan::with_staged_columns`]; 32 and 64 were slower:
/// `figures/h200/experiments/batched_tiles.csv`).
pub const STAGED_COLUMNS: usize = 16;

/// The staged columns a plan may take ([`Plan::with_staged_columns`]): multiples of 4 whose
/// quarter is a power of two (the vector loads' swizzle masks by it).
pub const STAGED_COLUMN_CHOICES: [usize; 3] = [16, 32, 64];

/// The loop iterations one invocation may run in one launch: half of llvmpipe's loop limit
/// (65,535 in all), the rest left for loops the estimate does not count.
pub const LOOP_BUDGET: usize = LOOP_LIMIT / 2;

/// Where a problem's matrix lives while its work group runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkStorage {
    /// Packed lower storage in the group's shared memory.
    Shared,
    /// Packed lower storage in a global work buffer (orders whose triangle does not fit).
    Global,
}

/// How the assembly reads a staged block of A from shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StagedLoads {
    /// One float per load (rows padded to KC + 1 floats).
    Scalar,
    /// Four floats per load (rows of KC/4 vec4, swizzled rather than padded): a quarter of
    /// the shared loads per product, which bound the assembly at every order.
    Vector,
}

impl StagedLoads {
    /// Floats per staged row of A of `columns` columns in shared memory (with its padding).
    fn row_floats(self, columns: usize) -> usize {
        match self {
            StagedLoads::Scalar => columns + 1,
            StagedLoads::Vector => columns,
        }
    }
}

/// How many rows of A·diag(d) an invocation of the assembly holds in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AssemblyRows {
    /// One row at a time (fewer registers, so more groups per multiprocessor).
    Single,
    /// Both rows of the invocation's pair at once (one read of A's row serves two entries).
    Pair,
}

/// How the assembly shares C's lower triangle among a problem's invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AssemblyTiling {
    /// Pairs of rows (p, n − 1 − p), a few invocations per pair, each entry's sum over a
    /// staged block added into shared memory ([`AssemblyRows`] in registers): one shared read
    /// of A per product.
    Rows,
    /// 2 x 2 tiles of C per invocation, their sums in registers over all the staged blocks:
    /// four reads of A per four products.
    Tiles2,
    /// 4 x 4 tiles of C per invocation, their sums in registers over all the staged blocks:
    /// eight reads of A per sixteen products.
    Tiles4,
}

impl AssemblyTiling {
    /// The tile's order (None for rows).
    pub fn tile(self) -> Option<usize> {
        match self {
            AssemblyTiling::Rows => None,
            AssemblyTiling::Tiles2 => Some(2),
            AssemblyTiling::Tiles4 => Some(4),
        }
    }
}

/// The assembly's tiling for order n unless told otherwise (one line to switch): pairs of
/// rows at every order; the register tiles were slower at every order measured
/// (`figures/h200/experiments/batched_tiles.csv`).
pub fn assembly_tiling(_n: usize) -> AssemblyTiling {
    AssemblyTiling::Rows
}

/// The most tile sums one invocation holds in registers ([`Plan::with_assembly_tiling`]):
/// eight 2 x 2 tiles, two 4 x 4.
pub const MAX_TILE_SUMS: usize = 32;

/// The most invocations sharing one tile's staged columns (their parts add into shared
/// memory in turn, one barrier each).
pub const MAX_TILE_SPLIT: usize = 4;

/// How the register tiles of order `tile` are dealt out to `threads` invocations at order n:
/// (invocations per tile, tiles per invocation) — the tile's staged columns split among up
/// to [`MAX_TILE_SPLIT`] invocations where the tiles are fewer than the invocations, else
/// several tiles per invocation.
pub fn tile_split(n: usize, tile: usize, threads: usize) -> (usize, usize) {
    let rows = n.div_ceil(tile);
    let tiles = rows * (rows + 1) / 2;
    if tiles <= threads {
        ((threads / tiles).min(MAX_TILE_SPLIT), 1)
    } else {
        (1, tiles.div_ceil(threads))
    }
}

/// The assembly's rows per read for order n unless told otherwise: pairs past n = 64, where
/// the triangle in shared memory already limits the groups per multiprocessor.
pub fn assembly_rows(n: usize) -> AssemblyRows {
    if n > 64 {
        AssemblyRows::Pair
    } else {
        AssemblyRows::Single
    }
}

/// The staged loads a plan takes unless told otherwise (one line to switch): scalar reads
/// were faster than vector reads at every order and group shape measured
/// (`figures/h200/experiments/batched_shapes.csv`).
pub const DEFAULT_STAGED_LOADS: StagedLoads = StagedLoads::Scalar;

/// Where the refinement's residual reads A, d and b (the fused least squares), and so how
/// the assembly stages them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Residual {
    /// From global memory: each step reads A's columns once to form the weighted residuals
    /// and stages them again in blocks of KC for the rows' sums (two barriers per block);
    /// the assembly stages A block by block (two barriers per block).
    Restaged,
    /// A, d and b (all k columns, rounded up to KC) staged in shared memory once by the
    /// assembly and kept: the assembly takes two barriers in all, each residual step two and
    /// no global reads. Only where they fit beside the triangle, with scalar staged loads
    /// and pairs of rows.
    Resident,
    /// As restaged for the weighted residuals, but the rows' sums read A straight from
    /// global memory (T/n invocations per row, runs of 4 observations each) with no staging:
    /// three barriers per step where the observations are at most T, rather than two per
    /// staged block. The fused least squares only.
    Direct,
    /// From the normal equations: r = g − C·x in f64, C and g formed in f64 (sums of exact
    /// products) by the separate assembly ([`AssemblyPass::Separate`]) and read from its
    /// buffer, so no step reads A again and none takes a barrier for it. The least squares
    /// with the separate assembly only.
    Normal,
}

/// The staged A's bytes up to which [`residual`] keeps A resident by default: n = 8 with 16
/// observations (512 bytes): resident A beats the direct and restaged residuals at n = 8 and
/// loses from n = 16 (`figures/h200/experiments/batched_residual.csv`).
pub const RESIDENT_DEFAULT_BYTES: usize = 512;

/// Where the residual reads A unless told otherwise (one line to switch): resident in shared
/// memory where the staged A (k rounded up to the staged columns) takes at most
/// [`RESIDENT_DEFAULT_BYTES`], else straight from global memory ([`Residual::Direct`]; the
/// jobs other than the fused least squares restage;
/// `figures/h200/experiments/batched_residual.csv`).
pub fn residual(n: usize, k: usize) -> Residual {
    if 4 * n * resident_columns(k, STAGED_COLUMNS) <= RESIDENT_DEFAULT_BYTES {
        Residual::Resident
    } else {
        Residual::Direct
    }
}

/// Invocations per row of the direct residual's sums (RL in the kernels): T/n, at most T/4
/// (each takes runs of 4 observations).
pub fn residual_lanes(n: usize, threads: usize) -> usize {
    (threads / n.max(1)).clamp(1, (threads / 4).max(1))
}

/// The columns a resident A takes (KR in the kernels): k rounded up to `columns`, at least
/// one block.
pub fn resident_columns(k: usize, columns: usize) -> usize {
    k.div_ceil(columns).max(1) * columns
}

/// How the batched solves apply the factor (every solve: the first and each refinement
/// step's correction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TriangularSolves {
    /// Forward and backward substitution with L, [`Plan::solve_block`] rows per barrier:
    /// 2·⌈n/SB⌉ + 1 barriers per solve.
    Substitution,
    /// Products with L⁻¹, formed by the factor in the same sweep (each pivot block's
    /// multipliers applied to L̃⁻¹'s rows as to C's, as glsl/tiled/potrf_inv_fn.glsl does):
    /// 2 barriers per solve, no more in the factor, an n(n+1)/2 triangle more storage (shared
    /// memory where it fits, else the work buffer). Not backward stable in general; the
    /// refinement's f64 residual mends it.
    Inverse,
}

/// The triangular solves unless told otherwise: substitution at every order. Products with
/// L⁻¹ ([`TriangularSolves::Inverse`]) were slower at every order measured: forming L⁻¹ costs
/// the factor more than the products save (`figures/h200/experiments/batched_inverse.csv`).
pub fn triangular_solves(_n: usize) -> TriangularSolves {
    TriangularSolves::Substitution
}

/// Where the jobs that read observations form C = A·diag(d)·Aᵀ (and g = A·diag(d)·b).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AssemblyPass {
    /// In the job's own work group, from blocks of A staged in shared memory (one launch).
    Fused,
    /// A launch of its own first (`glsl/batched/gram.comp`): register tiles per invocation,
    /// read through the cache or staged per problem ([`GramShape`]), written to a gram buffer
    /// the job's kernel reads (two launches, C and g through memory; never with
    /// [`Residual::Resident`]).
    Separate(GramShape),
}

/// The largest tile of the separate assembly that forms C and g in f64
/// ([`Residual::Normal`]): tiles of 8 (64 f64 sums per invocation) came out with f32-sized
/// errors on the H200 (NVIDIA 580.159; relative error 1.2e-6 to 1.8e-6 after refinement at
/// n = 48 to 128, where tiles of 4 give 2e-13 to 5e-13; right on llvmpipe), so they are
/// refused.
pub const MAX_F64_TILE: usize = 4;

/// The least squares' separate assembly by default at order n (one line per range to
/// switch): its shape, whether the residual comes from the normal equations
/// ([`Residual::Normal`]) and the job's invocations per problem (one problem per group);
/// None: the fused assembly. The separate assembly beats the fused one from n = 12 to 128
/// and loses at n = 8 (`figures/h200/experiments/batched_gram.csv`); past 128 (the triangle
/// in the global work buffer) nothing was measured, so the fused assembly stays. The direct
/// residual beats the normal equations' from n = 24 and ties at n = 12, where the normal one
/// stays (`figures/h200/experiments/batched_direct.csv`). The staged shape beats the tiles at
/// n = 32 (33 rows with b's) and loses at 20 to 30
/// (`figures/h200/experiments/batched_staged.csv`).
pub fn separate_default(n: usize) -> Option<(GramShape, bool, usize)> {
    let tiles = |tile, lanes| GramShape {
        tile,
        lanes,
        staged: false,
    };
    match n {
        9..=12 => Some((tiles(2, 1), true, 32)),
        13..=24 => Some((tiles(4, 1), false, 32)),
        25..=31 => Some((tiles(4, 1), false, 32)),
        32 => Some((GramShape::STAGED, false, 32)),
        33..=64 => Some((GramShape::STAGED, false, 128)),
        65..=128 => Some((GramShape::STAGED, false, 512)),
        _ => None,
    }
}

/// The most problems one work group holds ([`Plan::with_problems_per_group`]).
pub const MAX_PROBLEMS_PER_GROUP: usize = 8;

/// One batch's launch plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// The operation.
    pub job: Job,
    /// The order n (unknowns).
    pub n: usize,
    /// Observations per problem (columns of A; 0 for jobs that read C).
    pub k: usize,
    /// Invocations per problem (≥ n); a work group runs `threads · problems_per_group`.
    pub threads: usize,
    /// Problems per work group (each with `threads` invocations and its own shared memory;
    /// more than one only with [`WorkStorage::Shared`]).
    pub problems_per_group: usize,
    /// How the assembly reads staged blocks of A.
    pub staged_loads: StagedLoads,
    /// Rows of A·diag(d) the assembly holds per invocation (with [`AssemblyTiling::Rows`]).
    pub assembly_rows: AssemblyRows,
    /// How the assembly shares C among the invocations.
    pub assembly_tiling: AssemblyTiling,
    /// Observations staged per step of the assembly and the residual (KC in the kernels).
    pub staged_columns: usize,
    /// Where the residual reads A (and how the assembly stages it).
    pub residual: Residual,
    /// Where C (and g) are formed: in the job's launch or one of their own.
    pub assembly_pass: AssemblyPass,
    /// Where the matrix lives.
    pub storage: WorkStorage,
    /// Refinement steps (solves only).
    pub refine: usize,
    /// Rows per block of the triangular solves (one barrier per block).
    pub solve_block: usize,
    /// How the solves apply the factor (solves only).
    pub solves: TriangularSolves,
    /// Where L⁻¹ lives with [`TriangularSolves::Inverse`].
    pub inverse_storage: WorkStorage,
    /// Problems per set of buffers (a batch past it runs in chunks).
    pub chunk: usize,
    /// Work groups per dispatch (GL_MAX_COMPUTE_WORK_GROUP_COUNT along x).
    pub launch: usize,
}

/// The shape of one work group: invocations per problem, problems per group, staged loads
/// and columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GroupShape {
    threads: usize,
    problems: usize,
    loads: StagedLoads,
    columns: usize,
    /// The observations k where A stays resident (None: staged block by block).
    resident: Option<usize>,
    /// Whether the solves take L⁻¹ ([`TriangularSolves::Inverse`]).
    inverse: bool,
    /// Whether C (and g) come from the separate assembly (nothing of A staged), and with
    /// them the residual ([`Residual::Normal`]: no weighted residuals in shared memory).
    separate: bool,
    normal: bool,
}

/// Where the problems' matrices live: shared memory when everything of all the group's
/// problems fits there (L⁻¹ apart: see [`inverse_storage_for`]).
fn storage_for(job: Job, n: usize, shape: GroupShape, limits: &ComputeLimits) -> WorkStorage {
    let bytes = shape.problems * shared_bytes(job, n, shape, WorkStorage::Shared);
    if bytes as u64 <= limits.max_shared_bytes {
        WorkStorage::Shared
    } else {
        WorkStorage::Global
    }
}

/// Where L⁻¹ lives beside the factor in `storage`: shared memory when it fits there too for
/// all the group's problems, else the work buffer (the factor keeps its place).
fn inverse_storage_for(
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
const DEFAULT_SHAPES: [(usize, usize, usize); 6] = [
    (8, 32, 2),
    (16, 32, 1),
    (32, 128, 1),
    (64, 128, 1),
    (128, 512, 1),
    (MAX_ORDER, 1024, 1),
];

/// The default shape's row for order n.
fn default_shape(n: usize) -> (usize, usize, usize) {
    DEFAULT_SHAPES
        .into_iter()
        .find(|&(largest, _, _)| n <= largest)
        .unwrap_or(DEFAULT_SHAPES[DEFAULT_SHAPES.len() - 1])
}

/// Problems per work group for order n by default ([`DEFAULT_SHAPES`]).
pub fn problems_per_group(n: usize) -> usize {
    default_shape(n).2
}

/// Invocations per problem for order n by default ([`DEFAULT_SHAPES`]).
pub fn threads(n: usize) -> usize {
    default_shape(n).1
}

/// Packed entries of an order-n triangle.
pub fn packed(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Shared memory the job's kernel declares per problem at order n (bytes), with the triangle
/// there or not.
fn shared_bytes(job: Job, n: usize, shape: GroupShape, storage: WorkStorage) -> usize {
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
fn pair_lanes(n: usize, threads: usize) -> usize {
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

impl Plan {
    /// The plan for B problems of order n with k observations (jobs that read C: k = 0) on a
    /// device with `limits`; an order past [`MAX_ORDER`], or a problem whose loops exceed
    /// [`LOOP_BUDGET`], is [`InputError::Unsupported`] saying what to do instead. The least
    /// squares at orders 9 to 128 take the separate assembly ([`separate_default`]) where the
    /// device runs it; everything else is [`Plan::fused`]'s.
    pub fn new(
        job: Job,
        n: usize,
        k: usize,
        refine: usize,
        limits: &ComputeLimits,
    ) -> Result<Self> {
        let plan = Self::fused(job, n, k, refine, limits)?;
        // The default assembly pass, residual and shape where the device runs them, else
        // the fused assembly.
        Ok(
            match separate_default(n).filter(|_| job == Job::LeastSquares) {
                Some((shape, normal, threads)) => plan
                    .with_assembly_pass(AssemblyPass::Separate(shape), limits)
                    .and_then(|p| {
                        if normal {
                            p.with_residual(Residual::Normal, limits)
                        } else {
                            Ok(p)
                        }
                    })
                    .and_then(|p| p.with_problems_per_group(1, limits))
                    .and_then(|p| p.with_threads(threads, limits))
                    .unwrap_or(plan),
                None => plan,
            },
        )
    }

    /// The plan as [`Plan::new`] makes it before the separate assembly's defaults: the fused
    /// assembly with its own defaults (group shape, residual, solves), for the tuning of the
    /// fused kernel and its tests.
    pub fn fused(
        job: Job,
        n: usize,
        k: usize,
        refine: usize,
        limits: &ComputeLimits,
    ) -> Result<Self> {
        if n > MAX_ORDER {
            return Err(InputError::Unsupported(format!(
                "{} takes orders n up to {MAX_ORDER} (one work group per problem), but n = {n}; \
                 solve larger problems one at a time (Gpu::cholesky, Gpu::spd_solve, \
                 Gpu::least_squares)",
                job.name()
            ))
            .into());
        }
        let threads = threads(n);
        if threads as u64 > u64::from(limits.max_invocations) {
            return Err(InputError::Unsupported(format!(
                "{} at order n = {n} runs {threads} invocations per work group, but this \
                 device runs at most {} (GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS)",
                job.name(),
                limits.max_invocations
            ))
            .into());
        }
        let loops = LoopShape {
            threads,
            columns: STAGED_COLUMNS,
            tiling: AssemblyTiling::Rows,
            solve_block: solve_block(n),
            inverse: false,
        };
        let iterations = loop_iterations(job, n, k, loops, refine);
        if iterations > LOOP_BUDGET {
            return Err(InputError::Unsupported(format!(
                "{} at order n = {n} with {k} observations per problem runs about {iterations} \
                 loop iterations per GPU invocation, more than the {LOOP_BUDGET} one launch \
                 may run on every device (Mesa's llvmpipe silently ends longer loops); use \
                 fewer observations per problem, or Gpu::least_squares per problem",
                job.name()
            ))
            .into());
        }
        // The default problems per group where they all fit in shared memory, else one.
        let mut shape = GroupShape {
            threads,
            problems: problems_per_group(n),
            loads: DEFAULT_STAGED_LOADS,
            columns: STAGED_COLUMNS,
            resident: None,
            inverse: false,
            separate: false,
            normal: false,
        };
        let grouped = shape.problems * threads <= limits.max_invocations as usize
            && storage_for(job, n, shape, limits) == WorkStorage::Shared;
        if !grouped {
            shape.problems = 1;
        }
        let storage = storage_for(job, n, shape, limits);
        // The largest buffer one problem needs, in bytes: every buffer of a chunk stays within
        // one storage block and GL's 32-bit sizes.
        let mut per_problem = 4 * n * n.max(1);
        if job.reads_observations() {
            per_problem = per_problem.max(4 * n * k);
        }
        if storage == WorkStorage::Global {
            per_problem = per_problem.max(4 * packed(n));
        }
        if job.reads_observations() {
            // The separate assembly's gram buffer (f64 for the normal residual).
            per_problem = per_problem.max(8 * GramShape::floats(n));
        }
        let block = limits.max_storage_block_bytes.min(i32::MAX as u64) as usize;
        let chunk = (block / per_problem.max(1)).max(1);
        let plan = Self {
            job,
            n,
            k,
            threads,
            problems_per_group: shape.problems,
            staged_loads: shape.loads,
            assembly_rows: assembly_rows(n),
            assembly_tiling: AssemblyTiling::Rows,
            staged_columns: STAGED_COLUMNS,
            residual: Residual::Restaged,
            assembly_pass: AssemblyPass::Fused,
            storage,
            refine,
            solve_block: solve_block(n),
            solves: TriangularSolves::Substitution,
            inverse_storage: WorkStorage::Shared,
            chunk,
            launch: (limits.max_groups_x as usize).max(1),
        };
        // The default tiling where it differs and the device runs it, else the rows.
        let tiling = assembly_tiling(n);
        let plan = if job.reads_observations() && tiling != plan.assembly_tiling {
            plan.with_assembly_tiling(tiling).unwrap_or(plan)
        } else {
            plan
        };
        // The default residual where it fits, else restaged.
        let resident = residual(n, k);
        let plan = if job.reads_observations() && resident != plan.residual {
            plan.with_residual(resident, limits).unwrap_or(plan)
        } else {
            plan
        };
        // The default solves where the device runs them, else substitution.
        let solves = triangular_solves(n);
        Ok(if job.solves() && solves != plan.solves {
            plan.with_solves(solves, limits).unwrap_or(plan)
        } else {
            plan
        })
    }

    /// `plan` (this plan with another pass or residual) with its storage and shared memory
    /// checked again for what it now declares, else [`InputError::InvalidOption`].
    fn regrouped(self, plan: Self, limits: &ComputeLimits) -> Result<Self> {
        plan.reshaped(plan.shape(), limits).ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} with {} problems per work group does not fit the device's \
                 shared memory with the assembly {:?} and the residual {:?}",
                self.job.name(),
                self.n,
                plan.problems_per_group,
                plan.assembly_pass,
                plan.residual
            ))
            .into()
        })
    }

    /// The same plan with C (and g) formed as `pass` says instead of [`assembly_pass`]'s
    /// choice (the benchmarks' tuning): [`AssemblyPass::Separate`] only for the jobs that read
    /// observations, within the loop budget; a resident A then gives way to the direct
    /// residual (the least squares) or the restaged blocks (the assembly), since nothing is
    /// staged any more.
    pub fn with_assembly_pass(self, pass: AssemblyPass, limits: &ComputeLimits) -> Result<Self> {
        let AssemblyPass::Separate(shape) = pass else {
            // The normal equations' residual needs the separate assembly's f64 C.
            let residual = match self.residual {
                Residual::Normal => Residual::Direct,
                other => other,
            };
            let plan = Self {
                assembly_pass: pass,
                residual,
                ..self
            };
            return self.regrouped(plan, limits);
        };
        let rhs = self.job == Job::LeastSquares;
        if !self.job.reads_observations()
            || shape.loop_iterations(self.k) > LOOP_BUDGET
            || !shape.fits(self.n, rhs)
            || shape.staged && shape.invocations(self.n, rhs) > limits.max_invocations as usize
        {
            return Err(InputError::InvalidOption(format!(
                "{} at order n = {} with {} observations cannot assemble in a launch of its \
                 own by {shape:?} (only the jobs that read A, within the loop budget, a staged \
                 problem's tiles in one work group)",
                self.job.name(),
                self.n,
                self.k
            ))
            .into());
        }
        let plan = if self.residual == Residual::Resident {
            let residual = if self.job == Job::LeastSquares {
                Residual::Direct
            } else {
                Residual::Restaged
            };
            self.with_residual(residual, limits)?
        } else {
            self
        };
        // Tiles past MAX_F64_TILE form no f64 sums: the residual then reads A directly.
        let residual = match plan.residual {
            Residual::Normal if shape.tile > MAX_F64_TILE => Residual::Direct,
            other => other,
        };
        let plan = Self {
            assembly_pass: pass,
            residual,
            ..plan
        };
        self.regrouped(plan, limits)
    }

    /// The separate assembly's shape, if the plan takes one (and reads observations).
    pub fn gram_shape(&self) -> Option<GramShape> {
        match self.assembly_pass {
            AssemblyPass::Separate(shape) if self.job.reads_observations() => Some(shape),
            _ => None,
        }
    }

    /// The `#define`s in front of the separate assembly's kernel (None without one).
    pub fn gram_defines(&self) -> Option<String> {
        self.gram_shape().map(|shape| {
            shape.defines(
                self.n,
                self.k,
                self.job == Job::LeastSquares,
                self.gram_f64(),
            )
        })
    }

    /// Whether the separate assembly forms C and g in f64 (for [`Residual::Normal`]).
    pub fn gram_f64(&self) -> bool {
        self.gram_shape().is_some() && self.residual == Residual::Normal
    }

    /// The same plan with the solves applying the factor as `solves` says instead of
    /// [`triangular_solves`]' choice (the benchmarks' tuning): for the jobs that solve,
    /// within the loop budget, L⁻¹ in shared memory where it fits beside everything else,
    /// else in the work buffer (the factor's triangle keeps its storage).
    pub fn with_solves(self, solves: TriangularSolves, limits: &ComputeLimits) -> Result<Self> {
        let inverse = solves == TriangularSolves::Inverse;
        let shape = LoopShape {
            inverse,
            ..self.loop_shape(
                self.threads,
                self.solve_block,
                self.staged_columns,
                self.assembly_tiling,
            )
        };
        let reshaped = (self.job.solves()
            && loop_iterations(self.job, self.n, self.k, shape, self.refine) <= LOOP_BUDGET)
            .then(|| {
                self.reshaped(
                    GroupShape {
                        inverse,
                        ..self.shape()
                    },
                    limits,
                )
            })
            .flatten()
            .filter(|plan| plan.storage == self.storage)
            .map(|plan| {
                // A chunk's work buffer within one storage block and GL's 32-bit sizes.
                let block = limits.max_storage_block_bytes.min(i32::MAX as u64) as usize;
                // (L⁻¹'s by slot: the problems rounded up to the group's.)
                let bytes = 4 * plan.work_floats().max(1);
                let fits = (block / bytes).saturating_sub(plan.problems_per_group);
                Self {
                    chunk: plan.chunk.min(fits).max(1),
                    ..plan
                }
            });
        reshaped.ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} cannot take {solves:?} triangular solves (only the jobs \
                 that solve, the factor's triangle still in {:?} storage, within the loop \
                 budget)",
                self.job.name(),
                self.n,
                self.storage
            ))
            .into()
        })
    }

    /// Floats of the global work buffer per problem: the factor's triangle where it is not
    /// in shared memory, L⁻¹'s where it is not (after all the factors' triangles).
    pub fn work_floats(&self) -> usize {
        let mut floats = 0;
        if self.storage == WorkStorage::Global {
            floats += packed(self.n);
        }
        if self.solves == TriangularSolves::Inverse && self.inverse_storage == WorkStorage::Global {
            floats += packed(self.n);
        }
        floats
    }

    /// The plan's loops with `threads` invocations per problem, `sb` rows per solve block,
    /// `columns` staged columns and `tiling`.
    fn loop_shape(
        &self,
        threads: usize,
        sb: usize,
        columns: usize,
        tiling: AssemblyTiling,
    ) -> LoopShape {
        LoopShape {
            threads,
            columns,
            tiling,
            solve_block: sb,
            inverse: self.solves == TriangularSolves::Inverse,
        }
    }

    /// Whether `threads` invocations per problem and `sb` rows per solve block stay within
    /// [`LOOP_BUDGET`] (with the plan's staged columns and tiling).
    fn loops_fit(&self, threads: usize, sb: usize) -> bool {
        let shape = self.loop_shape(threads, sb, self.staged_columns, self.assembly_tiling);
        loop_iterations(self.job, self.n, self.k, shape, self.refine) <= LOOP_BUDGET
    }

    /// Whether the register tiles of `tiling` fit `threads` invocations: at most
    /// [`MAX_TILE_SUMS`] sums each.
    fn tiles_fit(&self, threads: usize, tiling: AssemblyTiling) -> bool {
        tiling
            .tile()
            .is_none_or(|tile| tile_split(self.n, tile, threads).1 * tile * tile <= MAX_TILE_SUMS)
    }

    /// The same plan with the assembly shared out by `tiling` instead of [`assembly_tiling`]'s
    /// choice (the benchmarks' tuning): register tiles take at most [`MAX_TILE_SUMS`] sums
    /// per invocation, within the loop budget. Jobs that do not
    /// assemble keep any tiling (it changes nothing there).
    pub fn with_assembly_tiling(self, tiling: AssemblyTiling) -> Result<Self> {
        let shape = self.loop_shape(self.threads, self.solve_block, self.staged_columns, tiling);
        let fits = self.tiles_fit(self.threads, tiling)
            && loop_iterations(self.job, self.n, self.k, shape, self.refine) <= LOOP_BUDGET;
        if fits {
            // The register tiles stage A block by block (never resident).
            let residual = if tiling != AssemblyTiling::Rows && self.residual == Residual::Resident
            {
                Residual::Restaged
            } else {
                self.residual
            };
            return Ok(Self {
                assembly_tiling: tiling,
                residual,
                ..self
            });
        }
        Err(InputError::InvalidOption(format!(
            "{} at order n = {} cannot assemble by {tiling:?} with {} invocations per problem \
             (at most {MAX_TILE_SUMS} tile sums per invocation, within the loop budget)",
            self.job.name(),
            self.n,
            self.threads
        ))
        .into())
    }

    /// The same plan with `columns` observations staged per step instead of
    /// [`STAGED_COLUMNS`] (the benchmarks' tuning: fewer steps and barriers, more shared
    /// memory): one of [`STAGED_COLUMN_CHOICES`], the invocations per problem a multiple of
    /// it (the residual stages T observations in such blocks), the group's problems still in
    /// the storage they had, within the loop budget.
    pub fn with_staged_columns(self, columns: usize, limits: &ComputeLimits) -> Result<Self> {
        let shape = self.loop_shape(
            self.threads,
            self.solve_block,
            columns,
            self.assembly_tiling,
        );
        let reshaped = (STAGED_COLUMN_CHOICES.contains(&columns)
            && self.threads.is_multiple_of(columns)
            && loop_iterations(self.job, self.n, self.k, shape, self.refine) <= LOOP_BUDGET)
            .then(|| {
                self.reshaped(
                    GroupShape {
                        columns,
                        ..self.shape()
                    },
                    limits,
                )
            })
            .flatten()
            .filter(|plan| plan.storage == self.storage);
        reshaped.ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} cannot stage {columns} observations per step with {} \
                 invocations per problem and {} per work group (one of \
                 {STAGED_COLUMN_CHOICES:?}, dividing the invocations, the problems still in \
                 {:?} storage, within the loop budget)",
                self.job.name(),
                self.n,
                self.threads,
                self.problems_per_group,
                self.storage
            ))
            .into()
        })
    }

    /// The same plan with `rows` rows per block of the triangular solves instead of
    /// [`solve_block`]'s choice (the benchmarks' tuning): 1 to [`MAX_SOLVE_BLOCK`] (one barrier
    /// per block; each invocation solves the block's small triangle itself), within the loop
    /// budget.
    pub fn with_solve_block(self, rows: usize) -> Result<Self> {
        if (1..=MAX_SOLVE_BLOCK).contains(&rows) && self.loops_fit(self.threads, rows) {
            return Ok(Self {
                solve_block: rows,
                ..self
            });
        }
        Err(InputError::InvalidOption(format!(
            "{} at order n = {} cannot solve in blocks of {rows} rows (1 to \
             {MAX_SOLVE_BLOCK}, within the loop budget)",
            self.job.name(),
            self.n
        ))
        .into())
    }

    /// The same plan with the assembly holding `rows` rows of A·diag(d) per invocation
    /// instead of [`assembly_rows`]' choice (the benchmarks' tuning; every order takes both).
    pub fn with_assembly_rows(self, rows: AssemblyRows) -> Self {
        Self {
            assembly_rows: rows,
            ..self
        }
    }

    fn shape(&self) -> GroupShape {
        GroupShape {
            threads: self.threads,
            problems: self.problems_per_group,
            loads: self.staged_loads,
            columns: self.staged_columns,
            resident: (self.residual == Residual::Resident).then_some(self.k),
            inverse: self.solves == TriangularSolves::Inverse,
            separate: self.gram_shape().is_some(),
            normal: self.residual == Residual::Normal,
        }
    }

    /// The same plan with another group shape, if the device runs it: the group's
    /// invocations within the device's limit, and several problems per group only where all
    /// of them fit in shared memory.
    fn reshaped(self, shape: GroupShape, limits: &ComputeLimits) -> Option<Self> {
        let group = shape.threads * shape.problems;
        if group as u64 > u64::from(limits.max_invocations) {
            return None;
        }
        let storage = storage_for(self.job, self.n, shape, limits);
        if shape.problems > 1 && storage != WorkStorage::Shared {
            return None;
        }
        // What stays in shared memory with the triangle in the work buffer (the staged
        // blocks, the vectors) must fit too.
        if shared_bytes(self.job, self.n, shape, storage) as u64 > limits.max_shared_bytes {
            return None;
        }
        let inverse = shape.inverse && self.job.solves();
        Some(Self {
            threads: shape.threads,
            problems_per_group: shape.problems,
            staged_loads: shape.loads,
            staged_columns: shape.columns,
            residual: match (shape.resident, self.residual) {
                (Some(_), _) => Residual::Resident,
                (None, Residual::Resident) => Residual::Restaged,
                (None, other) => other,
            },
            storage,
            solves: if inverse {
                TriangularSolves::Inverse
            } else {
                TriangularSolves::Substitution
            },
            inverse_storage: inverse_storage_for(self.job, self.n, shape, storage, limits),
            ..self
        })
    }

    /// The same plan with `threads` invocations per problem instead of [`threads`]'s choice
    /// (the benchmarks' tuning): at least n (one row each), a multiple of the staged columns
    /// (the residual stages T observations in such blocks), the group (times the problems per
    /// group) at most the device's limit, the assembly's tiles at most [`MAX_TILE_SUMS`] sums
    /// each, and within the loop budget.
    pub fn with_threads(self, threads: usize, limits: &ComputeLimits) -> Result<Self> {
        let t = threads;
        let kc = self.staged_columns;
        // The residual stages T observations in blocks of KC: T a multiple of KC.
        let reshaped = (t >= self.n.max(kc)
            && t.is_multiple_of(kc)
            && self.tiles_fit(t, self.assembly_tiling)
            && self.loops_fit(t, self.solve_block))
        .then(|| {
            self.reshaped(
                GroupShape {
                    threads: t,
                    ..self.shape()
                },
                limits,
            )
        })
        .flatten();
        reshaped.ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} cannot run {t} invocations per problem with {} problems \
                 per work group (at least n, a multiple of {kc}, at most {} in a group, at \
                 most {MAX_TILE_SUMS} assembly tile sums each, within the loop budget)",
                self.job.name(),
                self.n,
                self.problems_per_group,
                limits.max_invocations
            ))
            .into()
        })
    }

    /// The same plan with `problems` problems per work group instead of
    /// [`problems_per_group`]'s choice (the benchmarks' tuning): 1 to
    /// [`MAX_PROBLEMS_PER_GROUP`], the group's invocations within the device's limit, and
    /// all the group's problems in shared memory (more than one problem never takes the
    /// global work buffer).
    pub fn with_problems_per_group(self, problems: usize, limits: &ComputeLimits) -> Result<Self> {
        let reshaped = (1..=MAX_PROBLEMS_PER_GROUP)
            .contains(&problems)
            .then(|| {
                self.reshaped(
                    GroupShape {
                        problems,
                        ..self.shape()
                    },
                    limits,
                )
            })
            .flatten();
        reshaped.ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} cannot run {problems} problems per work group of {} \
                 invocations each (1 to {MAX_PROBLEMS_PER_GROUP}, at most {} invocations in a \
                 group, and all the problems in {} bytes of shared memory)",
                self.job.name(),
                self.n,
                self.threads,
                limits.max_invocations,
                limits.max_shared_bytes
            ))
            .into()
        })
    }

    /// The same plan with the assembly's staged loads `loads` instead of
    /// [`DEFAULT_STAGED_LOADS`] (the benchmarks' tuning); refused where the group's problems
    /// would no longer fit in shared memory together.
    /// Vector loads stage A block by block: a resident plan takes [`Residual::Restaged`]
    /// with them.
    pub fn with_staged_loads(self, loads: StagedLoads, limits: &ComputeLimits) -> Result<Self> {
        let shape = self.shape();
        let resident = shape.resident.filter(|_| loads == StagedLoads::Scalar);
        self.reshaped(
            GroupShape {
                loads,
                resident,
                ..shape
            },
            limits,
        )
        .ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} with {} problems per work group cannot take \
                     {loads:?} staged loads (the problems no longer fit in shared memory)",
                self.job.name(),
                self.n,
                self.problems_per_group
            ))
            .into()
        })
    }

    /// The same plan with the residual read as `residual` says instead of [`residual`]'s
    /// choice (the benchmarks' tuning): [`Residual::Resident`] only for the jobs that read
    /// observations, with scalar staged loads and pairs of rows, and with all the group's
    /// problems (their whole A, d and b) still in the shared memory and storage they had;
    /// [`Residual::Direct`] only for the fused least squares.
    pub fn with_residual(self, residual: Residual, limits: &ComputeLimits) -> Result<Self> {
        if residual == Residual::Normal {
            let tile = self.gram_shape().map(|g| g.tile);
            if self.job != Job::LeastSquares || tile.is_none_or(|t| t > MAX_F64_TILE) {
                return Err(InputError::InvalidOption(format!(
                    "{} cannot take its residual from the normal equations: Normal is for the \
                     batched least squares with the assembly in a launch of its own \
                     (AssemblyPass::Separate) in tiles of at most {MAX_F64_TILE}",
                    self.job.name()
                ))
                .into());
            }
            return self.regrouped(Self { residual, ..self }, limits);
        }
        if residual == Residual::Direct {
            if self.job != Job::LeastSquares {
                return Err(InputError::InvalidOption(format!(
                    "{} reads no residual: Direct is for the batched least squares only",
                    self.job.name()
                ))
                .into());
            }
            let restaged = self.with_residual(Residual::Restaged, limits)?;
            return Ok(Self {
                residual,
                ..restaged
            });
        }
        let resident = residual == Residual::Resident;
        if resident && self.gram_shape().is_some() {
            return Err(InputError::InvalidOption(format!(
                "{} cannot keep A resident with the assembly in a launch of its own (take \
                 AssemblyPass::Fused first)",
                self.job.name()
            ))
            .into());
        }
        if !resident {
            return Ok(self
                .reshaped(
                    GroupShape {
                        resident: None,
                        ..self.shape()
                    },
                    limits,
                )
                .filter(|plan| plan.storage == self.storage)
                .map_or(Self { residual, ..self }, |plan| Self { residual, ..plan }));
        }
        let reshaped = (self.job.reads_observations()
            && self.staged_loads == StagedLoads::Scalar
            && self.assembly_tiling == AssemblyTiling::Rows)
            .then(|| {
                self.reshaped(
                    GroupShape {
                        resident: Some(self.k),
                        ..self.shape()
                    },
                    limits,
                )
            })
            .flatten()
            .filter(|plan| plan.storage == self.storage);
        reshaped.ok_or_else(|| {
            InputError::InvalidOption(format!(
                "{} at order n = {} with {} observations and {} problems per work group cannot \
                 keep A resident (only for the jobs that read A, with scalar staged loads and \
                 pairs of rows, all of A, d and b in {} bytes of shared memory and the \
                 triangle in {:?} storage)",
                self.job.name(),
                self.n,
                self.k,
                self.problems_per_group,
                limits.max_shared_bytes,
                self.storage
            ))
            .into()
        })
    }

    /// The `#define`s in front of the kernel (after `#version`).
    pub fn defines(&self) -> String {
        let mut text = format!(
            "#define N {}\n#define T {}\n#define P {}\n#define GROUP {}\n#define KC {}\n\
             #define REFINE {}\n#define SB {}\n",
            self.n,
            self.threads,
            self.problems_per_group,
            self.threads * self.problems_per_group,
            self.staged_columns,
            self.refine,
            self.solve_block
        );
        if self.storage == WorkStorage::Global {
            text.push_str("#define GLOBAL_WORK\n");
        }
        if self.job.reads_observations() && self.staged_loads == StagedLoads::Vector {
            text.push_str("#define VEC4_STAGE\n");
        }
        if self.job.reads_observations() && self.residual == Residual::Resident {
            text.push_str(&format!(
                "#define RESIDENT\n#define KR {}\n",
                resident_columns(self.k, self.staged_columns)
            ));
        }
        if self.job == Job::LeastSquares && self.residual == Residual::Normal {
            text.push_str("#define NORMAL_RESIDUAL\n");
        }
        if self.job == Job::LeastSquares && self.residual == Residual::Direct {
            text.push_str(&format!(
                "#define DIRECT_RESIDUAL\n#define RL {}\n",
                residual_lanes(self.n, self.threads)
            ));
            if self.k.is_multiple_of(4) {
                text.push_str("#define RUN_VEC4\n");
            }
        }
        if self.job.solves() && self.solves == TriangularSolves::Inverse {
            text.push_str("#define INVERSE_SOLVE\n");
            if self.inverse_storage == WorkStorage::Global {
                text.push_str("#define INVERSE_GLOBAL\n");
            }
        }
        if self.gram_shape().is_some() {
            text.push_str("#define GRAM\n");
        }
        if self.job.reads_observations() && self.assembly_rows == AssemblyRows::Pair {
            text.push_str("#define PAIR_ROWS\n");
        }
        if let Some(tile) = self.assembly_tiling.tile()
            && self.job.reads_observations()
        {
            let (split, held) = tile_split(self.n, tile, self.threads);
            text.push_str(&format!(
                "#define ASSEMBLY_TILES\n#define TILE {tile}\n#define TSPLIT {split}\n\
                 #define TPL {held}\n"
            ));
        }

        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ComputeLimits {
        ComputeLimits {
            max_storage_block_bytes: 1 << 27,
            max_shared_bytes: 32 << 10,
            max_invocations: 1024,
            max_groups_x: 65535,
            device_memory_bytes: None,
        }
    }

    /// Fewer invocations than rows or staged columns, or more than the device runs, are
    /// refused; an accepted count is kept and the storage chosen for it.
    #[test]
    fn with_threads_checks_the_count() {
        let l = limits();
        let plan = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        for bad in [8, 15, 63, 72, 2048] {
            assert!(plan.with_threads(bad, &l).is_err(), "{bad}");
        }
        let p = plan.with_threads(256, &l).unwrap();
        assert_eq!(p.threads, 256);
        assert_eq!(p.storage, storage_for(Job::LeastSquares, 64, p.shape(), &l));
        let small = Plan::fused(Job::Cholesky, 8, 0, 0, &l).unwrap();
        assert!(small.with_threads(8, &l).is_err());
        assert_eq!(small.with_threads(16, &l).unwrap().threads, 16);
        // The group (invocations per problem times problems) within the device's limit.
        let grouped = small.with_problems_per_group(4, &l).unwrap();
        assert!(grouped.with_threads(512, &l).is_err());
        assert_eq!(grouped.with_threads(256, &l).unwrap().threads, 256);
    }

    /// Every order's default shape is one the plans accept: invocations at least n and a
    /// multiple of the staged columns, the group within 1024 invocations.
    #[test]
    fn default_shapes_cover_every_order() {
        for n in 1..=MAX_ORDER {
            let (t, p) = (threads(n), problems_per_group(n));
            assert!(t >= n && t.is_multiple_of(STAGED_COLUMNS), "n {n}: {t}");
            assert!(
                (1..=MAX_PROBLEMS_PER_GROUP).contains(&p) && t * p <= 1024,
                "n {n}"
            );
        }
        assert_eq!((threads(16), threads(32), threads(128)), (32, 128, 512));
        assert_eq!((problems_per_group(8), problems_per_group(32)), (2, 1));
    }

    /// Problems per group: 1 to MAX_PROBLEMS_PER_GROUP, the group within the device's
    /// invocations, all its problems in shared memory (never the global work buffer); the
    /// defaults fall back to one problem where several do not fit.
    #[test]
    fn with_problems_per_group_checks_the_count() {
        let l = limits();
        // A resident A (about 12 KiB per problem) fits two problems in 32 KiB, not three.
        let resident = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
            .unwrap()
            .with_residual(Residual::Resident, &l)
            .unwrap();
        let resident = resident.with_threads(64, &l).unwrap();
        assert!(resident.with_problems_per_group(2, &l).is_ok());
        assert!(resident.with_problems_per_group(3, &l).is_err());
        let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
            .unwrap()
            .with_residual(Residual::Restaged, &l)
            .unwrap();
        assert_eq!(plan.problems_per_group, problems_per_group(32));
        assert_eq!(plan.threads * plan.problems_per_group, 128);
        for bad in [0, MAX_PROBLEMS_PER_GROUP + 1] {
            assert!(plan.with_problems_per_group(bad, &l).is_err(), "{bad}");
        }
        // 32 x 64 invocations pass the device's 1024.
        let wide = plan.with_problems_per_group(1, &l).unwrap();
        let wide = wide.with_threads(64, &l).unwrap();
        assert!(wide.with_problems_per_group(32, &l).is_err());
        let p = wide.with_problems_per_group(4, &l).unwrap();
        assert_eq!((p.problems_per_group, p.storage), (4, WorkStorage::Shared));
        assert!(p.defines().contains("#define P 4\n#define GROUP 256\n"));
        // n = 64: four problems (about 14 KiB each) pass 32 KiB of shared memory.
        let big = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        assert!(big.with_problems_per_group(4, &l).is_err());
        assert_eq!(
            big.with_problems_per_group(1, &l)
                .unwrap()
                .problems_per_group,
            1
        );
        // n = 129 takes the global work buffer: one problem per group only.
        let global = Plan::fused(Job::Cholesky, 129, 0, 0, &l).unwrap();
        assert_eq!(global.storage, WorkStorage::Global);
        assert!(global.with_problems_per_group(2, &l).is_err());
        // A default that does not fit falls back to one problem per group.
        let tight = ComputeLimits {
            max_shared_bytes: 6 << 10,
            ..l
        };
        let fallback = Plan::fused(Job::LeastSquares, 32, 64, 1, &tight).unwrap();
        assert_eq!(fallback.problems_per_group, 1);
    }

    /// Rows per solve block: 1 to MAX_SOLVE_BLOCK, named in the defines.
    #[test]
    fn with_solve_block_checks_the_rows() {
        let plan = Plan::fused(Job::SpdSolve, 40, 0, 2, &limits()).unwrap();
        assert_eq!(plan.solve_block, solve_block(40));
        for bad in [0, MAX_SOLVE_BLOCK + 1] {
            assert!(plan.with_solve_block(bad).is_err(), "{bad}");
        }
        let p = plan.with_solve_block(16).unwrap();
        assert!(p.defines().contains("#define SB 16\n"));
    }

    /// The assembly's rows per invocation: pairs past n = 64 by default, named in the defines
    /// of the jobs that assemble.
    #[test]
    fn assembly_rows_are_named_in_the_defines() {
        let l = limits();
        let small = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        assert_eq!(small.assembly_rows, AssemblyRows::Single);
        assert!(!small.defines().contains("PAIR_ROWS"));
        let paired = small.with_assembly_rows(AssemblyRows::Pair);
        assert!(paired.defines().contains("#define PAIR_ROWS\n"));
        let large = Plan::fused(Job::Assemble, 65, 130, 0, &l).unwrap();
        assert_eq!(large.assembly_rows, AssemblyRows::Pair);
        assert!(large.defines().contains("#define PAIR_ROWS\n"));
        let factor = Plan::fused(Job::Cholesky, 65, 0, 0, &l).unwrap();
        assert!(!factor.defines().contains("PAIR_ROWS"));
    }

    /// The register tiles' split: the staged columns shared by up to MAX_TILE_SPLIT
    /// invocations where the tiles are fewer than the invocations, else several tiles each;
    /// the defines name them for the jobs that assemble, and too many tiles per invocation
    /// are refused.
    #[test]
    fn tilings_are_dealt_out_and_named_in_the_defines() {
        let l = limits();
        assert_eq!(tile_split(32, 4, 128), (3, 1));
        assert_eq!(tile_split(32, 4, 144), (4, 1));
        assert_eq!(tile_split(32, 2, 128), (1, 2));
        assert_eq!(tile_split(128, 4, 512), (1, 2));
        assert_eq!(tile_split(128, 4, 528), (1, 1));
        assert_eq!(tile_split(1, 4, 16), (MAX_TILE_SPLIT, 1));
        let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap();
        assert_eq!(plan.assembly_tiling, assembly_tiling(32));
        let tiled = plan.with_assembly_tiling(AssemblyTiling::Tiles4).unwrap();
        let defines = tiled.defines();
        assert!(
            defines.contains(
                "#define ASSEMBLY_TILES\n#define TILE 4\n#define TSPLIT 3\n#define TPL 1\n"
            )
        );
        assert!(
            !plan
                .with_assembly_tiling(AssemblyTiling::Rows)
                .unwrap()
                .defines()
                .contains("TILE")
        );
        // The factor assembles nothing: no tiles in its defines.
        let factor = Plan::fused(Job::Cholesky, 32, 0, 0, &l).unwrap();
        let factor = factor.with_assembly_tiling(AssemblyTiling::Tiles4).unwrap();
        assert!(!factor.defines().contains("TILE"));
        // n = 256 on 1,024 invocations: 2 x 2 tiles 9 each (36 sums), 4 x 4 tiles 3 each (48
        // sums): both refused; n = 129: 2 x 2 tiles 3 each, 4 x 4 one each.
        let big = Plan::fused(Job::Assemble, 256, 16, 0, &l).unwrap();
        assert_eq!(
            big.with_assembly_tiling(AssemblyTiling::Tiles2)
                .unwrap_err()
                .to_string(),
            "invalid option: batched assembly at order n = 256 cannot assemble by Tiles2 with \
             1024 invocations per problem (at most 32 tile sums per invocation, within the loop \
             budget)"
        );
        assert!(big.with_assembly_tiling(AssemblyTiling::Tiles4).is_err());
        let edge = Plan::fused(Job::Assemble, 129, 16, 0, &l).unwrap();
        assert!(edge.with_assembly_tiling(AssemblyTiling::Tiles2).is_ok());
        assert!(edge.with_assembly_tiling(AssemblyTiling::Tiles4).is_ok());
        // Fewer invocations that would hold too many sums are refused: n = 64 in 4 x 4 tiles
        // (136) on 64 invocations, 3 each.
        let small = Plan::fused(Job::LeastSquares, 64, 128, 1, &l)
            .unwrap()
            .with_assembly_tiling(AssemblyTiling::Tiles4)
            .unwrap();
        assert!(small.with_threads(64, &l).is_err());
        assert_eq!(small.with_threads(80, &l).unwrap().threads, 80);
    }

    /// Staged columns: one of the choices, dividing the invocations, the problems in the
    /// storage they had and everything left in shared memory within the device's; named KC.
    #[test]
    fn with_staged_columns_checks_the_fit() {
        let l = limits();
        let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap();
        assert_eq!(plan.staged_columns, STAGED_COLUMNS);
        for bad in [0, 8, 48, 128] {
            assert!(plan.with_staged_columns(bad, &l).is_err(), "{bad}");
        }
        let wide = plan.with_staged_columns(64, &l).unwrap();
        assert!(wide.defines().contains("#define KC 64\n"));
        assert_eq!(wide.storage, WorkStorage::Shared);
        // 32 invocations do not divide into 64 columns (n = 8).
        let eight = Plan::fused(Job::LeastSquares, 8, 16, 1, &l).unwrap();
        assert_eq!(
            eight.with_staged_columns(64, &l).unwrap_err().to_string(),
            "invalid option: batched least squares at order n = 8 cannot stage 64 observations \
             per step with 32 invocations per problem and 2 per work group (one of [16, 32, \
             64], dividing the invocations, the problems still in Shared storage, within the \
             loop budget)"
        );
        assert_eq!(
            eight.with_staged_columns(32, &l).unwrap().staged_columns,
            32
        );
        // Threads then must stay a multiple of the columns.
        assert!(wide.with_threads(96, &l).is_err());
        // n = 129 in the work buffer: 64 staged columns of 129 rows are past 32 KiB.
        let global = Plan::fused(Job::LeastSquares, 129, 258, 1, &l).unwrap();
        assert_eq!(global.storage, WorkStorage::Global);
        assert!(global.with_staged_columns(64, &l).is_err());
        assert!(global.with_staged_columns(32, &l).is_ok());
        // n = 64 fits with 64 columns (about 27 KiB); n = 80's triangle would be pushed out
        // to the work buffer: refused.
        let fits = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        let fits = fits.with_staged_columns(64, &l).unwrap();
        assert_eq!(fits.storage, WorkStorage::Shared);
        let mid = Plan::fused(Job::LeastSquares, 80, 160, 1, &l).unwrap();
        assert_eq!(mid.storage, WorkStorage::Shared);
        assert!(mid.with_staged_columns(64, &l).is_err());
        assert!(mid.with_staged_columns(32, &l).is_ok());
    }

    /// Both staged loads are accepted where the problems fit, named in the defines, and
    /// refused where the larger layout would no longer fit the group's shared memory.
    #[test]
    fn with_staged_loads_checks_the_fit() {
        let l = limits();
        let plan = Plan::fused(Job::LeastSquares, 16, 32, 1, &l).unwrap();
        assert_eq!(plan.staged_loads, DEFAULT_STAGED_LOADS);
        let v = plan.with_staged_loads(StagedLoads::Vector, &l).unwrap();
        assert!(v.defines().contains("#define VEC4_STAGE"));
        let s = plan.with_staged_loads(StagedLoads::Scalar, &l).unwrap();
        assert!(!s.defines().contains("VEC4_STAGE"));
        // Problems per group chosen to fill shared memory with vector loads exactly; the
        // scalar layout's padding then overflows it.
        let shape = GroupShape {
            threads: 32,
            problems: 2,
            loads: StagedLoads::Vector,
            columns: STAGED_COLUMNS,
            resident: None,
            // The default solves' vector W (L⁻¹ itself then in the work buffer).
            inverse: triangular_solves(16) == TriangularSolves::Inverse,
            separate: false,
            normal: false,
        };
        let bytes = 2 * shared_bytes(Job::LeastSquares, 16, shape, WorkStorage::Shared);
        let exact = ComputeLimits {
            max_shared_bytes: bytes as u64,
            ..l
        };
        let fits = Plan::fused(Job::LeastSquares, 16, 32, 1, &exact)
            .unwrap()
            .with_staged_loads(StagedLoads::Vector, &exact)
            .unwrap()
            .with_problems_per_group(2, &exact)
            .unwrap();
        assert!(fits.with_staged_loads(StagedLoads::Scalar, &exact).is_err());
    }

    /// The residual's sources: resident by default where the staged A is small, direct past
    /// it; the resident columns (KR) and the direct lanes (RL) named in the defines; a
    /// resident A that passes shared memory refused; reshaping keeps the source.
    #[test]
    fn residuals_are_chosen_and_named_in_the_defines() {
        let l = limits();
        for n in [1, 8] {
            assert_eq!(residual(n, 2 * n), Residual::Resident, "n {n}");
        }
        for n in [16, 32, 33, 64, 128, 256] {
            assert_eq!(residual(n, 2 * n), Residual::Direct, "n {n}");
        }
        assert_eq!(resident_columns(67, 16), 80);
        assert_eq!(resident_columns(0, 16), 16);
        assert_eq!(residual_lanes(128, 512), 4);
        assert_eq!(residual_lanes(33, 128), 3);
        assert_eq!(residual_lanes(1, 32), 8);
        // 67 observations take 80 resident columns: 10 KiB of A, past the default's 8 KiB.
        assert_eq!(residual(32, 67), Residual::Direct);
        let plan = Plan::fused(Job::LeastSquares, 32, 67, 1, &l).unwrap();
        assert_eq!(plan.residual, Residual::Direct);
        let plan = plan.with_residual(Residual::Resident, &l).unwrap();
        assert_eq!(plan.residual, Residual::Resident);
        assert!(plan.defines().contains("#define RESIDENT\n#define KR 80\n"));
        let wide = plan.with_staged_columns(32, &l).unwrap();
        assert_eq!(wide.residual, Residual::Resident);
        assert!(wide.defines().contains("#define KR 96\n"));
        // Resident takes more shared memory than restaged, and the threads keep the source.
        let shape = plan.shape();
        let restaged = GroupShape {
            resident: None,
            ..shape
        };
        assert!(
            shared_bytes(Job::LeastSquares, 32, shape, WorkStorage::Shared)
                > shared_bytes(Job::LeastSquares, 32, restaged, WorkStorage::Shared)
        );
        assert_eq!(
            plan.with_threads(64, &l).unwrap().residual,
            Residual::Resident
        );
        // Direct survives reshaping too, and is named with its lanes.
        let direct = plan.with_residual(Residual::Direct, &l).unwrap();
        assert!(
            direct
                .defines()
                .contains("#define DIRECT_RESIDUAL\n#define RL 4\n")
        );
        let direct = direct.with_threads(64, &l).unwrap();
        assert_eq!(direct.residual, Residual::Direct);
        assert!(direct.defines().contains("#define RL 2\n"));
        // The rows' sums read runs of 4 observations as vec4 only where every run is
        // aligned (67 observations: scalars).
        assert!(!direct.defines().contains("RUN_VEC4"));
        let aligned = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
            .unwrap()
            .with_residual(Residual::Direct, &l)
            .unwrap();
        assert!(aligned.defines().contains("#define RUN_VEC4\n"));
        // n = 64 with 128 observations: A alone is 32 KiB, past the device's shared memory.
        let big = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        assert_eq!(big.residual, Residual::Direct);
        let e = big.with_residual(Residual::Resident, &l).unwrap_err();
        assert!(e.to_string().contains("cannot keep A resident"), "{e}");
        assert_eq!(
            big.with_residual(Residual::Restaged, &l).unwrap().residual,
            Residual::Restaged
        );
    }

    /// The solves substitute by default; L⁻¹ where asked for (shared memory where it fits
    /// beside everything else, else the work buffer after the factor's triangle), named in
    /// the defines; the jobs without solves refuse it.
    #[test]
    fn inverse_solves_are_chosen_and_placed() {
        let l = limits();
        let small = Plan::fused(Job::LeastSquares, 8, 16, 1, &l).unwrap();
        assert_eq!(small.solves, TriangularSolves::Substitution);
        assert!(!small.defines().contains("INVERSE"));
        assert_eq!(
            Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
                .unwrap()
                .solves,
            TriangularSolves::Substitution
        );
        let inverse = |p: Plan| p.with_solves(TriangularSolves::Inverse, &l).unwrap();
        let mid = inverse(Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap());
        assert_eq!(
            (mid.solves, mid.inverse_storage),
            (TriangularSolves::Inverse, WorkStorage::Shared)
        );
        assert!(mid.defines().contains("#define INVERSE_SOLVE\n"));
        assert!(!mid.defines().contains("INVERSE_GLOBAL"));
        assert_eq!(mid.work_floats(), 0);
        // n = 128: the factor's triangle already in the work buffer on 32 KiB, L⁻¹ after it.
        let big = inverse(Plan::fused(Job::SpdSolve, 128, 0, 1, &l).unwrap());
        assert_eq!(big.storage, WorkStorage::Global);
        assert_eq!(big.inverse_storage, WorkStorage::Global);
        assert_eq!(big.work_floats(), 2 * packed(128));
        assert!(big.defines().contains("#define INVERSE_GLOBAL\n"));
        // Substitution back: no L⁻¹, the factor's triangle alone in the work buffer.
        let back = big.with_solves(TriangularSolves::Substitution, &l).unwrap();
        assert_eq!(back.work_floats(), packed(128));
        assert!(!back.defines().contains("INVERSE"));
        // L⁻¹ costs shared memory: n = 64 with four problems per group puts it in the buffer.
        let four = inverse(Plan::fused(Job::SpdSolve, 64, 0, 1, &l).unwrap())
            .with_problems_per_group(2, &l)
            .unwrap();
        assert_eq!(four.solves, TriangularSolves::Inverse);
        assert_eq!(four.inverse_storage, WorkStorage::Global);
        let factor = Plan::fused(Job::Cholesky, 32, 0, 0, &l).unwrap();
        assert!(factor.with_solves(TriangularSolves::Inverse, &l).is_err());
        assert!(!factor.defines().contains("INVERSE"));
    }

    /// The least squares take the separate assembly by default from n = 9 to 128 (the
    /// normal equations' residual where [`separate_default`] says, one problem per group of
    /// its invocations), the fused one at n = 8 and past 128 and for the other jobs; where
    /// the shape does not fit (llvmpipe's loop budget, say) the fused plan stays.
    #[test]
    fn the_separate_assembly_is_the_default_between_orders_9_and_128() {
        let l = limits();
        for (n, tile, staged, normal, threads) in [
            (12, 2, false, true, 32),
            (16, 4, false, false, 32),
            (24, 4, false, false, 32),
            (31, 4, false, false, 32),
            (32, 4, true, false, 32),
            (33, 4, true, false, 128),
            (64, 4, true, false, 128),
            (65, 4, true, false, 512),
            (128, 4, true, false, 512),
        ] {
            let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
            let shape = plan.gram_shape().unwrap_or_else(|| panic!("n {n}"));
            assert_eq!(
                (shape.tile, shape.lanes, shape.staged),
                (tile, 1, staged),
                "n {n}"
            );
            assert_eq!(plan.residual == Residual::Normal, normal, "n {n}");
            assert_eq!(plan.gram_f64(), normal, "n {n}");
            assert_eq!(
                (plan.threads, plan.problems_per_group),
                (threads, 1),
                "n {n}"
            );
            assert!(plan.defines().contains("#define GRAM\n"));
            // The fused plan is still there to be had.
            let fused = Plan::fused(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
            assert_eq!(fused.assembly_pass, AssemblyPass::Fused);
            assert!(!fused.defines().contains("GRAM"));
        }
        for n in [1, 8, 129, 256] {
            let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
            assert_eq!(
                plan,
                Plan::fused(Job::LeastSquares, n, 2 * n, 1, &l).unwrap()
            );
        }
        for job in [Job::Assemble, Job::Cholesky, Job::SpdSolve] {
            let k = if job == Job::Assemble { 64 } else { 0 };
            let plan = Plan::new(job, 32, k, 1, &l).unwrap();
            assert_eq!(plan.assembly_pass, AssemblyPass::Fused, "{job:?}");
        }
        // Tiles of 8 never form f64 sums: Normal refused with them, and the residual goes
        // back to A when a Normal plan takes them.
        let plan = Plan::new(Job::LeastSquares, 32, 64, 1, &l).unwrap();
        let eight = GramShape::new(8, 1).unwrap();
        let wide = plan
            .with_assembly_pass(AssemblyPass::Separate(eight), &l)
            .unwrap();
        assert_eq!(wide.residual, Residual::Direct);
        assert!(wide.with_residual(Residual::Normal, &l).is_err());
        // The staged shape holds a problem's tiles in one group: refused past it (n = 200:
        // 1,326 tiles of 4), not cut.
        let big = Plan::new(Job::LeastSquares, 200, 400, 1, &l).unwrap();
        let e = big
            .with_assembly_pass(AssemblyPass::Separate(GramShape::STAGED), &l)
            .unwrap_err();
        assert!(e.to_string().contains("launch of its own"), "{e}");
        // The fused assembly takes the residual back from the normal equations.
        let fused = plan.with_assembly_pass(AssemblyPass::Fused, &l).unwrap();
        assert_eq!(fused.residual, Residual::Direct);
        assert!(fused.with_residual(Residual::Normal, &l).is_err());
    }
}
