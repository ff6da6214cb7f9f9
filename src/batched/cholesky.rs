//! Batched Cholesky: Cₚ = Lₚ·Lₚᵀ for every problem, with INFO per problem.

use super::batch::Batch;
use super::checks::Read;
use super::device::{Inputs, Poison, run};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchFactor;
use super::view::AsBatchRef;
use super::{BatchOptions, scaling, square_order};
use crate::error::Result;
use crate::matrix::Element;
use crate::phases::Phases;

/// The factors of C (B, n, n; only each lower triangle read, the upper ones checked finite
/// with `options.check_upper`) in f32, with INFO per problem.
pub fn cholesky<T: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchFactor> {
    let mut phases = Phases::named("batched Cholesky", std::time::Instant::now());
    let c = c.as_batch_ref();
    let n = square_order("C", &c)?;
    let count = c.count();
    let plan = Plan::new(Job::Cholesky, n, 0, 0, kernels.limits())?;
    let read = Read::Lower {
        check_upper: options.check_upper,
    };
    let c32 = scaling::stage("C", c, read, false)?;
    phases.mark("inputs staged");
    let inputs = Inputs {
        c: Some(&c32.values),
        prepare: [None, None, None, c32.prepare()],
        ..Inputs::default()
    };
    let out = run(kernels, &plan, &inputs, count, poison)?;
    phases.mark("GPU");
    let factor = BatchFactor {
        l: Batch::new(count, n, n, out.matrix)?,
        info: out.info,
    };
    phases.mark("results");
    Ok(factor)
}
