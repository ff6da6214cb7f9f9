//! Per-problem scaling by exact powers of two, as the single solves scale b: each problem's
//! inputs brought near 1 before they are rounded to f32, and its solution scaled back in f64,
//! so a problem whose C, b or x lies outside float32's range (but whose scaled problem lies
//! inside) is solved instead of coming back as 0 or ±inf with INFO 0.

use super::batch::Batch;
use crate::matrix::Element;
use crate::scaling::{largest_exponent, times_power_of_two};

/// Per problem of `batch`, the exponent of its largest magnitude (the lower triangle only where
/// `lower_only`): [`Batch::single_scaled`] divides the problem by that power of two as it
/// rounds it to f32.
pub(crate) fn exponents<T: Element>(batch: &Batch<T>, lower_only: bool) -> Vec<i32> {
    use rayon::prelude::*;
    let (rows, cols) = (batch.rows(), batch.cols());
    (0..batch.count())
        .into_par_iter()
        .with_min_len(64)
        .map(|p| {
            let values = batch.problem(p);
            let rows = (0..rows).map(|i| {
                let width = if lower_only { cols.min(i + 1) } else { cols };
                &values[i * cols..i * cols + width]
            });
            largest_exponent(rows.flatten().map(|&v| v.into()))
        })
        .collect()
}

/// Multiplies problem p's solution (`n` values from `x`) by 2^shift[p] in f64; a problem whose
/// solution then leaves f64's range gets INFO −1 (where it had none) and NaN.
pub(crate) fn unscale(x: &mut [f64], n: usize, shift: &[i32], info: &mut [i32]) {
    for (p, &s) in shift.iter().enumerate() {
        let xp = &mut x[p * n..(p + 1) * n];
        for v in xp.iter_mut() {
            *v = times_power_of_two(*v, s);
        }
        if info[p] == 0 && xp.iter().any(|v| !v.is_finite()) {
            info[p] = -1;
            xp.fill(f64::NAN);
        }
    }
}
