//! The choices a plan makes, each a typed value with its default: the job, where a problem's
//! matrix lives, the assembly's loads, rows, tiling and pass, the residual, the solves.

use crate::batched::gram::GramShape;
use crate::batched::table;
use crate::gl::{ComputeKernel, LOOP_LIMIT};

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
/// ([`Plan::with_staged_columns`](super::Plan::with_staged_columns); 32 and 64 were slower:
/// `figures/h200/experiments/batched_tiles.csv`).
pub const STAGED_COLUMNS: usize = 16;

/// The staged columns a plan may take ([`Plan::with_staged_columns`](super::Plan::with_staged_columns)): multiples of 4 whose
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
    pub(super) fn row_floats(self, columns: usize) -> usize {
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

/// The most tile sums one invocation holds in registers ([`Plan::with_assembly_tiling`](super::Plan::with_assembly_tiling)):
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
    /// Forward and backward substitution with L, [`Plan::solve_block`](super::Plan::solve_block) rows per barrier:
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

/// The most problems one work group holds ([`Plan::with_problems_per_group`](super::Plan::with_problems_per_group)).
pub const MAX_PROBLEMS_PER_GROUP: usize = 8;
