//! Norms safe near f64's range edges and exact scaling by powers of two: how the solves keep
//! data of any finite scale inside float32's range (shared by every operation).

use crate::error::{Error, NumericalError};
use crate::matrix::{Element, Matrix};
use std::borrow::Cow;

/// ‖v‖₂ without overflow or underflow in the squares (data near f64's range edges).
pub(crate) fn norm2(v: &[f64]) -> f64 {
    let scale = norm_inf(v);
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale * v.iter().map(|v| (v / scale).powi(2)).sum::<f64>().sqrt()
}

/// max |vᵢ|, NaN if any entry is NaN (`f64::max` alone would skip it and let a NaN vector
/// read as small).
pub(crate) fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m: f64, v| {
        if m.is_nan() || v.is_nan() {
            f64::NAN
        } else {
            m.max(v.abs())
        }
    })
}

/// The exponent k with 2^k·x in [1, 2) for a finite x ≠ 0 (subnormals included).
pub(crate) fn exponent_of(x: f64) -> i32 {
    let x = x.abs();
    if x < f64::MIN_POSITIVE {
        return exponent_of(x * 2f64.powi(64)) - 64;
    }
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// 2^e where it is a normal f64 (e in −1022..=1023), built from its bits.
fn power_of_two(e: i32) -> Option<f64> {
    (-1022..=1023)
        .contains(&e)
        .then(|| f64::from_bits(((e + 1023) as u64) << 52))
}

/// v·2^k, exact wherever the result is a normal number (k split in two so that 2^k itself
/// need not be representable: |k| up to about 2100). Cheap enough for every entry of a matrix.
pub(crate) fn times_power_of_two(v: f64, k: i32) -> f64 {
    let half = k / 2;
    match (power_of_two(half), power_of_two(k - half)) {
        (Some(a), Some(b)) => v * a * b,
        _ => v * 2f64.powi(half) * 2f64.powi(k - half),
    }
}

/// The k with 4^k·max C(j,j) near 1 (0 where the diagonal has no positive entry): C scaled by
/// 4^k factors as C does, with its factor scaled by 2^k.
pub(crate) fn scale_exponent(diagonal: impl Iterator<Item = f64>) -> i32 {
    let c_max = diagonal.fold(0.0f64, f64::max);
    if c_max > 0.0 && c_max.is_finite() {
        -(exponent_of(c_max) + 1).div_euclid(2)
    } else {
        0
    }
}

/// Per row, the [`scale_exponent`] of its own diagonal entry: S = diag(2^k_j) brings S·C·S's
/// diagonal near 1 (LAPACK's dpoequ with powers of two, exact).
pub(crate) fn equilibration_exponents(diagonal: impl Iterator<Item = f64>) -> Vec<i32> {
    diagonal
        .map(|d| scale_exponent(std::iter::once(d)))
        .collect()
}

/// A failing pivot of the scaled C restated in C's units: column j's pivot belongs to a matrix
/// whose row and column j were scaled by 2^exponent(j). Other errors pass through.
pub(crate) fn pivot_in_units(e: Error, exponent: impl Fn(usize) -> i32) -> Error {
    match e {
        Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot }) => {
            NumericalError::NotPositiveDefinite {
                column,
                pivot: times_power_of_two(pivot, -2 * exponent(column)),
            }
            .into()
        }
        e => e,
    }
}

/// What the assembly computes, as its range errors name it.
pub(crate) const PRODUCT: &str = "C = A·diag(d)·Aᵀ";

/// The first row of A (given row by row) whose diagonal entry of A·diag(d)·Aᵀ, in f64, leaves
/// f32's range: its index, value, why and which way to scale.
pub(crate) fn product_out_of_range<'a>(
    rows: impl Iterator<Item = &'a [f32]>,
    d: &[f32],
) -> Option<(usize, f64, String, &'static str)> {
    for (i, row) in rows.enumerate() {
        let value: f64 = row
            .iter()
            .zip(d)
            .map(|(&a, &d)| f64::from(a) * f64::from(a) * f64::from(d))
            .sum();
        if value.abs() > f64::from(f32::MAX) {
            let why = format!("above float32's largest value {:.3e}", f32::MAX);
            return Some((i, value, why, "divide A or d by a power of two"));
        }
        if value != 0.0 && value.abs() < f64::from(f32::MIN_POSITIVE) {
            let why = format!(
                "below float32's smallest normal value {:.3e}",
                f32::MIN_POSITIVE
            );
            return Some((i, value, why, "multiply A or d by a power of two"));
        }
    }
    None
}

