//! The batched SPD solve: Cₚ·xₚ = bₚ for every problem, factor, solves and refinement in one
//! dispatch.

use super::batch::check_shape;
use super::checks::Read;
use super::device::{Inputs, Poison};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchSolution;
use super::view::AsBatchRef;
use super::{BatchOptions, scaling, solution, square_order};
use crate::error::Result;
use crate::matrix::Element;
use crate::phases::Phases;

/// x (B, n) in f64 for C (B, n, n; lower triangles read) and b (B, n), with INFO per problem.
pub fn spd_solve<T: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    b: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchSolution> {
    spd_solve_as(kernels, c, b, options, poison)
}

/// [`spd_solve`] with x in `X`, written once from the GPU's f64 values (rounded once for
/// f32, where a solved problem whose x leaves f32's normal range gets INFO −1 and NaN).
pub fn spd_solve_as<T: Element, X: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    b: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchSolution<X>> {
    spd_solve_chunked(kernels, c, b, options, poison, None)
}

/// [`spd_solve_as`] in chunks of at most `chunk` problems where given (the tests of the
/// chunks' read-backs); not API.
#[doc(hidden)]
pub fn spd_solve_chunked<T: Element, X: Element>(
    kernels: &BatchedKernels,
    c: &impl AsBatchRef<Elem = T>,
    b: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
    chunk: Option<usize>,
) -> Result<BatchSolution<X>> {
    let mut phases = Phases::named("batched SPD solve", std::time::Instant::now());
    let (c, b) = (c.as_batch_ref(), b.as_batch_ref());
    options.check()?;
    let n = square_order("C", &c)?;
    let count = c.count();
    check_shape(
        "b",
        &b,
        count,
        n,
        1,
        "one right side of length n per matrix of C",
    )?;
    let mut plan = Plan::new(
        Job::SpdSolve,
        n,
        0,
        options.refinement_steps,
        kernels.limits(),
    )?;
    plan.chunk = chunk.map_or(plan.chunk, |c| c.clamp(1, plan.chunk));
    // Each problem scaled by powers of two (C·x = b ⇔ (2^-s·C)·(2^(s-k)·x) = 2^-k·b), so x
    // leaves float32's range only where the scaled problem's does.
    let read = Read::Lower {
        check_upper: options.check_upper,
    };
    let c32 = scaling::stage("C", c, read, true)?;
    let b32 =
        scaling::stage("b", b, Read::All, true).map_err(|e| scaling::first_error(&[&c32], e))?;
    phases.mark("inputs staged");
    let inputs = Inputs {
        c: Some(&c32.values),
        b: Some(&b32.values),
        prepare: [None, None, b32.prepare(), c32.prepare()],
        ..Inputs::default()
    };
    let (x, info) = solution::run_solved(kernels, &plan, &inputs, count, poison, (&b32, &c32))
        .map_err(|e| scaling::first_error(&[&c32, &b32], e))?;
    phases.mark("GPU, x read back");
    let solution = BatchSolution {
        x,
        info,
        refinement_steps: options.refinement_steps,
    };
    phases.mark("results");
    Ok(solution)
}
