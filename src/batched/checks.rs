//! The host's checks of a batch input: each problem's values finite (what the operation reads,
//! and with [`Read::Lower`]'s `check_upper` the values above each diagonal too), its largest
//! magnitude and the power of two it is divided by, and the error naming the first bad value.
//! The upload's copy makes the same checks as it goes ([`super::prepare::Scan`]); these are
//! their host form.

use super::view::BatchRef;
use crate::error::Result;
use crate::matrix::single_precision_error;
use crate::scaling::largest_exponent;
use rayon::prelude::*;

/// What an operation reads of each problem of an input, and what it checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// Every value, read and checked.
    All,
    /// The lower triangle of each square problem, read and checked; with `check_upper` the
    /// values above the diagonal (never read) are checked finite too, as scipy's
    /// `check_finite` checks a whole array.
    Lower { check_upper: bool },
}

impl Read {
    /// Whether only the lower triangles are read.
    pub fn lower_only(self) -> bool {
        matches!(self, Read::Lower { .. })
    }

    /// Whether only the lower triangles are checked.
    pub fn checks_lower_only(self) -> bool {
        self == Read::Lower { check_upper: false }
    }
}

/// Problem p's values in row-major order, (i, j, value), only the lower triangle where
/// `lower_only`.
pub(super) fn entries<'v, T: Copy>(
    view: &'v BatchRef<'_, T>,
    p: usize,
    lower_only: bool,
) -> impl Iterator<Item = (usize, usize, T)> + 'v {
    let (rows, cols) = (view.rows(), view.cols());
    (0..rows).flat_map(move |i| {
        let width = if lower_only { cols.min(i + 1) } else { cols };
        let row = view.row_slice(p, i);
        (0..width).map(move |j| match row {
            Some(row) => (i, j, row[j]),
            None => (i, j, view.get(p, i, j)),
        })
    })
}

/// Problem p's largest magnitude (the lower triangle only where `lower_only`), or its first
/// non-finite value in row-major order, (p, i, j, value): the problem's values read in memory
/// order where they fill their span, else row by row.
pub(super) fn largest_finite(
    view: &BatchRef<'_, f32>,
    p: usize,
    lower_only: bool,
) -> std::result::Result<f32, (usize, usize, usize, f64)> {
    let first_bad = || {
        entries(view, p, lower_only)
            .find(|(.., v)| !v.is_finite())
            .map(|(i, j, v)| (p, i, j, f64::from(v)))
            .expect("a non-finite value")
    };
    if let Some(values) = view.problem_span(p).filter(|_| !lower_only) {
        return match scan(values, 0.0) {
            Some(m) => Ok(m),
            None => Err(first_bad()),
        };
    }
    // A problem stored row-major: its rows one after another from its span.
    let (rows, cols) = (view.rows(), view.cols());
    let width = |i: usize| if lower_only { cols.min(i + 1) } else { cols };
    let mut m = 0.0f32;
    if let Some(values) = view
        .problem_span(p)
        .filter(|_| view.row_slice(p, 0).is_some())
    {
        for (i, row) in values.chunks_exact(cols).enumerate() {
            m = scan(&row[..width(i)], m).ok_or_else(first_bad)?;
        }
        return Ok(m);
    }
    for i in 0..rows {
        match view.row_slice(p, i) {
            Some(row) => m = scan(&row[..width(i)], m).ok_or_else(first_bad)?,
            None => {
                for j in 0..width(i) {
                    let v = view.get(p, i, j);
                    if !v.is_finite() {
                        return Err(first_bad());
                    }
                    m = m.max(v.abs());
                }
            }
        }
    }
    Ok(m)
}

/// The largest of `m` and the magnitudes of `values`, in one pass with no branch per value;
/// `None` where a value is not finite.
fn scan(values: &[f32], m: f32) -> Option<f32> {
    let bits = largest_bits(values);
    (bits <= f32::MAX.to_bits()).then(|| m.max(f32::from_bits(bits)))
}

/// |v|'s bits: ordered as the magnitudes are, NaN's and ±inf's above every finite value's.
pub(super) fn magnitude_bits(v: f32) -> u32 {
    v.to_bits() & 0x7fff_ffff
}

/// The largest [`magnitude_bits`] of `values` (0 for none), in one pass with no branch.
pub(super) fn largest_bits(values: &[f32]) -> u32 {
    values.iter().fold(0, |m, &v| m.max(magnitude_bits(v)))
}

