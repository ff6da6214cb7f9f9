//! Per-problem scaling by exact powers of two, as the single solves scale b: each problem's
//! inputs brought near 1 before they are rounded to f32, and its solution scaled back on its
//! way out ([`super::solution`]), so a problem whose C, b or x lies outside float32's range
//! (but whose scaled problem lies inside) is solved instead of coming back as 0 or ±inf with
//! INFO 0.
//!
//! f32 inputs go to the GPU as they lie, which divides them there ([`super::prepare`]): the
//! upload's copy checks them and finds each problem's exponent as it reads them ([`Scan`]),
//! except a strided input the GPU gathers, read once here first; f64 inputs are rounded here,
//! problem by problem over all cores, already divided.

use super::checks::Read;
use super::checks::{entries, report, scanned};
use super::prepare::{Prepare, Scan};
use super::view::BatchRef;
use crate::error::{Error, Result};
use crate::matrix::Element;
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
    /// The strides of lent values read before the upload, where the GPU gathers or divides
    /// them (a scanned input's are its scan's).
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
        if read.lower_only() || single.is_dense() {
            return Ok(Staged {
                values: Cow::Borrowed(values),
                exponents: Vec::new(),
                strides: None,
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
