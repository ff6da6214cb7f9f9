//! Batched assembly: the lower triangle of Cₚ = Aₚ·diag(dₚ)·Aₚᵀ for every problem.

use super::batch::{Batch, check_shape};
use super::checks::Read;
use super::device::{Inputs, Poison, run};
use super::kernels::BatchedKernels;
use super::plan::{Job, Plan};
use super::scaling;
use super::view::AsBatchRef;
use crate::error::{InputError, NumericalError, Result};
use crate::matrix::Element;
use crate::scaling::{PRODUCT, product_out_of_range};

/// Cₚ's lower triangle (f32, full storage (B, n, n), zeros above the diagonal) for A (B, n, k)
/// and d (B, k), the diagonal of D² per problem. A Cₚ outside float32's range is
/// [`NumericalError::BatchOutOfRange`] naming the first such problem.
pub fn assemble<T: Element>(
    kernels: &BatchedKernels,
    a: &impl AsBatchRef<Elem = T>,
    d: &impl AsBatchRef<Elem = T>,
    poison: Poison,
) -> Result<Batch<f32>> {
    let (a, d) = (a.as_batch_ref(), d.as_batch_ref());
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
    let plan = Plan::new(Job::Assemble, n, k, 0, kernels.limits())?;
    let (a32, _) = scaling::rounded("A", a, Read::All, false)?;
    let (d32, _) = scaling::rounded("d", d, Read::All, false)?;
    // As the single assembly: a Cₚ whose diagonal leaves float32's range is refused (it would
    // come back ±inf, or flushed to zero), naming the problem.
    for p in 0..count {
        let rows = a32[p * n * k..(p + 1) * n * k].chunks(k);
        let dp = &d32[p * k..(p + 1) * k];
        if let Some((row, value, why, fix)) = product_out_of_range(rows, dp) {
            return Err(NumericalError::BatchOutOfRange {
                what: PRODUCT,
                problem: p,
                row,
                value,
                why,
                fix,
            }
            .into());
        }
    }
    let inputs = Inputs {
        a: Some(&a32),
        d: Some(&d32),
        ..Inputs::default()
    };
    let out = run(kernels, &plan, &inputs, count, poison)?;
    Batch::new(count, n, n, out.matrix)
}
