//! Batched Cholesky: Cₚ = Lₚ·Lₚᵀ for every problem, with INFO per problem.

use super::batch::Batch;
use super::checks::Read;
use super::device::{Inputs, Poison, matrices, run_into};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchFactor;
use super::view::AsBatchRef;
use super::{BatchOptions, scaling, square_order};
use crate::error::{InputError, Result};
use crate::matrix::Element;
use crate::phases::Phases;
use std::mem::MaybeUninit;

/// The factors of C (B, n, n; only each lower triangle read, the upper ones checked finite
/// with `options.check_upper`) in f32, with INFO per problem.
pub fn cholesky<T: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchFactor> {
    let view = c.as_batch_ref();
    let (count, n) = (view.count(), square_order("C", &view)?);
    // An order the kernels refuse is refused before L's room is allocated.
    Plan::new(Job::Cholesky, n, 0, 0, kernels.limits())?;
    let len = count * n * n;
    let mut l = crate::memory::with_capacity(len, || {
        format!("the factors of {count} problems of order {n}")
    })?;
    let info = cholesky_into(
        kernels,
        c,
        &mut l.spare_capacity_mut()[..len],
        options,
        poison,
    )?;
    // SAFETY: `cholesky_into` wrote all `len` values.
    unsafe { l.set_len(len) };
    Ok(BatchFactor {
        l: Batch::new(count, n, n, l)?,
        info,
    })
}

/// [`cholesky`] with L written into the caller's `l` (B·n·n values, row-major with the batch
/// outer): INFO per problem. On an error `l` holds NaN, no part of a result.
pub fn cholesky_into<T: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    l: &mut [MaybeUninit<f32>],
    options: &BatchOptions,
    poison: Poison,
) -> Result<Vec<i32>> {
    let mut phases = Phases::named("batched Cholesky", std::time::Instant::now());
    let mut factored = || -> Result<Vec<i32>> {
        let c = c.as_batch_ref();
        let n = square_order("C", &c)?;
        let count = c.count();
        let plan = Plan::new(Job::Cholesky, n, 0, 0, kernels.limits())?;
        let want = matrices(&plan, count);
        if l.len() != want {
            return Err(InputError::Shape(format!(
                "L's room must hold {want} values ({count} factors of order {n}), but holds {}",
                l.len()
            ))
            .into());
        }
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
        let out = run_into(kernels, &plan, &inputs, count, poison, None, l)?;
        phases.mark("GPU");
        Ok(out.info)
    };
    let factored = factored();
    if factored.is_err() {
        l.fill(MaybeUninit::new(f32::NAN));
    }
    factored
}
