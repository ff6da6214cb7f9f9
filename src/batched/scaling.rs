//! Per-problem scaling by exact powers of two, as the single solves scale b: each problem's
//! inputs brought near 1 before they are rounded to f32, and its solution scaled back in f64,
//! so a problem whose C, b or x lies outside float32's range (but whose scaled problem lies
//! inside) is solved instead of coming back as 0 or ±inf with INFO 0.
//!
//! f32 inputs go to the GPU as they lie, which divides them there ([`super::prepare`]): the
//! upload's copy checks them and finds each problem's exponent as it reads them ([`Scan`]),
//! except a strided input the GPU gathers, read once here first; f64 inputs are rounded here,
//! problem by problem over all cores, already divided.

use super::prepare::{Prepare, Scan};
use super::view::{BatchRef, dense};
use crate::error::{Error, Result};
use crate::matrix::{Element, single_precision_error};
use crate::scaling::{largest_exponent, times_power_of_two};
use rayon::prelude::*;
use std::borrow::Cow;

/// One input on its way to the GPU.
pub(crate) struct Staged<'a> {
    /// The caller's f32 values as they lie, or f64 ones rounded (row-major, the batch outer,
    /// already divided by their powers of two).
    pub values: Cow<'a, [f32]>,
    /// Per problem, the exponent e its values are divided by 2^e with (all 0 unscaled; empty
    /// where the upload finds them: `scan`).
    exponents: Vec<i32>,
    /// The strides of lent values, where the GPU gathers or divides them.
    strides: Option<[usize; 3]>,
    /// Whether the GPU divides the lent values by their powers of two.
    divide: bool,
    /// Lent values whose checks and exponents the upload's copy makes.
    scan: Option<Scan<'a>>,
}

impl Staged<'_> {
    /// What the GPU does to the values before the kernels read them (`None`: nothing).
    pub fn prepare(&self) -> Option<Prepare<'_>> {
        if let Some(scan) = &self.scan {
            return Some(Prepare {
                strides: scan.strides(),
                exponents: None,
                scan: Some(scan),
            });
        }
        self.strides.map(|strides| Prepare {
            strides,
            exponents: self.divide.then_some(&self.exponents[..]),
            scan: None,
        })
    }

    /// Per problem, the exponent e its values were divided by 2^e with (all 0 unscaled): after
    /// the upload where it found them.
    pub fn exponents(&self) -> Cow<'_, [i32]> {
        match &self.scan {
            Some(scan) => Cow::Owned(scan.exponents()),
            None => Cow::Borrowed(&self.exponents),
        }
    }

    /// The input's checks now, on the host, where the upload was to make them (Ok where
    /// they were made here).
    fn check(&self) -> Result<()> {
        match &self.scan {
            Some(scan) => scan.check(),
            None => Ok(()),
        }
    }
}

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

/// The error of the first of `inputs` (in argument order) that holds a bad value, else `e`:
/// where a later input, or one chunk's upload, failed before an earlier input's checks ran.
pub(crate) fn first_error(inputs: &[&Staged<'_>], e: Error) -> Error {
    inputs
        .iter()
        .find_map(|input| input.check().err())
        .unwrap_or(e)
}

/// The f32 values of `view` where its element type is f32 (borrowed, no copy).
fn lent_single<'a, T: Element>(view: &BatchRef<'a, T>) -> Option<&'a [f32]> {
    if std::any::TypeId::of::<T>() != std::any::TypeId::of::<f32>() {
        return None;
    }
    match T::single_vec("", view.as_slice()) {
        Ok(Cow::Borrowed(values)) => Some(values),
        _ => None,
    }
}

/// Problem p's values in row-major order, (i, j, value), only the lower triangle where
/// `lower_only`.
fn entries<'v, T: Copy>(
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
/// `None` where a value is not finite (NaN and ±inf fail |v| ≤ f32::MAX).
fn scan(values: &[f32], m: f32) -> Option<f32> {
    let mut m = m;
    let mut finite = true;
    for &v in values {
        let a = v.abs();
        finite &= a <= f32::MAX;
        m = if a > m { a } else { m };
    }
    finite.then_some(m)
}

