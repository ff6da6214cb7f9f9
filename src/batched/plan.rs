//! How a batch runs on the compute kernels: the job's kernel, the work group per problem
//! (T ≥ n invocations), where the problem's matrix lives (shared memory where it fits, else a
//! global work buffer), the per-invocation loop count checked against llvmpipe's limit, and
//! how many problems one set of buffers and one dispatch take.

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

/// Observations staged per step (KC in the kernels).
pub const STAGED_COLUMNS: usize = 16;

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

/// One batch's launch plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// The operation.
    pub job: Job,
    /// The order n (unknowns).
    pub n: usize,
    /// Observations per problem (columns of A; 0 for jobs that read C).
    pub k: usize,
    /// Invocations per work group (≥ n).
    pub threads: usize,
    /// Where the matrix lives.
    pub storage: WorkStorage,
    /// Refinement steps (solves only).
    pub refine: usize,
    /// Problems per set of buffers (a batch past it runs in chunks).
    pub chunk: usize,
    /// Work groups per dispatch (GL_MAX_COMPUTE_WORK_GROUP_COUNT along x).
    pub launch: usize,
}

/// Where the problem's matrix lives: shared memory when everything fits there.
fn storage_for(job: Job, n: usize, threads: usize, limits: &ComputeLimits) -> WorkStorage {
    if shared_bytes(job, n, threads, WorkStorage::Shared) as u64 <= limits.max_shared_bytes {
        WorkStorage::Shared
    } else {
        WorkStorage::Global
    }
}

/// Invocations per work group for order n: at least n (invocation i owns row i) and enough
/// to spread the triangle's n(n+1)/2 entries; the fastest of 32 to 512 in the fused least
/// squares on the H200 (`batched_bench --profile`: 32 for n = 16, 128 for n = 32, 512 for
/// n = 128).
pub fn threads(n: usize) -> usize {
    match n {
        0..=16 => 32,
        17..=64 => 128,
        65..=128 => 512,
        _ => 1024,
    }
}

/// Packed entries of an order-n triangle.
pub fn packed(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Shared memory the job's kernel declares at order n (bytes), with the triangle there or not.
fn shared_bytes(job: Job, n: usize, threads: usize, storage: WorkStorage) -> usize {
    let kc = STAGED_COLUMNS;
    let mut bytes = 4 * n; // V
    if storage == WorkStorage::Shared {
        bytes += 4 * packed(n);
    }
    if job.reads_observations() {
        bytes += 4 * n * (kc + 1) + 4 * kc; // As, Ds
    }
    if job.solves() {
        bytes += 8 * n; // X
    }
    if job == Job::LeastSquares {
        bytes += 4 * kc + 8 * threads; // Bs, Part
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

/// Invocations sharing a pair of rows (p, n − 1 − p) in the kernels' loops over the triangle
/// (G in glsl/batched/common.glsl).
fn pair_lanes(n: usize) -> usize {
    (threads(n) / n.div_ceil(2).max(1)).max(1)
}

/// An upper estimate of the loop iterations one invocation runs (all loops together).
pub fn loop_iterations(job: Job, n: usize, k: usize, t: usize, refine: usize) -> usize {
    let per = |entries: usize| entries.div_ceil(t);
    let kc = STAGED_COLUMNS;
    let blocks = k.div_ceil(kc);
    let stage = per(n * kc) + 1;
    let g = pair_lanes(n);
    // A pair's two rows, G lanes each: at most ⌈(p+1)/G⌉ + ⌈(n−p)/G⌉ entries per lane.
    let pair_entries = (n + 1) / g + 2;
    let assembly = per(packed(n)) + blocks * (stage + 2 * kc + pair_entries * (kc + 1));
    let factor = n * (n / g + 2) + pair_entries;
    // Both sweeps: per block its loop, the small triangle (sb rows, sb(sb − 1)/2 products)
    // and the later rows' update.
    let sb = solve_block(n);
    let solve = 2 * n.div_ceil(sb) * (1 + sb + sb * (sb - 1) / 2 + sb) + 2;
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
    /// [`LOOP_BUDGET`], is [`InputError::Unsupported`] saying what to do instead.
    pub fn new(
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
        let iterations = loop_iterations(job, n, k, threads, refine);
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
        let storage = storage_for(job, n, threads, limits);
        // The largest buffer one problem needs, in bytes: every buffer of a chunk stays within
        // one storage block and GL's 32-bit sizes.
        let mut per_problem = 4 * n * n.max(1);
        if job.reads_observations() {
            per_problem = per_problem.max(4 * n * k);
        }
        if storage == WorkStorage::Global {
            per_problem = per_problem.max(4 * packed(n));
        }
        let block = limits.max_storage_block_bytes.min(i32::MAX as u64) as usize;
        let chunk = (block / per_problem.max(1)).max(1);
        Ok(Self {
            job,
            n,
            k,
            threads,
            storage,
            refine,
            chunk,
            launch: (limits.max_groups_x as usize).max(1),
        })
    }

    /// The same plan with `threads` invocations per work group instead of [`threads`]'s
    /// choice (the benchmarks' tuning): at least n (one row each) and [`STAGED_COLUMNS`], at
    /// most the device's limit, and within the loop budget.
    pub fn with_threads(self, threads: usize, limits: &ComputeLimits) -> Result<Self> {
        let t = threads;
        let fits = t >= self.n.max(STAGED_COLUMNS) && t as u64 <= u64::from(limits.max_invocations);
        if !fits || loop_iterations(self.job, self.n, self.k, t, self.refine) > LOOP_BUDGET {
            return Err(InputError::InvalidOption(format!(
                "{} at order n = {} cannot run {t} invocations per work group (at least \
                 max(n, {STAGED_COLUMNS}), at most {}, within the loop budget)",
                self.job.name(),
                self.n,
                limits.max_invocations
            ))
            .into());
        }
        Ok(Self {
            threads: t,
            storage: storage_for(self.job, self.n, t, limits),
            ..self
        })
    }

    /// The `#define`s in front of the kernel (after `#version`).
    pub fn defines(&self) -> String {
        let mut text = format!(
            "#define N {}\n#define T {}\n#define KC {}\n#define REFINE {}\n#define SB {}\n",
            self.n,
            self.threads,
            STAGED_COLUMNS,
            self.refine,
            solve_block(self.n)
        );
        if self.storage == WorkStorage::Global {
            text.push_str("#define GLOBAL_WORK\n");
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
        let plan = Plan::new(Job::LeastSquares, 64, 128, 1, &l).unwrap();
        for bad in [8, 15, 63, 2048] {
            assert!(plan.with_threads(bad, &l).is_err(), "{bad}");
        }
        let p = plan.with_threads(256, &l).unwrap();
        assert_eq!(p.threads, 256);
        assert_eq!(p.storage, storage_for(Job::LeastSquares, 64, 256, &l));
        let small = Plan::new(Job::Cholesky, 8, 0, 0, &l).unwrap();
        assert!(small.with_threads(8, &l).is_err());
        assert_eq!(small.with_threads(16, &l).unwrap().threads, 16);
    }
}
