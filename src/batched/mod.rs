//! Many small problems at once (issue 28): assembly, Cholesky, the SPD solve and weighted
//! least squares over a [`Batch`] of B problems of one order n, one compute work group per
//! problem (or per few, where their matrices fit in shared memory together) with its matrix
//! on chip (packed lower storage in shared memory; a global work buffer where it does not
//! fit), each operation one dispatch (cut only at the device's
//! work-group count and one buffer's size). A problem that is not positive definite does not
//! fail the batch: each result carries LAPACK's/cuSOLVER's INFO per problem
//! ([`BatchFactor::info`], [`BatchSolution::info`]) and the others are right; the solves also
//! flag a problem whose C is singular to working precision (INFO n + 1, as LAPACK's dposvx:
//! [`Failure::Singular`]), where the f32 factor passes on rounding noise.
//!
//! The API is [`Gpu::batched`](crate::Gpu::batched); this module holds the types, the plans
//! (`plan`), the kernels (`glsl/batched/`) and the runs (`device`), one file per operation.

mod assemble;
mod batch;
mod checks;
mod cholesky;
mod least_squares;
mod packed;
mod result;
mod scaling;
mod solution;
mod spd_solve;
mod view;

internal_modules! {
    device;
    gram;
    kernels;
    plan;
    prepare;
    table;
}

pub use assemble::assemble;
pub use batch::Batch;
pub use cholesky::{cholesky, cholesky_into};
pub use least_squares::{least_squares, least_squares_as};
/// The largest order n a batched operation takes.
pub use plan::MAX_ORDER;
pub use result::{BatchFactor, BatchSolution, Failure, SINGULAR_PIVOT_RATIO};
pub use spd_solve::{spd_solve, spd_solve_as, spd_solve_chunked};
pub use view::{AsBatchRef, BatchRef};

use crate::error::{InputError, Result};
use crate::options::Method;

/// The most refinement steps a batched solve takes.
pub const MAX_REFINEMENT_STEPS: usize = 8;

/// Options of the batched operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchOptions {
    /// How to compute: [`Method::Auto`] and [`Method::Tiled`] run the compute kernels (GL
    /// 4.3); the fragment methods have no batched form and are refused.
    pub method: Method,
    /// Refinement steps of the solves (0 to [`MAX_REFINEMENT_STEPS`]; default 1), each with
    /// the residual in f64 on the GPU (see [`BatchSolution`]).
    pub refinement_steps: usize,
    /// Whether the Cholesky and the SPD solve also check that the values above each diagonal,
    /// which they never read, are finite, as scipy's `check_finite` checks a whole array
    /// (default: false, only what is read is checked). The check rides in the upload's copy.
    pub check_upper: bool,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            method: Method::Auto,
            refinement_steps: 1,
            check_upper: false,
        }
    }
}

impl BatchOptions {
    /// The same options with another method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// The same options with `steps` refinement steps.
    pub fn refinement_steps(mut self, steps: usize) -> Self {
        self.refinement_steps = steps;
        self
    }

    /// The same options, checking the values above each diagonal finite or not.
    pub fn check_upper(mut self, check: bool) -> Self {
        self.check_upper = check;
        self
    }

    /// Checks the refinement steps.
    pub(crate) fn check(&self) -> Result<()> {
        if self.refinement_steps > MAX_REFINEMENT_STEPS {
            return Err(InputError::InvalidOption(format!(
                "a batched solve takes 0 to {MAX_REFINEMENT_STEPS} refinement steps, not {}",
                self.refinement_steps
            ))
            .into());
        }
        Ok(())
    }
}

/// The order n of a batch of square matrices (rows == cols, n ≥ 1), naming `input`.
fn square_order<T: Copy>(input: &str, c: &BatchRef<'_, T>) -> Result<usize> {
    let (_, rows, cols) = c.shape();
    if rows == 0 || cols == 0 {
        return Err(InputError::Empty {
            input: input.to_string(),
            rows,
            cols,
        }
        .into());
    }
    if rows != cols {
        return Err(crate::Error::shape(format!(
            "{input} must hold square matrices (a symmetric matrix is square), but they are \
             {rows}x{cols}"
        )));
    }
    Ok(rows)
}
