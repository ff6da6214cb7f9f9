//! A caller's f32 input uploaded as it lies and brought into the kernels' layout on the GPU
//! (`glsl/batched/prepare.comp`): gathered from its strides, each problem divided by its power
//! of two. The host neither copies nor rounds it (C goes up as its triangles instead:
//! [`super::packed`]); where it goes up as it lies, the upload's copy is also its check
//! ([`Scan`]), so the caller's values are read once.

use super::kernels::BatchedKernels;
use super::checks::{Read, exponent_of_largest, largest_bits, largest_finite, report, scanned};
use super::view::{BatchRef, compact, extent};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, Uniform};
use crate::phases::Phases;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

/// Invocations per work group of the preparation (its `local_size_x`).
const GROUP: usize = 256;

/// How one input's values become what the kernels read.
#[derive(Clone, Copy, Debug)]
pub struct Prepare<'a> {
    /// Elements between problems, rows and columns of the values given (their first problem
    /// at 0).
    pub strides: [usize; 3],
    /// Problem p divided by 2^`exponents[p]` (exactly, as the host's product rounded once
    /// would be); `None`: not scaled.
    pub exponents: Option<&'a [i32]>,
    /// Values checked, and their exponents found, by the upload's copy (then `exponents` is
    /// `None`).
    pub scan: Option<&'a Scan<'a>>,
}

/// A lent f32 input checked as the upload copies it: each problem's largest magnitude noted
/// from the values copied (one read of the caller's values, not a check and then a copy),
/// and from it, once a chunk is up, the problem's exponent or its first non-finite value.
#[derive(Debug)]
pub struct Scan<'a> {
    input: String,
    view: BatchRef<'a, f32>,
    read: Read,
    scaled: bool,
    /// Per problem, the largest |value|'s bits so far of the values read (NaN's and ±inf's
    /// above every finite value's).
    largest: Vec<AtomicU32>,
    /// Per problem, the same of the values above the diagonal where those are checked but not
    /// read (else empty).
    above: Vec<AtomicU32>,
}

impl<'a> Scan<'a> {
    /// `view` (named `input`) to be checked by its upload as `read` says (the values above
    /// the diagonal, where checked and not read, noted apart), each problem's exponent found
    /// where `scaled`.
    pub(crate) fn new(
        input: &str,
        view: BatchRef<'a, f32>,
        read: Read,
        scaled: bool,
    ) -> Result<Self> {
        let count = view.count();
        let zeros = |len: usize| -> Result<Vec<AtomicU32>> {
            let mut v = crate::memory::with_capacity(len, || {
                format!("the largest magnitudes of {input}'s {count} problems")
            })?;
            v.extend((0..len).map(|_| AtomicU32::new(0)));
            Ok(v)
        };
        let above = match read {
            Read::Lower { check_upper: true } => count,
            _ => 0,
        };
        Ok(Self {
            input: input.into(),
            view,
            read,
            scaled,
            largest: zeros(count)?,
            above: zeros(above)?,
        })
    }

    /// `view` (named `input`), every value read and checked by its upload, each problem's
    /// exponent found where `scaled`.
    pub fn whole(input: &str, view: BatchRef<'a, f32>, scaled: bool) -> Result<Self> {
        Self::new(input, view, Read::All, scaled)
    }

    /// Whether the values above each diagonal are checked (but not read).
    pub(crate) fn checks_above(&self) -> bool {
        !self.above.is_empty()
    }

    /// Notes `bits` ([`largest_bits`] of some of its values above the diagonal) for problem
    /// `p`.
    pub(crate) fn note_above(&self, p: usize, bits: u32) {
        raise(&self.above[p], bits);
    }

    /// The strides of the values.
    pub fn strides(&self) -> [usize; 3] {
        self.view.strides()
    }

    /// Notes `bits` ([`largest_bits`] of some of its values) for problem `p`.
    pub(crate) fn note(&self, p: usize, bits: u32) {
        raise(&self.largest[p], bits);
    }

    /// Whether only the lower triangles are read (the upload of C's packed triangles).
    pub(crate) fn lower_only(&self) -> bool {
        self.read.lower_only()
    }

    /// Copies `src` into `out` (the values from index `first` on of problems `size` values
    /// each, problem 0 being problem `p0`), noting each problem's part.
    fn copy_noting(&self, p0: usize, size: usize, first: usize, src: &[f32], out: &mut [f32]) {
        out.copy_from_slice(src);
        let mut at = 0;
        while at < src.len() {
            let index = first + at;
            let take = (size - index % size).min(src.len() - at);
            self.note(p0 + index / size, largest_bits(&src[at..at + take]));
            at += take;
        }
    }

    /// Problems `range` once their values are up: the first one's first non-finite value as
    /// the input's error, else their exponents (all 0 unless scaled).
    pub(crate) fn settle(&self, range: &Range<usize>) -> Result<Vec<i32>> {
        let finite = f32::MAX.to_bits();
        let bad = |p: usize| {
            self.largest[p].load(Ordering::Relaxed) > finite
                || self
                    .above
                    .get(p)
                    .is_some_and(|a| a.load(Ordering::Relaxed) > finite)
        };
        if let Some(p) = range.clone().find(|&p| bad(p)) {
            let bad = largest_finite(&self.view, p, self.read.checks_lower_only())
                .expect_err("a problem with a non-finite value");
            return Err(report(&self.input, self.view.cols(), bad).expect("a non-finite value"));
        }
        let mut exponents = crate::memory::with_capacity(range.len(), || {
            format!("the exponents of {}'s {} problems", self.input, range.len())
        })?;
        exponents.extend(range.clone().map(|p| {
            let largest = f32::from_bits(self.largest[p].load(Ordering::Relaxed));
            exponent_of_largest(largest, self.scaled)
        }));
        Ok(exponents)
    }

