//! Per-problem scaling by exact powers of two, as the single solves scale b: each problem's
//! inputs brought near 1 before they are rounded to f32, and its solution scaled back in f64,
//! so a problem whose C, b or x lies outside float32's range (but whose scaled problem lies
//! inside) is solved instead of coming back as 0 or ±inf with INFO 0.

use super::batch::Batch;
use crate::matrix::Element;
use crate::scaling::{exponent_of, times_power_of_two};

/// `batch` in f64 with each problem divided by the power of two of its largest magnitude (the
/// lower triangle only where `lower_only`), and those exponents: exact wherever the scaled value
/// is a normal f64. Non-finite values stay non-finite, for the f32 check to name.
pub(crate) fn scaled<T: Element>(batch: &Batch<T>, lower_only: bool) -> (Batch<f64>, Vec<i32>) {
    let (count, rows, cols) = batch.shape();
    let mut data = Vec::with_capacity(batch.as_slice().len());
    let mut exponents = Vec::with_capacity(count);
    for p in 0..count {
        let values = batch.problem(p);
        let read = |at: usize| !lower_only || at % cols.max(1) <= at / cols.max(1);
        let largest = values
            .iter()
            .enumerate()
            .filter(|&(at, v)| read(at) && Into::<f64>::into(*v).is_finite())
            .map(|(_, &v)| Into::<f64>::into(v).abs())
            .fold(0.0, f64::max);
        let e = if largest > 0.0 {
            exponent_of(largest)
        } else {
            0
        };
        exponents.push(e);
        data.extend(values.iter().map(|&v| times_power_of_two(v.into(), -e)));
    }
    let scaled = Batch::new(count, rows, cols, data).expect("the shape of `batch`");
    (scaled, exponents)
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
