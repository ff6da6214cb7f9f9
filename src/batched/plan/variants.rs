//! The plan's variants (`Plan::with_*`): each choice the benchmarks and tests sweep, checked
//! against the device's limits before it is taken.

use crate::error::{InputError, Result};
use crate::gl::ComputeLimits;
use super::*;

impl Plan {
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
}