/// Each problem's exponent (0 unless `scaled`) of lent f32 values, read once on all cores: its
/// largest magnitude, and the first problem's first non-finite value as `input`'s error (a
/// finite f32 divided by its problem's largest power of two stays within float32's range).
pub(super) fn scanned(
    input: &str,
    single: &BatchRef<'_, f32>,
    read: Read,
    scaled: bool,
) -> Result<Vec<i32>> {
    let (count, _, cols) = single.shape();
    let problems: Vec<std::result::Result<i32, (usize, usize, usize, f64)>> = (0..count)
        .into_par_iter()
        .with_min_len(64)
        .map(|p| {
            if !read.checks_lower_only() && read.lower_only() {
                // The whole problem checked, its lower triangle's magnitude scaled.
                largest_finite(single, p, false)?;
            }
            let largest = largest_finite(single, p, read.lower_only())?;
            Ok(exponent_of_largest(largest, scaled))
        })
        .collect();
    let mut exponents = crate::memory::with_capacity(count, || {
        format!("the exponents of {input}'s {count} problems")
    })?;
    for outcome in problems {
        match outcome {
            Ok(e) => exponents.push(e),
            Err(bad) => return Err(report(input, cols, bad).expect("a non-finite value")),
        }
    }
    Ok(exponents)
}

/// The exponent a problem whose largest magnitude is `largest` is divided by (0 unless
/// `scaled`).
pub(super) fn exponent_of_largest(largest: f32, scaled: bool) -> i32 {
    if scaled {
        largest_exponent(std::iter::once(f64::from(largest)))
    } else {
        0
    }
}

/// The error for `value` at (p, i, j) of `input` (vectors named by index), if it is one.
pub(super) fn report(
    input: &str,
    cols: usize,
    (p, i, j, value): (usize, usize, usize, f64),
) -> Option<crate::Error> {
    let position = || {
        if cols == 1 {
            format!("problem {p}, index {i} (0-based)")
        } else {
            format!("problem {p}, row {i}, column {j} (0-based)")
        }
    };
    single_precision_error(input, &position, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Problem p's lower triangle (or all of it) by the plain definition.
    fn expected(
        view: &BatchRef<'_, f32>,
        p: usize,
        lower_only: bool,
    ) -> std::result::Result<f32, (usize, usize, usize, f64)> {
        let mut m = 0.0f32;
        for (i, j, v) in entries(view, p, lower_only) {
            if !v.is_finite() {
                return Err((p, i, j, f64::from(v)));
            }
            m = m.max(v.abs());
        }
        Ok(m)
    }

    /// The largest magnitude and the first non-finite value of each problem, row-major (with a
    /// row stride past the order), column-first and strided, either triangle's garbage above
    /// the diagonal ignored where only the lower one is read.
    #[test]
    fn each_problem_is_scanned_as_defined_in_every_layout() {
        for n in [1, 2, 3, 8, 9] {
            let count = 5;
            for (name, strides, len) in [
                ("row-major", [n * n, n, 1], count * n * n),
                (
                    "row stride past the order",
                    [n * (n + 2), n + 2, 1],
                    count * n * (n + 2),
                ),
                ("column-first", [n * n, 1, n], count * n * n),
                ("strided", [2 * n * n, 2 * n, 2], 2 * count * n * n),
            ] {
                let mut data: Vec<f32> = (0..len)
                    .map(|k| ((k * 37 % 23) as f32 - 11.0) * 0.5)
                    .collect();
                let at =
                    |p: usize, i: usize, j: usize| p * strides[0] + i * strides[1] + j * strides[2];
                // Problem 1: NaN above the diagonal; problem 2: inf on it; problem 3: the
                // largest magnitude negative, last in its lower triangle.
                if n > 1 {
                    data[at(1, 0, n - 1)] = f32::NAN;
                }
                data[at(2, n - 1, n - 1)] = f32::INFINITY;
                data[at(3, n - 1, n - 1)] = -1e30;
                let view = BatchRef::from_strides(count, n, n, strides, &data).unwrap();
                for lower_only in [true, false] {
                    for p in 0..count {
                        assert_eq!(
                            format!("{:?}", largest_finite(&view, p, lower_only)),
                            format!("{:?}", expected(&view, p, lower_only)),
                            "n {n} {name} lower_only {lower_only} problem {p}"
                        );
                    }
                }
            }
        }
    }
}
