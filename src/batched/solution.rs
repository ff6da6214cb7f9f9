//! The batched solves' x on its way back: each chunk's f64 values read from the staging
//! mappings straight into the result, scaled back by their problem's power of two
//! ([`super::scaling`]) and, for f32, rounded once.

use super::batch::Batch;
use super::device::{Inputs, Poison, run_with};
use super::kernels::BatchedKernels;
use super::plan::Plan;
use super::scaling::Staged;
use crate::error::Result;
use crate::gl::Buffer;
use crate::layout::by_rows::SharedRows;
use crate::matrix::Element;
use crate::scaling::times_power_of_two;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs a solve's `plan` and reads its x back in `X`: problem p's scaled by 2^(e_num − e_den)
/// for `(num, den)`'s exponents of p (x of 2^-e_num·b over 2^-e_den·C is 2^(e_den − e_num)
/// times the problem's), as each chunk comes back ([`unscale_into`]); with each problem's INFO.
pub(crate) fn run_solved<X: Element>(
    kernels: &BatchedKernels,
    plan: &Plan,
    inputs: &Inputs<'_>,
    count: usize,
    poison: Poison,
    (num, den): (&Staged<'_>, &Staged<'_>),
) -> Result<(Batch<X>, Vec<i32>)> {
    let n = plan.n;
    let mut x = crate::memory::with_capacity(count * n, || {
        format!("x of the {count} problems of the {}", plan.job.name())
    })?;
    let room = &mut x.spare_capacity_mut()[..count * n];
    // The exponents of an input the upload checks are known once its chunk is up.
    let mut read = |range: Range<usize>, values: &Buffer<f64>, info: &mut [i32]| {
        let (e_num, e_den) = (num.exponents(), den.exponents());
        let shift: Vec<i32> = range.clone().map(|p| e_num[p] - e_den[p]).collect();
        let room = &mut room[range.start * n..range.end * n];
        unscale_into(values, n, &shift, info, room)
    };
    let out = run_with(kernels, plan, inputs, count, poison, Some(&mut read))?;
    // SAFETY: every chunk's read wrote its problems' n values each.
    unsafe { x.set_len(count * n) };
    Ok((Batch::vectors(count, n, x)?, out.info))
}

/// Problem p's solution in `X` (n values of `x`, problems `range` of the batch as the kernels
/// wrote them in f64) times 2^`shift`[p], read from the staging mappings on all cores straight
/// into `out` (its n values per problem of `range`, every one written once). A solved problem
/// whose x then leaves `X`'s range (f64: not finite; f32: beyond its largest value, or nonzero
/// below its smallest normal one, where it would lose its digits) gets INFO −1 in `info` and
/// NaN, as a failed one has.
pub(crate) fn unscale_into<X: Element>(
    x: &Buffer<f64>,
    n: usize,
    shift: &[i32],
    info: &mut [i32],
    out: &mut [MaybeUninit<X>],
) -> Result<()> {
    let count = info.len();
    let len = count * n;
    assert!(
        shift.len() == count && out.len() == len && x.len() >= len,
        "unscale_into: {count} problems of {n}"
    );
    if len == 0 {
        return Ok(());
    }
    let outside: Vec<AtomicBool> = (0..count).map(|_| AtomicBool::new(false)).collect();
    let to = SharedRows::new(out);
    x.read_pieces(&|first, values| {
        let end = (first + values.len()).min(len);
        for (at, &v) in (first..end).zip(values) {
            let p = at / n;
            let value = times_power_of_two(v, shift[p]);
            let narrowed = in_range::<X>(value);
            if !narrowed && !outside[p].load(Ordering::Relaxed) {
                outside[p].store(true, Ordering::Relaxed);
            }
            // SAFETY: `at` < len = out.len(), each written once (or again with the same
            // value where a staged read restarts), `out` outliving the read.
            unsafe { (*to.at(at)).write(X::from_double(value)) };
        }
    })?;
    for (p, (info, outside)) in info.iter_mut().zip(&outside).enumerate() {
        if outside.load(Ordering::Relaxed) && *info == 0 {
            *info = -1;
            out[p * n..(p + 1) * n].fill(MaybeUninit::new(X::from_double(f64::NAN)));
        }
    }
    Ok(())
}

/// Whether `v` is a value of `X` as a batched solution may be (see [`unscale_into`]).
fn in_range<X: Element>(v: f64) -> bool {
    if X::DOUBLE {
        return v.is_finite();
    }
    let magnitude = v.abs();
    magnitude <= f64::from(f32::MAX) && (magnitude >= f64::from(f32::MIN_POSITIVE) || v == 0.0)
}
