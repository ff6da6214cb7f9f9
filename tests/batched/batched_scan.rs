//! f32 stacks checked by their upload (`batched::prepare::Scan`): the copy to the GPU finds
//! each problem's largest magnitude and its first non-finite value, so the caller's values are
//! read once. The results match the host-checked f64 path bit for bit, errors name the first
//! bad input in argument order at its first bad position, and a batch split over chunks
//! settles each chunk from its own upload.

use crate::common;
use crate::common::batched::{scaled_spd_stack, signed};
use crate::common::widen;

use symraster::batched::device::{Inputs, Poison, Prepare, run};
use symraster::batched::plan::{Job, Plan};
use symraster::batched::prepare::Scan;
use symraster::batched::{self, BatchOptions};
use symraster::{Batch, BatchRef};

/// A least-squares stack of `count` problems of n x k values (A, or X = Aᵀ) in [−1, 1), problem
/// p scaled by 2^e for each (p, e) of `scales`; weights d in [0.5, 1.5) and b in [−1, 1), k per
/// problem.
fn observations(
    seed: u64,
    count: usize,
    n: usize,
    k: usize,
    scales: &[(usize, i32)],
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut a = signed(seed, count * n * k);
    for &(p, e) in scales {
        let s = 2f32.powi(e);
        a[p * n * k..(p + 1) * n * k]
            .iter_mut()
            .for_each(|v| *v *= s);
    }
    let d = signed(seed + 1, count * k)
        .iter()
        .map(|v| v.abs() + 0.5)
        .collect();
    (a, d, signed(seed + 2, count * k))
}

#[test]
fn a_cholesky_checked_by_its_upload_matches_the_f64_path_bit_for_bit() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    for n in [1, 3, 8, 17] {
        let count = 9;
        let c = scaled_spd_stack(5, n, count);
        let lent = Batch::new(count, n, n, c.clone()).unwrap();
        let wide = Batch::new(count, n, n, widen(&c)).unwrap();
        let got =
            batched::cholesky(&kernels, &lent, &BatchOptions::default(), Poison::Nan).unwrap();
        let want =
            batched::cholesky(&kernels, &wide, &BatchOptions::default(), Poison::Nan).unwrap();
        assert_eq!(got.info, vec![0; count], "n {n}");
        assert_eq!(got.info, want.info, "n {n}");
        for (x, y) in got.l.as_slice().iter().zip(want.l.as_slice()) {
            assert_eq!(x.to_bits(), y.to_bits(), "n {n}");
        }
    }
}

#[test]
fn an_upload_that_checks_names_the_first_bad_input_in_argument_order() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let options = BatchOptions::default();
    let (count, n) = (5, 4);
    let message = |e: symraster::Error| e.to_string();
    // C (lower triangles, checked by the upload) bad at problem 3 and b bad at problem 0.
    let mut c = scaled_spd_stack(5, n, count);
    c[(3 * n + 2) * n + 1] = f32::NAN;
    let mut b = signed(7, count * n);
    b[1] = f32::INFINITY;
    let want = "input C holds a non-finite value (NaN) at problem 3, row 2, column 1 (0-based)";
    let cv = BatchRef::new(count, n, n, &c).unwrap();
    let bv = BatchRef::vectors(count, n, &b).unwrap();
    let e = batched::spd_solve(&kernels, &cv, &bv, &options, Poison::Nan).unwrap_err();
    assert_eq!(message(e), want);
    // b strided (checked on the host before the upload): C still named first.
    let mut gapped = vec![0.0f32; count * (n + 2)];
    for p in 0..count {
        gapped[p * (n + 2)..p * (n + 2) + n].copy_from_slice(&b[p * n..(p + 1) * n]);
    }
    let bs = BatchRef::from_strides(count, n, 1, [n + 2, 1, 1], &gapped).unwrap();
    assert!(!bs.is_compact());
    let e = batched::spd_solve(&kernels, &cv, &bs, &options, Poison::Nan).unwrap_err();
    assert_eq!(message(e), want);
    // The same values in f64 (checked on the host) give the same message.
    let (c64, b64) = (widen(&c), widen(&b));
    let e = batched::spd_solve(
        &kernels,
        &BatchRef::new(count, n, n, &c64).unwrap(),
        &BatchRef::vectors(count, n, &b64).unwrap(),
        &options,
        Poison::Nan,
    )
    .unwrap_err();
    assert_eq!(message(e), want);
    // C good: b's own error, from its upload.
    c[(3 * n + 2) * n + 1] = 0.5;
    let cv = BatchRef::new(count, n, n, &c).unwrap();
    let e = batched::spd_solve(&kernels, &cv, &bv, &options, Poison::Nan).unwrap_err();
    assert_eq!(
        message(e),
        "input b holds a non-finite value (inf) at problem 0, index 1 (0-based)"
    );
    // Least squares: A bad at problem 4, d at problem 2, b at problem 0: A named; then d.
    let k = 2 * n;
    let mut a = signed(8, count * n * k);
    let mut d: Vec<f32> = signed(9, count * k).iter().map(|v| v.abs() + 0.5).collect();
    let mut b = signed(10, count * k);
    a[(4 * n + 1) * k + 5] = f32::NEG_INFINITY;
    d[2 * k + 3] = f32::NAN;
    b[0] = f32::NAN;
    let run = |a: &[f32], d: &[f32], b: &[f32]| {
        message(
            batched::least_squares(
                &kernels,
                &BatchRef::new(count, n, k, a).unwrap(),
                &BatchRef::vectors(count, k, d).unwrap(),
                &BatchRef::vectors(count, k, b).unwrap(),
                &options,
                Poison::Nan,
            )
            .unwrap_err(),
        )
    };
    assert_eq!(
        run(&a, &d, &b),
        "input A holds a non-finite value (-inf) at problem 4, row 1, column 5 (0-based)"
    );
    a[(4 * n + 1) * k + 5] = 1.0;
    assert_eq!(
        run(&a, &d, &b),
        "input d holds a non-finite value (NaN) at problem 2, index 3 (0-based)"
    );
}

