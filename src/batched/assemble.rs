//! Batched assembly: the lower triangle of Cₚ = Aₚ·diag(dₚ)·Aₚᵀ for every problem.

use super::batch::{Batch, check_shape};
use super::device::{Inputs, Poison, run};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use crate::error::{InputError, Result};
use crate::matrix::Element;

/// Cₚ's lower triangle (f32, full storage (B, n, n), zeros above the diagonal) for A (B, n, k)
/// and d (B, k), the diagonal of D² per problem.
pub fn assemble<T: Element>(
    kernels: &BatchedKernels,
    a: &Batch<T>,
    d: &Batch<T>,
    poison: Poison,
) -> Result<Batch<f32>> {
    let (count, n, k) = a.shape();
    if n == 0 || k == 0 {
        return Err(InputError::Empty {
            input: "A".into(),
            rows: n,
            cols: k,
        }
        .into());
    }
    check_shape("d", d, count, k, 1, "one weight per column of A")?;
    let plan = Plan::new(Job::Assemble, n, k, 0, kernels.limits())?;
    let (a32, d32) = (a.single("A", false)?, d.single("d", false)?);
    let inputs = Inputs {
        a: Some(&a32),
        d: Some(&d32),
        ..Inputs::default()
    };
    let out = run(kernels, &plan, &inputs, count, poison)?;
    Batch::new(count, n, n, out.matrix)
}