/// The exponent e of the largest finite magnitude among `values` (2^e ≤ |v| < 2^(e+1)), 0 where
/// none is finite and non-zero: dividing by 2^e brings them near 1.
pub(crate) fn largest_exponent(values: impl IntoIterator<Item = f64>) -> i32 {
    let largest = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if largest > 0.0 {
        exponent_of(largest)
    } else {
        0
    }
}

/// `a` in f64 divided by 2^e for e its [`largest_exponent`], and e: exact wherever the result
/// is a normal f64, subnormal entries included. Non-finite entries stay non-finite, for the
/// input checks to name. An f64 `a` already in [1, 2) (e = 0) is borrowed, not copied; the
/// passes run on all cores for large matrices.
pub(crate) fn scaled_to_unit<T: Element>(a: &Matrix<T>) -> (Cow<'_, Matrix<f64>>, i32) {
    let e = unit_exponent(a);
    (scaled_by(a, e), e)
}

/// The [`largest_exponent`] of `a`'s entries, in one pass (on all cores for large matrices).
pub(crate) fn unit_exponent<T: Element>(a: &Matrix<T>) -> i32 {
    use rayon::prelude::*;
    let largest = |c: &[T]| {
        c.iter()
            .map(|&v| v.into())
            .filter(|v: &f64| v.is_finite())
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    let values = a.as_slice();
    let largest = if values.len() <= 1 << 16 {
        largest(values)
    } else {
        values
            .par_chunks(1 << 16)
            .map(largest)
            .reduce(|| 0.0, f64::max)
    };
    if largest > 0.0 {
        exponent_of(largest)
    } else {
        0
    }
}

/// `a` in f64 divided by 2^e (an f64 `a` borrowed where e = 0).
pub(crate) fn scaled_by<T: Element>(a: &Matrix<T>, e: i32) -> Cow<'_, Matrix<f64>> {
    match (e, T::as_double(a)) {
        (0, Some(a)) => Cow::Borrowed(a),
        _ => Cow::Owned(a.par_map(|v| times_power_of_two(v.into(), -e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_to_unit_borrows_what_needs_no_scaling_and_scales_exactly() {
        // Below and above the parallel size; non-finite entries ignored by e and kept.
        for n in [3usize, 300] {
            let a = Matrix::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 * 0.15 - 0.5);
            let (unit, e) = scaled_to_unit(&a);
            assert!(matches!(unit, Cow::Borrowed(_)) && e == 0, "n {n}");
            let mut big = a.map(|v| v * 3e200);
            big[(1, 2)] = f64::INFINITY;
            big[(2, 1)] = f64::NAN;
            let (unit, e) = scaled_to_unit(&big);
            assert!(matches!(unit, Cow::Owned(_)), "n {n}");
            let largest = unit
                .as_slice()
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!((1.0..2.0).contains(&largest), "n {n}: {largest}");
            for (&u, &b) in unit.as_slice().iter().zip(big.as_slice()) {
                assert!(times_power_of_two(u, e) == b || (u.is_nan() && b.is_nan()));
            }
            // f32 in: widened (and scaled where it must be), never borrowed.
            let single = a.map(|v| v as f32);
            let (unit, e) = scaled_to_unit(&single);
            assert!(matches!(unit, Cow::Owned(_)) && e == 0, "n {n}");
            assert_eq!(unit[(2, 2)], f64::from(a[(2, 2)] as f32));
        }
    }

    #[test]
    fn norms_see_nan_and_powers_of_two_are_exact() {
        assert!(norm_inf(&[1.0, f64::NAN, 3.0]).is_nan());
        assert!(norm_inf(&[f64::NAN, 1.0]).is_nan());
        assert!(norm2(&[f64::NAN; 3]).is_nan());
        assert_eq!(norm_inf(&[-4.0, 2.0]), 4.0);
        for x in [1.0, 1.5, 1e-310, 3e300, f64::MIN_POSITIVE, 5e-324] {
            let k = exponent_of(x);
            let y = times_power_of_two(x, -k);
            assert!((1.0..2.0).contains(&y), "{x:e}: 2^{k}");
            assert_eq!(times_power_of_two(y, k), x, "{x:e}");
        }
    }
}
