//! The batched SPD solve: Cₚ·xₚ = bₚ for every problem, factor, solves and refinement in one
//! dispatch.

use super::batch::{Batch, check_shape};
use super::device::{Inputs, Poison, run};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchSolution;
use super::{BatchOptions, square_order};
use crate::error::Result;
use crate::matrix::Element;

/// x (B, n) in f64 for C (B, n, n; lower triangles read) and b (B, n), with INFO per problem.
pub fn spd_solve<T: Element>(
    kernels: &BatchedKernels,
    c: &Batch<T>,
    b: &Batch<T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchSolution> {
    options.check()?;
    let n = square_order("C", c)?;
    let count = c.count();
    check_shape(
        "b",
        b,
        count,
        n,
        1,
        "one right side of length n per matrix of C",
    )?;
    let plan = Plan::new(
        Job::SpdSolve,
        n,
        0,
        options.refinement_steps,
        kernels.limits(),
    )?;
    let (c32, b32) = (c.single("C", true)?, b.single("b", false)?);
    let inputs = Inputs {
        c: Some(&c32),
        b: Some(&b32),
        ..Inputs::default()
    };
    let out = run(kernels, &plan, &inputs, count, poison)?;
    Ok(BatchSolution {
        x: Batch::vectors(count, n, out.x)?,
        info: out.info,
        refinement_steps: options.refinement_steps,
    })
}