/// An input its upload checks.
fn prepare<'a>(s: &'a Scan<'a>) -> Option<Prepare<'a>> {
    Some(Prepare {
        strides: s.strides(),
        exponents: None,
        scan: Some(s),
    })
}

#[test]
fn a_batch_over_chunks_settles_each_chunk_from_its_upload() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let (count, n, k) = (11, 3, 6);
    // Problems on scales far apart, one below float32's normal range.
    let (mut a, d, b) = observations(31, count, n, k, &[(1, 70), (6, -120), (9, 30)]);
    let plan = Plan::new(Job::LeastSquares, n, k, 1, kernels.limits()).unwrap();
    let solve = |plan: &Plan, a: &[f32]| {
        let scans = [
            Scan::whole("A", BatchRef::new(count, n, k, a).unwrap(), true).unwrap(),
            Scan::whole("d", BatchRef::vectors(count, k, &d).unwrap(), true).unwrap(),
            Scan::whole("b", BatchRef::vectors(count, k, &b).unwrap(), true).unwrap(),
        ];
        let inputs = Inputs {
            a: Some(a),
            d: Some(&d),
            b: Some(&b),
            prepare: [
                prepare(&scans[0]),
                prepare(&scans[1]),
                prepare(&scans[2]),
                None,
            ],
            ..Inputs::default()
        };
        run(&kernels, plan, &inputs, count, Poison::Nan)
            .map(|out| (out, scans.iter().map(|s| s.exponents()).collect::<Vec<_>>()))
    };
    let (whole, exponents) = solve(&plan, &a).unwrap();
    assert!(exponents[0][1] > 60 && exponents[0][6] < -100 && exponents[0][9] > 20);
    let mut split = plan;
    (split.chunk, split.launch) = (4, 1);
    let (parts, split_exponents) = solve(&split, &a).unwrap();
    assert_eq!(split_exponents, exponents);
    assert_eq!(parts.info, whole.info);
    for (x, y) in parts.x.iter().zip(&whole.x) {
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    }
    // A NaN in the third chunk's problem is named from that chunk's upload.
    a[(9 * n + 2) * k + 4] = f32::NAN;
    let e = solve(&split, &a).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input A holds a non-finite value (NaN) at problem 9, row 2, column 4 (0-based)"
    );
}

