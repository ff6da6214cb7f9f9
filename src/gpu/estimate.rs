//! The ‖C⁻¹‖₁ estimate (Hager and Higham, as LAPACK's dlacn2) through a factor's solves,
//! carried along x⁰'s and the refinement's solves, and the condition limit past which an f32
//! factor's estimate says little about C: shared by the least-squares and SPD solves.

use crate::error::Result;
use crate::least_squares::{NormEstimate, independent_vectors};
use crate::matrix::Element;
use std::cell::RefCell;

/// Above this, the condition estimate through the f32 factor says little about C itself
/// (κ·u₃₂ ≥ 1: the factor may belong to a singular neighbour of C): with the fallback on, the
/// solve checks C with an f64 factor on the CPU (O(m³)) and reports that factor's estimate.
pub(super) const SINGLE_CONDITION_LIMIT: f64 = 2.0 / f32::EPSILON as f64;

/// The largest of `sums` (C's column sums: ‖C‖₁) in f64, where every one is finite.
pub(super) fn largest<T: Element>(sums: &[T]) -> Option<f64> {
    sums.iter().try_fold(0.0f64, |max, &s| {
        let s: f64 = s.into();
        s.is_finite().then(|| max.max(s))
    })
}

/// `v` in f64 (widened exactly from f32).
pub(super) fn double_vec<T: Element>(v: &[T]) -> Vec<f64> {
    v.iter().map(|&x| x.into()).collect()
}

/// The ‖C'⁻¹‖₁ estimate's right sides in the solves' precision (f32: its vectors rounded once).
fn rounded<T: Element>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_double(x)).collect()
}

/// The ‖C'⁻¹‖₁ estimate's first two solves, where x⁰'s solve made them.
pub(super) type FirstSolves<T = f32> = Option<Vec<Vec<T>>>;

/// x⁰ = `correct(solve)`, its one solve (the factor's `solve_each`) carrying the ‖C'⁻¹‖₁
/// estimate's first two right sides, which depend on nothing ([`independent_vectors`]): x⁰,
/// and those two solutions for [`inverse_norm_through`] (`None` where the three failed
/// together: x⁰'s side is solved alone, and an error of the estimate's is the estimate's).
pub(super) fn x0_with_first_solves<T: Element>(
    m: usize,
    correct: impl FnOnce(&mut dyn FnMut(&[T]) -> Result<Vec<T>>) -> Result<Vec<f64>>,
    solve_each: impl Fn(&[&[T]]) -> Result<Vec<Vec<T>>>,
) -> Result<(Vec<f64>, FirstSolves<T>)> {
    let [start, alternative] = independent_vectors(m).map(|v| rounded::<T>(&v));
    let mut first = None;
    let x0 = correct(&mut |b| match solve_each(&[b, &start, &alternative]) {
        Ok(mut z) => {
            first = Some(z.split_off(1));
            Ok(z.remove(0))
        }
        Err(_) => Ok(solve_each(&[b])?.remove(0)),
    })?;
    Ok((x0, first))
}

/// The ‖C'⁻¹‖₁ estimate through a factor's `solve_each` (in f32 a digit or two is enough),
/// started from its first two solves (`first`, from [`x0_with_first_solves`], or made here),
/// and carried along the refinement's corrections ([`solve_carrying`]) before it is finished
/// alone ([`finish_estimate`]); a failed solve is its error, never a NaN estimate.
pub(super) fn start_estimate<T: Element>(
    m: usize,
    first: FirstSolves<T>,
    solve_each: impl Fn(&[&[T]]) -> Result<Vec<Vec<T>>>,
) -> Result<RefCell<NormEstimate>> {
    let z = match first {
        Some(first) => first,
        None => {
            let [start, alternative] = independent_vectors(m).map(|v| rounded::<T>(&v));
            solve_each(&[&start, &alternative])?
        }
    };
    let [y, alt] = [&z[0], &z[1]];
    Ok(RefCell::new(NormEstimate::new(
        double_vec(y),
        double_vec(alt),
    )))
}

/// C'⁻¹·`v` through `solve_each`, the estimate's pending vector solved beside it in the same
/// call (one launch pair and one read for both, each side's bits its own).
pub(super) fn solve_carrying<T: Element>(
    estimate: &RefCell<NormEstimate>,
    v: &[T],
    solve_each: impl Fn(&[&[T]]) -> Result<Vec<Vec<T>>>,
) -> Result<Vec<T>> {
    let mut estimate = estimate.borrow_mut();
    let pending = estimate.pending().map(rounded::<T>);
    let mut z = match &pending {
        Some(p) => solve_each(&[v, p])?,
        None => solve_each(&[v])?,
    };
    if pending.is_some() {
        estimate.give(double_vec(&z.pop().expect("two solutions")));
    }
    Ok(z.remove(0))
}

/// The estimate's value, its solves still pending made one after another.
pub(super) fn finish_estimate<T: Element>(
    estimate: RefCell<NormEstimate>,
    solve_each: impl Fn(&[&[T]]) -> Result<Vec<Vec<T>>>,
) -> Result<f64> {
    let mut estimate = estimate.into_inner();
    while let Some(v) = estimate.pending() {
        let z = solve_each(&[&rounded::<T>(v)])?.remove(0);
        estimate.give(double_vec(&z));
    }
    Ok(estimate.value().expect("no solve pending"))
}