    /// Every problem's exponent, after the upload settled them all.
    pub fn exponents(&self) -> Vec<i32> {
        self.largest
            .iter()
            .map(|l| exponent_of_largest(f32::from_bits(l.load(Ordering::Relaxed)), self.scaled))
            .collect()
    }

    /// The whole input's checks on the host now (for an error in argument order where a
    /// later input failed before this one's upload).
    pub(crate) fn check(&self) -> Result<()> {
        scanned(&self.input, &self.view, self.read, false).map(|_| ())
    }
}

/// `slot` raised to `bits` where they are larger (one load where they are not).
fn raise(slot: &AtomicU32, bits: u32) {
    if bits > slot.load(Ordering::Relaxed) {
        slot.fetch_max(bits, Ordering::Relaxed);
    }
}

/// Problems `range` of `values` (rows x cols each at `prepare`'s strides) as a new storage
/// buffer in the kernels' layout (row-major, the batch outer).
pub fn prepared(
    kernels: &BatchedKernels,
    prepare: &Prepare<'_>,
    values: &[f32],
    range: &Range<usize>,
    (rows, cols): (usize, usize),
    launch: usize,
) -> Result<Buffer<f32>> {
    let mut phases = Phases::named("batched input preparation", std::time::Instant::now());
    let ctx = kernels.context();
    let count = range.len();
    let size = rows * cols;
    let total = count * size;
    let strides = prepare.strides;
    let gather = !compact(strides, count, rows, cols);
    let start = range.start * strides[0];
    let span = extent(count, rows, cols, strides).expect("a batch within its slice");
    let storage = |data: &[f32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, data);
    let (dst, src) = match prepare.scan {
        Some(scan) if total > 0 => {
            // Each problem a block of `size` values (row- or column-major): the span holds
            // the problems' values and nothing else, every one of them read.
            assert_eq!(span, total, "an input its upload checks fills its span");
            assert!(!scan.lower_only(), "a triangle read goes up packed (upload_lower)");
            let values = &values[start..start + total];
            let up = Buffer::filled(ctx, BufferTarget::Storage, BufferUsage::Static, total, |first, out| {
                scan.copy_noting(range.start, size, first, &values[first..first + out.len()], out)
            })?;
            match gather {
                true => {
                    let dst = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, total)?;
                    (dst, Some(up))
                }
                false => (up, None),
            }
        }
        _ if gather => {
            let src = storage(&values[start..start + span])?;
            let dst = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, total.max(1))?;
            (dst, Some(src))
        }
        _ => (storage(&values[start..start + total])?, None),
    };
    let found;
    let exponents = match prepare.scan {
        Some(scan) => {
            found = scan.settle(range)?;
            found.iter().any(|&e| e != 0).then_some(&found[..])
        }
        None => prepare.exponents.map(|e| &e[range.clone()]),
    };
    let exponents = exponents
        .map(|e| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, e))
        .transpose()?;
    phases.mark("upload");
    if !gather && exponents.is_none() {
        // Already in the kernels' layout and not to be scaled: nothing to do on the GPU.
        return Ok(dst);
    }
    pass(kernels, &dst, src.as_ref().map(|s| (s, strides)), exponents.as_ref(), total, (rows, cols), launch)?;
    phases.mark_finished(ctx, "pass");
    Ok(dst)
}

/// `dst` (problems of `size` values, the batch outer) with each problem divided by its power
/// of two in place on the GPU, where the upload's [`Scan`] found any but 0 (`prepare`'s scan
/// settled for `range` here; without one, `dst` as it is).
pub(crate) fn divided(
    kernels: &BatchedKernels,
    prepare: Option<&Prepare<'_>>,
    dst: Buffer<f32>,
    range: &Range<usize>,
    size: usize,
    launch: usize,
) -> Result<Buffer<f32>> {
    let Some(scan) = prepare.and_then(|p| p.scan) else {
        return Ok(dst);
    };
    let exponents = scan.settle(range)?;
    if exponents.iter().all(|&e| e == 0) {
        return Ok(dst);
    }
    let ctx = kernels.context();
    let exponents = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &exponents)?;
    pass(kernels, &dst, None, Some(&exponents), range.len() * size, (1, size), launch)?;
    Ok(dst)
}

/// The preparation's launches: `total` values of problems rows x cols into `dst`, gathered from
/// `src` at its strides (else in place), divided by 2^exponents[p] where there are exponents.
fn pass(
    kernels: &BatchedKernels,
    dst: &Buffer<f32>,
    src: Option<(&Buffer<f32>, [usize; 3])>,
    exponents: Option<&Buffer<i32>>,
    total: usize,
    (rows, cols): (usize, usize),
    launch: usize,
) -> Result<()> {
    let program = kernels.prepare_program(src.is_some(), exponents.is_some())?;
    dst.bind_base(0);
    if let Some((src, strides)) = src {
        src.bind_base(1);
        program.set("problem_stride", Uniform::U32(strides[0] as u32))?;
        program.set("row_stride", Uniform::U32(strides[1] as u32))?;
        program.set("col_stride", Uniform::U32(strides[2] as u32))?;
    }
    if let Some(e) = &exponents {
        e.bind_base(2);
    }
    program.set("total", Uniform::U32(total as u32))?;
    program.set("rows", Uniform::U32(rows as u32))?;
    program.set("cols", Uniform::U32(cols as u32))?;
    let mut first = 0;
    while first < total {
        let groups = (total - first).div_ceil(GROUP).min(launch.max(1));
        program.set("first", Uniform::U32(first as u32))?;
        program.dispatch([groups as u32, 1, 1])?;
        first += groups * GROUP;
    }
    Ok(())
}