#[test]
fn a_transposed_stack_is_checked_by_its_upload_and_gathered_on_the_gpu() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let options = BatchOptions::default();
    let (count, n, k) = (7, 4, 9);
    // X (B, k, n) observations x unknowns, read in place as A = Xᵀ (B, n, k); problem 2 on a
    // scale far above 1, problem 5 far below.
    let (mut x, d, b) = observations(41, count, n, k, &[(2, 80), (5, -90)]);
    let (dv, bv) = (
        BatchRef::vectors(count, k, &d).unwrap(),
        BatchRef::vectors(count, k, &b).unwrap(),
    );
    let a = BatchRef::new(count, k, n, &x).unwrap().transpose();
    assert!(!a.is_compact());
    let lent = batched::least_squares(&kernels, &a, &dv, &bv, &options, Poison::Nan).unwrap();
    let copied = a.to_batch().unwrap();
    let want = batched::least_squares(&kernels, &copied, &dv, &bv, &options, Poison::Nan).unwrap();
    assert_eq!(lent.info, vec![0; count]);
    assert_eq!(lent.info, want.info);
    for (x, y) in lent.x.as_slice().iter().zip(want.x.as_slice()) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
    // X's (observation 6, unknown 3) of problem 4 is A's row 3, column 6.
    x[(4 * k + 6) * n + 3] = f32::INFINITY;
    let a = BatchRef::new(count, k, n, &x).unwrap().transpose();
    let e = batched::least_squares(&kernels, &a, &dv, &bv, &options, Poison::Nan).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input A holds a non-finite value (inf) at problem 4, row 3, column 6 (0-based)"
    );
}

#[test]
fn the_values_above_each_diagonal_are_checked_where_asked_and_never_read() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let (count, n) = (5, 6);
    let plain = BatchOptions::default();
    let whole = plain.check_upper(true);
    // Garbage above every diagonal: large but finite.
    let mut c = scaled_spd_stack(5, n, count);
    for p in 0..count {
        for i in 0..n {
            for j in i + 1..n {
                c[(p * n + i) * n + j] = 1e30;
            }
        }
    }
    let b = signed(51, count * n);
    let bv = BatchRef::vectors(count, n, &b).unwrap();
    let solve = |c: &[f32], options: &BatchOptions| {
        let cv = BatchRef::new(count, n, n, c).unwrap();
        batched::spd_solve(&kernels, &cv, &bv, options, Poison::Nan)
    };
    let factor = |c: &[f32], options: &BatchOptions| {
        let cv = BatchRef::new(count, n, n, c).unwrap();
        batched::cholesky(&kernels, &cv, options, Poison::Nan)
    };
    // Finite garbage passes, and changes nothing (it is not read).
    let (x, y) = (solve(&c, &plain).unwrap(), solve(&c, &whole).unwrap());
    assert_eq!(x.info, vec![0; count]);
    for (u, v) in x.x.as_slice().iter().zip(y.x.as_slice()) {
        assert_eq!(u.to_bits(), v.to_bits());
    }
    // NaN above problem 3's diagonal at (0, 4) and inf in its lower triangle at (2, 1):
    // the first in row-major order is named where the upper values are checked.
    c[(3 * n) * n + 4] = f32::NAN;
    c[(3 * n + 2) * n + 1] = f32::INFINITY;
    let upper = "input C holds a non-finite value (NaN) at problem 3, row 0, column 4 (0-based)";
    let lower = "input C holds a non-finite value (inf) at problem 3, row 2, column 1 (0-based)";
    assert_eq!(solve(&c, &whole).unwrap_err().to_string(), upper);
    assert_eq!(factor(&c, &whole).unwrap_err().to_string(), upper);
    assert_eq!(solve(&c, &plain).unwrap_err().to_string(), lower);
    // The same from f64 (rounded on the host): the same messages.
    let wide = widen(&c);
    let cw = BatchRef::new(count, n, n, &wide).unwrap();
    let e = batched::cholesky(&kernels, &cw, &whole, Poison::Nan).unwrap_err();
    assert_eq!(e.to_string(), upper);
    let e = batched::cholesky(&kernels, &cw, &plain, Poison::Nan).unwrap_err();
    assert_eq!(e.to_string(), lower);
    // Only the upper value bad: refused where checked, factored where not.
    c[(3 * n + 2) * n + 1] = 0.25;
    assert_eq!(factor(&c, &whole).unwrap_err().to_string(), upper);
    let f = factor(&c, &plain).unwrap();
    assert_eq!(f.info, vec![0; count]);
    let wide = widen(&c);
    let cw = BatchRef::new(count, n, n, &wide).unwrap();
    let b64 = widen(&b);
    let bw = BatchRef::vectors(count, n, &b64).unwrap();
    let e = batched::spd_solve(&kernels, &cw, &bw, &whole, Poison::Nan).unwrap_err();
    assert_eq!(e.to_string(), upper);
}
