//! Batched solutions in float32 (`spd_solve_as::<f32>`, `least_squares_as::<f32>`): x rounded
//! once from the f64 refinement as it comes back, so each value is the f64 path's rounded, a
//! failed problem's NaN, and a solved problem whose x leaves float32's normal range INFO −1,
//! whole batches and batches read back in chunks alike.

use crate::common;
use crate::common::batched::{scaled_spd_stack, signed};
use crate::common::widen;

use symraster::batched::device::Poison;
use symraster::batched::{self, BatchOptions, BatchSolution};
use symraster::{Batch, Gpu};

/// [`scaled_spd_stack`]'s problems with problem 4 (where there is one) not positive definite
/// (its first pivot negative).
fn spd_stack(n: usize, count: usize) -> Vec<f32> {
    let mut c = scaled_spd_stack(11, n, count);
    if count > 4 {
        c[4 * n * n] = -c[4 * n * n];
    }
    c
}

/// `single` is `double` rounded once to f32, value by value (NaN for NaN), with the same INFO.
fn assert_rounded(single: &BatchSolution<f32>, double: &BatchSolution, what: &str) {
    assert_eq!(single.info, double.info, "{what}: INFO");
    assert_eq!(single.x.shape(), double.x.shape(), "{what}: shape");
    for (i, (&s, &d)) in single
        .x
        .as_slice()
        .iter()
        .zip(double.x.as_slice())
        .enumerate()
    {
        let same = s.to_bits() == (d as f32).to_bits() || (s.is_nan() && d.is_nan());
        assert!(same, "{what}: value {i}: {s:e} against {d:e}");
    }
}

/// The same INFO and the same bits of x (NaN included).
fn assert_same(a: &BatchSolution<f32>, b: &BatchSolution<f32>, what: &str) {
    assert_eq!(a.info, b.info, "{what}: INFO");
    let bits = |s: &BatchSolution<f32>| -> Vec<u32> {
        s.x.as_slice().iter().map(|v| v.to_bits()).collect()
    };
    assert_eq!(bits(a), bits(b), "{what}: x");
}

#[test]
fn float32_x_is_the_float64_x_rounded_once() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let options = BatchOptions::default();
    for n in [1, 3, 8, 17] {
        let count = 13;
        let c = Batch::new(count, n, n, spd_stack(n, count)).unwrap();
        let b = Batch::vectors(count, n, signed(12, count * n)).unwrap();
        let double = batched::spd_solve(&kernels, &c, &b, &options, Poison::Nan).unwrap();
        assert!(double.info[4] > 0, "n {n}: problem 4 fails");
        let single: BatchSolution<f32> =
            batched::spd_solve_as(&kernels, &c, &b, &options, Poison::Nan).unwrap();
        assert_rounded(&single, &double, &format!("SPD solve, n {n}"));
        // Chunks of 4 problems, each read back on its own: the same values.
        let chunked: BatchSolution<f32> =
            batched::spd_solve_chunked(&kernels, &c, &b, &options, Poison::Nan, Some(4)).unwrap();
        assert_same(&chunked, &single, &format!("SPD solve in chunks, n {n}"));
        let chunked: BatchSolution =
            batched::spd_solve_chunked(&kernels, &c, &b, &options, Poison::Nan, Some(4)).unwrap();
        assert_rounded(
            &single,
            &chunked,
            &format!("f64 SPD solve in chunks, n {n}"),
        );
        // f64 inputs rounded on the host: x in either precision as from the f32 inputs.
        let (c64, b64) = (
            Batch::new(count, n, n, widen(c.as_slice())).unwrap(),
            Batch::vectors(count, n, widen(b.as_slice())).unwrap(),
        );
        let single64: BatchSolution<f32> =
            batched::spd_solve_as(&kernels, &c64, &b64, &options, Poison::Nan).unwrap();
        assert_same(&single64, &single, &format!("SPD solve from f64, n {n}"));
        // Least squares, k = 2n observations.
        let k = 2 * n;
        let a = Batch::new(count, n, k, signed(13, count * n * k)).unwrap();
        let d = Batch::vectors(count, k, signed(14, count * k)).unwrap();
        let d = Batch::vectors(
            count,
            k,
            d.as_slice().iter().map(|v| v.abs() + 0.5).collect(),
        )
        .unwrap();
        let y = Batch::vectors(count, k, signed(15, count * k)).unwrap();
        let double = batched::least_squares(&kernels, &a, &d, &y, &options, Poison::Nan).unwrap();
        let single: BatchSolution<f32> =
            batched::least_squares_as(&kernels, &a, &d, &y, &options, Poison::Nan).unwrap();
        assert_rounded(&single, &double, &format!("least squares, n {n}"));
    }
}

/// A solved problem whose x lies beyond float32's range (3.3e59) or below its normal range
/// (3.3e-61) gets INFO −1 and NaN in f32, beside an ordinary problem and a zero x; in f64
/// all are solved.
#[test]
fn float32_x_outside_its_range_is_info_minus_one() {
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let c = Batch::new(
        4,
        2,
        2,
        vec![
            2e30f32, 0.0, 1e30, 2e30, // x ≈ 3.3e-61
            2e-30, 0.0, 1e-30, 2e-30, // x ≈ 3.3e59
            4.0, 0.0, 1.0, 3.0, // ordinary
            4.0, 0.0, 1.0, 3.0, // b = 0
        ],
    )
    .unwrap();
    let b = Batch::vectors(4, 2, vec![1e-30f32, 1e-30, 1e30, 1e30, 1.0, 2.0, 0.0, 0.0]).unwrap();
    let batched = gpu.batched();
    let double = batched.spd_solve(&c, &b, BatchOptions::default()).unwrap();
    assert_eq!(double.info, vec![0, 0, 0, 0]);
    let single: BatchSolution<f32> = batched
        .spd_solve_as(&c, &b, BatchOptions::default())
        .unwrap();
    assert_eq!(single.info, vec![-1, -1, 0, 0]);
    assert!(
        single
            .x
            .problem(0)
            .iter()
            .chain(single.x.problem(1))
            .all(|v| v.is_nan())
    );
    for (&s, &d) in single.x.problem(2).iter().zip(double.x.problem(2)) {
        assert_eq!(s.to_bits(), (d as f32).to_bits());
    }
    assert_eq!(single.x.problem(3), &[0.0, 0.0]);
    assert_eq!(single.failure(0), Some(batched::Failure::Overflow));
}