/// `view` for the GPU, naming `input`: each value checked finite and within float32's range
/// (after the division where `scaled`; the first bad problem reported, at its first bad
/// position), with [`Read::Lower`] only the lower triangles read (entries above the diagonal
/// zero where the GPU reads them, and checked finite only where asked). Where `scaled`,
/// problem p is divided by 2^e for e the exponent of its largest magnitude read
/// ([`largest_exponent`]). Lent f32 values are checked by the upload's copy ([`Scan`]): their
/// errors come from the run, and [`first_error`] keeps them in argument order.
pub(crate) fn stage<'a, T: Element>(
    input: &str,
    view: BatchRef<'a, T>,
    read: Read,
    scaled: bool,
) -> Result<Staged<'a>> {
    let (count, rows, cols) = view.shape();
    if let Some(values) = lent_single(&view) {
        let strides = view.strides();
        let single = BatchRef::from_strides(count, rows, cols, strides, values)?;
        // The upload reads exactly the values to check where it copies them as they lie
        // (each problem a block of its own, row- or column-major), or only C's lower
        // triangles.
        if read.lower_only() || dense(strides, count, rows, cols) {
            return Ok(Staged {
                values: Cow::Borrowed(values),
                exponents: Vec::new(),
                strides: Some(strides),
                divide: false,
                scan: Some(Scan::new(input, single, read, scaled)?),
            });
        }
        let exponents = scanned(input, &single, read, scaled)?;
        let divide = exponents.iter().any(|&e| e != 0);
        return Ok(Staged {
            values: Cow::Borrowed(values),
            exponents,
            strides: Some(strides),
            divide,
            scan: None,
        });
    }
    let (values, exponents) = rounded(input, view, read, scaled)?;
    Ok(Staged {
        values: Cow::Owned(values),
        exponents,
        strides: None,
        divide: false,
        scan: None,
    })
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

/// The host's rounding of `view` to f32 as [`stage`] checks it (row-major, the batch outer,
/// zeros above the diagonal with [`Read::Lower`]), and each problem's exponent (0 unless
/// `scaled`).
pub(crate) fn rounded<T: Element>(
    input: &str,
    view: BatchRef<'_, T>,
    read: Read,
    scaled: bool,
) -> Result<(Vec<f32>, Vec<i32>)> {
    let lower_only = read.lower_only();
    let (count, rows, cols) = view.shape();
    let size = rows * cols;
    let mut out =
        crate::memory::zeros::<f32>(count * size, || format!("{input} rounded to float32"))?;
    let mut exponents = crate::memory::filled(count, 0i32, || {
        format!("the exponents of {input}'s {count} problems")
    })?;
    if size > 0 {
        // Problem by problem over all cores; a problem with a bad value stops at its first
        // one, and the first such problem is reported.
        let bad = out
            .par_chunks_mut(size)
            .zip(exponents.par_iter_mut())
            .enumerate()
            .with_min_len(64)
            .filter_map(|(p, (out, exponent))| {
                let e = if scaled {
                    largest_exponent(entries(&view, p, lower_only).map(|(.., v)| v.into()))
                } else {
                    0
                };
                *exponent = e;
                // Row-major over what is checked: the values read are rounded, those above the
                // diagonal (checked where asked, never read) only checked finite.
                for (i, j, v) in entries(&view, p, read.checks_lower_only()) {
                    let value = times_power_of_two(v.into(), -e);
                    if lower_only && j > i {
                        if !value.is_finite() {
                            return Some((p, i, j, v.into()));
                        }
                        continue;
                    }
                    if value.is_nan() || value.abs() > f64::from(f32::MAX) {
                        return Some((p, i, j, value));
                    }
                    out[i * cols + j] = value as f32;
                }
                None
            })
            .min_by_key(|&(p, ..)| p);
        if let Some(e) = bad.and_then(|bad| report(input, cols, bad)) {
            return Err(e);
        }
    }
    Ok((out, exponents))
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

/// Multiplies problem p's solution (`n` values from `x`) by 2^shift[p] in f64; a problem whose
/// solution then leaves f64's range gets INFO −1 (where it had none) and NaN.
pub(crate) fn unscale(x: &mut [f64], n: usize, shift: &[i32], info: &mut [i32]) {
    if n == 0 {
        return;
    }
    x.par_chunks_mut(n)
        .zip(info.par_iter_mut())
        .zip(shift.par_iter())
        .with_min_len(1 << 13)
        .for_each(|((xp, info), &s)| {
            if s != 0 {
                for v in xp.iter_mut() {
                    *v = times_power_of_two(*v, s);
                }
            }
            if *info == 0 && xp.iter().any(|v| !v.is_finite()) {
                *info = -1;
                xp.fill(f64::NAN);
            }
        });
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
