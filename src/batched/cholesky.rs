//! Batched Cholesky: Cₚ = Lₚ·Lₚᵀ for every problem, with INFO per problem.

use super::batch::Batch;
use super::device::{Inputs, Poison, run};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchFactor;
use super::square_order;
use crate::error::Result;
use crate::matrix::Element;
use crate::phases::Phases;

/// The factors of C (B, n, n; only each lower triangle read) in f32, with INFO per problem.
pub fn cholesky<T: Element>(
    kernels: &BatchedKernels,
    c: &Batch<T>,
    poison: Poison,
) -> Result<BatchFactor> {
    let n = square_order("C", c)?;
    let count = c.count();
    let plan = Plan::new(Job::Cholesky, n, 0, 0, kernels.limits())?;
    let mut phase = Phases::named(plan.job.name(), std::time::Instant::now());
    let c32 = c.single("C", true)?;
    let inputs = Inputs {
        c: Some(&c32),
        ..Inputs::default()
    };
    phase.mark("inputs scaled and rounded to f32 on the host");
    let out = run(kernels, &plan, &inputs, count, poison)?;
    phase.mark("the batch on the GPU and back");
    Ok(BatchFactor {
        l: Batch::new(count, n, n, out.matrix)?,
        info: out.info,
    })
}
