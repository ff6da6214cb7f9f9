//! How a batch runs on the compute kernels: the job's kernel, the work group's shape (T ≥ n
//! invocations per problem, problems per group, the assembly's loads and rows, the solves'
//! blocks: typed choices with defaults here), where the problem's matrix lives (shared memory
//! where it fits, else a global work buffer), the per-invocation loop count checked against
//! llvmpipe's limit, and how many problems one set of buffers and one dispatch take.

mod choices;
mod shape;
#[cfg(test)]
mod tests;
mod variants;

pub use choices::*;
pub use shape::{LoopShape, MAX_SOLVE_BLOCK, loop_iterations, packed, problems_per_group, solve_block, threads};
use shape::*;

use super::gram::GramShape;
use crate::error::{InputError, Result};
use crate::gl::ComputeLimits;

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
        if self.job.solves() {
            text.push_str(&format!(
                "#define SINGULAR_RATIO {:e}\n",
                crate::batched::SINGULAR_PIVOT_RATIO
            ));
        }
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
