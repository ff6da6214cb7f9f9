//! Batched weighted least squares min ‖Dₚ(bₚ − Aₚᵀxₚ)‖₂ in one dispatch: assembly of
//! Cₚ = Aₚ·diag(dₚ)·Aₚᵀ and Aₚ·diag(dₚ)·bₚ on chip, factor, both solves and refinement.

use super::batch::check_shape;
use super::checks::Read;
use super::device::{Inputs, Poison};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::result::BatchSolution;
use super::view::AsBatchRef;
use super::{BatchOptions, scaling, solution};
use crate::error::{InputError, Result};
use crate::matrix::Element;
use crate::phases::Phases;

/// x (B, n) in f64 for A (B, n, k: n unknowns, k observations, as the single-problem
/// `Gpu::least_squares`), d (B, k) the weights (the diagonal of D²) and b (B, k), with INFO
/// per problem (a problem whose A·D²·Aᵀ is not positive definite in f32 fails alone).
pub fn least_squares<T: Element>(
    kernels: &BatchedKernels,
    a: &impl AsBatchRef<Elem = T>,
    d: &impl AsBatchRef<Elem = T>,
    b: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchSolution> {
    least_squares_as(kernels, a, d, b, options, poison)
}

/// [`least_squares`] with x in `X`, as [`super::spd_solve_as`] gives it.
pub fn least_squares_as<T: Element, X: Element>(
    kernels: &BatchedKernels,
    a: &impl AsBatchRef<Elem = T>,
    d: &impl AsBatchRef<Elem = T>,
    b: &impl AsBatchRef<Elem = T>,
    options: &BatchOptions,
    poison: Poison,
) -> Result<BatchSolution<X>> {
    let mut phases = Phases::named("batched least squares", std::time::Instant::now());
    let (a, d, b) = (a.as_batch_ref(), d.as_batch_ref(), b.as_batch_ref());
    options.check()?;
    let (count, n, k) = a.shape();
    if n == 0 || k == 0 {
        return Err(InputError::Empty {
            input: "A".into(),
            rows: n,
            cols: k,
        }
        .into());
    }
    check_shape("d", &d, count, k, 1, "one weight per column of A")?;
    check_shape("b", &b, count, k, 1, "one observation per column of A")?;
    let plan = Plan::new(
        Job::LeastSquares,
        n,
        k,
        options.refinement_steps,
        kernels.limits(),
    )?;
    // Each problem scaled by powers of two: x is the same for 2^-δ·d, and 2^(β-α)·x' for
    // 2^-α·A and 2^-β·b, so x leaves float32's range only where the scaled problem's does.
    let a32 = scaling::stage("A", a, Read::All, true)?;
    let d32 =
        scaling::stage("d", d, Read::All, true).map_err(|e| scaling::first_error(&[&a32], e))?;
    let b32 = scaling::stage("b", b, Read::All, true)
        .map_err(|e| scaling::first_error(&[&a32, &d32], e))?;
    phases.mark("inputs staged");
    let inputs = Inputs {
        a: Some(&a32.values),
        d: Some(&d32.values),
        b: Some(&b32.values),
        prepare: [a32.prepare(), d32.prepare(), b32.prepare(), None],
        ..Inputs::default()
    };
    let (x, info) = solution::run_solved(kernels, &plan, &inputs, count, poison, (&b32, &a32))
        .map_err(|e| scaling::first_error(&[&a32, &d32, &b32], e))?;
    phases.mark("GPU, x read back");
    let solution = BatchSolution {
        x,
        info,
        refinement_steps: options.refinement_steps,
    };
    phases.mark("results");
    Ok(solution)
}
