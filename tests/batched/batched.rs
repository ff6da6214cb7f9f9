//! The batched operations (`Gpu::batched`, issue 28) against f64 CPU references problem by
//! problem: n ∈ {1, 2, 3, 7, 8, 16, 31, 64, 129} (129 past llvmpipe's shared memory, so the
//! global work path runs too), batches with members that are not positive definite (INFO per
//! problem right, the others correct), outputs NaN-poisoned before the launch, garbage in the
//! upper triangle that must not be read, batches split over chunks and launches, and errors.

use crate::common;

use symraster::batched::device::{Inputs, Poison, run};
use symraster::batched::plan::{AssemblyRows, Job, Plan, StagedLoads, WorkStorage};
use symraster::batched::{self, BatchOptions};
use symraster::least_squares::solve_with_factor;
use symraster::problems::{rng, uniform_vector, well_conditioned_spd};
use symraster::{Batch, Error, Failure, Matrix, Method, NumericalError, reference};

const ORDERS: [usize; 10] = [1, 2, 3, 7, 8, 16, 31, 64, 128, 129];

/// A few problems per order (llvmpipe is slow at large n).
fn count(n: usize) -> usize {
    match n {
        0..=16 => 6,
        17..=64 => 4,
        _ => 3,
    }
}

/// Values uniform in [−1, 1), exactly representable in f32.
fn signed(seed: u64, len: usize) -> Vec<f32> {
    uniform_vector(&mut rng(seed), len)
        .iter()
        .map(|&v| 2.0 * v - 1.0)
        .collect()
}

/// Weights in [0.5, 1.5).
fn weights(seed: u64, len: usize) -> Vec<f32> {
    uniform_vector(&mut rng(seed), len)
        .iter()
        .map(|&v| v + 0.5)
        .collect()
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

use crate::common::max_relative_error as relative_error;

/// x solving the f64 normal equations of problem p (the f32 data widened exactly).
fn least_squares_reference(a: &Batch<f32>, d: &Batch<f32>, b: &Batch<f32>, p: usize) -> Vec<f64> {
    let (am, dp, bp) = (
        a.matrix(p).to_f64(),
        widen(d.problem(p)),
        widen(b.problem(p)),
    );
    let c = reference::assemble(&am, &dp);
    let (n, k) = am.shape();
    let g: Vec<f64> = (0..n)
        .map(|i| (0..k).map(|j| am[(i, j)] * dp[j] * bp[j]).sum())
        .collect();
    solve_with_factor(&reference::cholesky(&c).unwrap(), &g)
}

/// A least-squares batch of order n with 2n observations; problem 1 (where there is one) has
/// A's row n/2 zero, so its C is singular: its pivot of column n/2 is exactly 0.
fn least_squares_batch(seed: u64, count: usize, n: usize) -> (Batch<f32>, Batch<f32>, Batch<f32>) {
    let k = 2 * n;
    let mut a = signed(seed, count * n * k);
    if count > 1 {
        let row = n / 2;
        a[(n + row) * k..(n + row + 1) * k].fill(0.0);
    }
    (
        Batch::new(count, n, k, a).unwrap(),
        Batch::vectors(count, k, weights(seed + 1, count * k)).unwrap(),
        Batch::vectors(count, k, signed(seed + 2, count * k)).unwrap(),
    )
}

#[test]
fn least_squares_matches_the_f64_reference_per_problem() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for n in ORDERS {
        let b_count = count(n);
        let (a, d, b) = least_squares_batch(n as u64, b_count, n);
        let unrefined = batched::least_squares(
            &kernels,
            &a,
            &d,
            &b,
            &BatchOptions::default().refinement_steps(0),
            Poison::Nan,
        )
        .unwrap();
        let s = batched::least_squares(&kernels, &a, &d, &b, &BatchOptions::default(), Poison::Nan)
            .unwrap();
        assert_eq!(s.refinement_steps, 1);
        for p in 0..b_count {
            if p == 1 {
                let column = n / 2;
                assert_eq!(s.info[p], column as i32 + 1, "n {n}");
                assert_eq!(s.failure(p), Some(Failure::NotPositiveDefinite { column }));
                assert!(s.x.problem(p).iter().all(|v| v.is_nan()), "n {n}");
                continue;
            }
            assert_eq!(s.info[p], 0, "n {n} problem {p}");
            let x_ref = least_squares_reference(&a, &d, &b, p);
            let e0 = relative_error(unrefined.x.problem(p), &x_ref);
            let e1 = relative_error(s.x.problem(p), &x_ref);
            // f32 factor: about κ·2⁻²⁴; one step with the residual in f64: about its square.
            assert!(
                e0 < 1e-4 * (n as f64).max(4.0),
                "n {n} p {p}: unrefined {e0:.2e}"
            );
            assert!(
                e1 < 1e-8 * (n as f64).max(4.0),
                "n {n} p {p}: refined {e1:.2e}"
            );
            assert!(e1 <= e0, "n {n} p {p}: {e1:.2e} > {e0:.2e}");
        }
        let failed = if b_count > 1 { vec![1] } else { vec![] };
        assert_eq!(s.failed(), failed, "n {n}");
    }
}

#[test]
fn least_squares_with_many_observations_per_invocation_matches_the_reference() {
    // k past the group's invocations (32 at n ≤ 8, 64 at n ≤ 32) and not a multiple of them or
    // of the 16 staged columns: the residual runs over several chunks, the last one partial.
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for (n, k) in [(3, 101), (8, 70), (20, 150)] {
        let b_count = 2;
        let a = Batch::new(b_count, n, k, signed(n as u64, b_count * n * k)).unwrap();
        let d = Batch::vectors(b_count, k, weights(n as u64 + 1, b_count * k)).unwrap();
        let b = Batch::vectors(b_count, k, signed(n as u64 + 2, b_count * k)).unwrap();
        let s = batched::least_squares(&kernels, &a, &d, &b, &BatchOptions::default(), Poison::Nan)
            .unwrap();
        for p in 0..b_count {
            assert_eq!(s.info[p], 0, "n {n} k {k} p {p}");
            let e = relative_error(s.x.problem(p), &least_squares_reference(&a, &d, &b, p));
            assert!(e < 1e-8 * (n as f64).max(4.0), "n {n} k {k} p {p}: {e:.2e}");
        }
    }
}

/// A batch of SPD matrices with garbage above the diagonal (NaN, 1e30); problem 2 (where there
/// is one) has C(r, r) = −1 for r = n − 1, so column r fails.
fn spd_batch(seed: u64, count: usize, n: usize) -> (Batch<f64>, Vec<Matrix<f64>>) {
    let mut data = Vec::new();
    let mut lower = Vec::new();
    for p in 0..count {
        let mut c = well_conditioned_spd(&mut rng(seed + p as u64), n).to_f64();
        if p == 2 {
            c[(n - 1, n - 1)] = -1.0;
        }
        lower.push(c.lower_triangle());
        for i in 0..n {
            for j in i + 1..n {
                c[(i, j)] = if (i + j) % 2 == 0 { f64::NAN } else { 1e30 };
            }
        }
        data.extend_from_slice(c.as_slice());
    }
    (Batch::new(count, n, n, data).unwrap(), lower)
}

#[test]
fn cholesky_matches_the_reference_and_reads_only_the_lower_triangle() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for n in ORDERS {
        let b_count = count(n);
        let (c, lower) = spd_batch(10 * n as u64, b_count, n);
        let f = batched::cholesky(&kernels, &c, &BatchOptions::default(), Poison::Nan).unwrap();
        assert_eq!(f.l.shape(), (b_count, n, n));
        for (p, low) in lower.iter().enumerate() {
            // the f32 matrix as the GPU holds it
            let c32 = low.to_f32().to_f64();
            match reference::cholesky(&c32) {
                Ok(l_ref) => {
                    assert_eq!(f.info[p], 0, "n {n} p {p}");
                    let l = f.l.matrix(p).to_f64();
                    let e = symraster::relative_error(&l, &l_ref);
                    assert!(e < 1e-6 * (n as f64).max(4.0), "n {n} p {p}: {e:.2e}");
                    for i in 0..n {
                        for j in i + 1..n {
                            assert_eq!(l[(i, j)], 0.0, "n {n} p {p} ({i}, {j})");
                        }
                    }
                }
                Err(Error::Numerical(symraster::NumericalError::NotPositiveDefinite {
                    column,
                    ..
                })) => {
                    assert_eq!(p, 2, "n {n}");
                    assert_eq!(f.info[p], column as i32 + 1, "n {n}");
                    assert!(f.l.problem(p).iter().all(|v| v.is_nan()), "n {n}");
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}

#[test]
fn spd_solve_matches_the_reference_with_refinement() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for n in ORDERS {
        let b_count = count(n);
        let (c, lower) = spd_batch(20 * n as u64, b_count, n);
        let rhs = Batch::vectors(b_count, n, widen(&signed(n as u64, b_count * n))).unwrap();
        let s =
            batched::spd_solve(&kernels, &c, &rhs, &BatchOptions::default(), Poison::Nan).unwrap();
        for (p, low) in lower.iter().enumerate() {
            let c32 = low.to_f32().to_f64();
            let b64 = rhs.problem(p).to_vec();
            match reference::cholesky(&c32) {
                Ok(l) => {
                    assert_eq!(s.info[p], 0, "n {n} p {p}");
                    let x_ref = solve_with_factor(&l, &b64);
                    let e = relative_error(s.x.problem(p), &x_ref);
                    assert!(e < 1e-9 * (n as f64).max(4.0), "n {n} p {p}: {e:.2e}");
                }
                Err(_) => {
                    assert_eq!(p, 2);
                    assert_eq!(s.info[p], n as i32, "n {n}");
                    assert!(s.x.problem(p).iter().all(|v| v.is_nan()));
                }
            }
        }
    }
}

#[test]
fn assembly_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for n in ORDERS {
        let b_count = count(n).min(3);
        // k not a multiple of the 16 staged columns, and k < n too
        for k in [2 * n + 3, n.div_ceil(2)] {
            let a = Batch::new(b_count, n, k, signed(n as u64, b_count * n * k)).unwrap();
            let d = Batch::vectors(b_count, k, weights(7, b_count * k)).unwrap();
            let c = batched::assemble(&kernels, &a, &d, Poison::Nan).unwrap();
            for p in 0..b_count {
                let c_ref = reference::assemble(&a.matrix(p).to_f64(), &widen(d.problem(p)));
                let e = symraster::relative_error(&c.matrix(p).to_f64(), &c_ref);
                assert!(e < 1e-6 * (k as f64).sqrt(), "n {n} k {k} p {p}: {e:.2e}");
            }
        }
    }
}

#[test]
fn batches_split_over_chunks_and_launches_give_the_same_results() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let (n, b_count) = (5, 11);
    let (a, d, b) = least_squares_batch(3, b_count, n);
    let whole = batched::least_squares(&kernels, &a, &d, &b, &BatchOptions::default(), Poison::Nan)
        .unwrap();
    let mut plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, kernels.limits()).unwrap();
    (plan.chunk, plan.launch) = (4, 3);
    let inputs = Inputs {
        a: Some(a.as_slice()),
        d: Some(d.as_slice()),
        b: Some(b.as_slice()),
        ..Inputs::default()
    };
    let split = run(&kernels, &plan, &inputs, b_count, Poison::Nan).unwrap();
    assert_eq!(split.info, whole.info);
    for (x, y) in split.x.iter().zip(whole.x.as_slice()) {
        assert!(x == y || (x.is_nan() && y.is_nan()));
    }
    // The global work buffer gives what shared memory gives (one problem per group there;
    // several are refused).
    plan.storage = WorkStorage::Global;
    if plan.problems_per_group > 1 {
        assert!(run(&kernels, &plan, &inputs, b_count, Poison::Nan).is_err());
        plan.problems_per_group = 1;
    }
    let global = run(&kernels, &plan, &inputs, b_count, Poison::Nan).unwrap();
    assert_eq!(global.info, whole.info);
    for (x, y) in global.x.iter().zip(whole.x.as_slice()) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0) || (x.is_nan() && y.is_nan()));
    }
}

#[test]
fn the_public_api_takes_f64_and_reports_per_problem() {
    let gpu = common::gpu();
    let (a, d, b) = least_squares_batch(5, 3, 4);
    let (a, d, b) = (
        Batch::new(3, 4, 8, widen(a.as_slice())).unwrap(),
        Batch::vectors(3, 8, widen(d.as_slice())).unwrap(),
        Batch::vectors(3, 8, widen(b.as_slice())).unwrap(),
    );
    let s = gpu
        .batched()
        .least_squares(&a, &d, &b, BatchOptions::default())
        .unwrap();
    assert_eq!(s.failed(), vec![1]);
    assert_eq!(s.x.shape(), (3, 4, 1));
    let c = gpu
        .batched()
        .assemble(&a, &d, BatchOptions::default())
        .unwrap();
    let f = gpu.batched().cholesky(&c, BatchOptions::default()).unwrap();
    assert_eq!(f.info, vec![0, 3, 0]);
    assert!(f.failure(1).unwrap().to_string().contains("column 2"));
}

#[test]
fn empty_batches_give_empty_results() {
    let gpu = common::gpu();
    let c = Batch::<f32>::new(0, 3, 3, vec![]).unwrap();
    let b = Batch::<f32>::vectors(0, 3, vec![]).unwrap();
    let s = gpu
        .batched()
        .spd_solve(&c, &b, BatchOptions::default())
        .unwrap();
    assert!(s.x.as_slice().is_empty() && s.info.is_empty());
}

#[test]
fn bad_input_gets_one_line_errors() {
    let gpu = common::gpu();
    let bat = gpu.batched();
    let opts = BatchOptions::default();
    let c = Batch::new(2, 2, 2, vec![4.0f32, 0.0, 1.0, 3.0, 4.0, 0.0, 1.0, 3.0]).unwrap();
    let message = |e: Error| e.to_string();
    assert_eq!(
        message(Batch::new(2, 2, 2, vec![1.0f32; 7]).unwrap_err()),
        "shape mismatch: a batch of 2 matrices of 2x2 holds 8 values, but 7 were given"
    );
    let short = Batch::vectors(2, 3, vec![1.0f32; 6]).unwrap();
    assert_eq!(
        message(bat.spd_solve(&c, &short, opts).unwrap_err()),
        "shape mismatch: b must be (2, 2) (one right side of length n per matrix of C), but is (2, 3)"
    );
    let rect = Batch::new(1, 2, 3, vec![1.0f32; 6]).unwrap();
    assert!(
        message(bat.cholesky(&rect, opts).unwrap_err()).contains("C must hold square matrices")
    );
    let mut nan = c.clone().into_vec();
    nan[6] = f32::NAN;
    let nan = Batch::new(2, 2, 2, nan).unwrap();
    assert_eq!(
        message(bat.cholesky(&nan, opts).unwrap_err()),
        "input C holds a non-finite value (NaN) at problem 1, row 1, column 0 (0-based)"
    );
    // above the diagonal is never read
    let mut upper = c.clone().into_vec();
    upper[5] = f32::NAN;
    bat.cholesky(&Batch::new(2, 2, 2, upper).unwrap(), opts)
        .unwrap();
    let big = Batch::new(1, 257, 257, vec![0.0f32; 257 * 257]).unwrap();
    assert!(message(bat.cholesky(&big, opts).unwrap_err()).contains("orders n up to 256"));
    assert!(
        message(bat.cholesky(&c, opts.method(Method::Faithful)).unwrap_err())
            .contains("the faithful method has no batched form")
    );
    assert!(
        message(
            bat.spd_solve(
                &c,
                &Batch::vectors(2, 2, vec![1.0f32; 4]).unwrap(),
                opts.refinement_steps(9)
            )
            .unwrap_err()
        )
        .contains("0 to 8 refinement steps")
    );
    let f64_big = Batch::new(1, 1, 1, vec![1e39f64]).unwrap();
    assert!(
        message(bat.cholesky(&f64_big, opts).unwrap_err())
            .contains("beyond single precision's range")
    );
}

/// A problem whose A·diag(d)·Aᵀ lies beyond float32's range (about 1e40) is scaled by powers of
/// two as the single solves scale theirs, and solved: its x is the unscaled problem's over 1e20.
#[test]
fn a_problem_beyond_float32s_range_is_scaled_and_solved() {
    let gpu = common::gpu();
    let (a, d, b) = least_squares_batch(9, 3, 3);
    let plain = gpu
        .batched()
        .least_squares(&a, &d, &b, BatchOptions::default())
        .unwrap();
    let mut big = a.clone().into_vec();
    big[2 * 18..3 * 18].iter_mut().for_each(|v| *v *= 1e20);
    let a = Batch::new(3, 3, 6, big).unwrap();
    let s = gpu
        .batched()
        .least_squares(&a, &d, &b, BatchOptions::default())
        .unwrap();
    // Problem 1 is singular (a zero row of A) in both.
    assert_eq!(s.info, plain.info);
    assert_eq!(s.info[2], 0);
    let scale = plain
        .x
        .problem(2)
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        / 1e20;
    for (x, want) in s.x.problem(2).iter().zip(plain.x.problem(2)) {
        let want = want / 1e20;
        assert!((x - want).abs() <= 1e-6 * scale, "{x:e} against {want:e}");
    }
    assert_eq!(s.x.problem(0), plain.x.problem(0));
}

/// Every group shape the plans can take (problems per group, staged loads, invocations per
/// problem, rows per invocation in the assembly) gives the f64 reference's answers, with a batch that does not fill its last
/// group, a member that is not positive definite among the others of its group, and
/// NaN-poisoned outputs.
#[test]
fn every_group_shape_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let b_count = 5;
    // Both assemblies at every order (the default takes pairs only past n = 64).
    let rows = |problems: usize| {
        if problems == 4 {
            AssemblyRows::Single
        } else {
            AssemblyRows::Pair
        }
    };
    for n in [3, 17, 33] {
        let (a, d, b) = least_squares_batch(40 + n as u64, b_count, n);
        let inputs = Inputs {
            a: Some(a.as_slice()),
            d: Some(d.as_slice()),
            b: Some(b.as_slice()),
            ..Inputs::default()
        };
        let refs: Vec<_> = (0..b_count)
            .filter(|&p| p != 1)
            .map(|p| (p, least_squares_reference(&a, &d, &b, p)))
            .collect();
        for loads in [StagedLoads::Scalar, StagedLoads::Vector] {
            for problems in [1, 3, 4] {
                for threads in [32, 64] {
                    let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, limits)
                        .unwrap()
                        .with_staged_loads(loads, limits)
                        .unwrap()
                        .with_problems_per_group(1, limits)
                        .unwrap()
                        .with_threads(threads.max(n.next_multiple_of(16)), limits)
                        .unwrap()
                        .with_problems_per_group(problems, limits)
                        .unwrap()
                        .with_assembly_rows(rows(problems));
                    let shape = format!(
                        "n {n} {loads:?} {:?} {problems} x {}",
                        plan.assembly_rows, plan.threads
                    );
                    let out = run(&kernels, &plan, &inputs, b_count, Poison::Nan).unwrap();
                    assert_eq!(out.info[1], n as i32 / 2 + 1, "{shape}");
                    assert!(out.x[n..2 * n].iter().all(|v| v.is_nan()), "{shape}");
                    for (p, x_ref) in &refs {
                        assert_eq!(out.info[*p], 0, "{shape} p {p}");
                        let e = relative_error(&out.x[p * n..(p + 1) * n], x_ref);
                        assert!(e < 1e-8 * (n as f64).max(4.0), "{shape} p {p}: {e:.2e}");
                    }
                }
            }
        }
        // The other jobs with three problems per group (the last group one problem short).
        let assembly = Plan::new(Job::Assemble, n, 2 * n, 0, limits)
            .unwrap()
            .with_problems_per_group(3, limits)
            .unwrap();
        let c = run(&kernels, &assembly, &inputs, b_count, Poison::Nan)
            .unwrap()
            .matrix;
        for p in 0..b_count {
            let c_ref = reference::assemble(&a.matrix(p).to_f64(), &widen(d.problem(p)));
            let got = Matrix::from_fn(n, n, |i, j| f64::from(c[p * n * n + i * n + j]));
            let e = symraster::relative_error(&got, &c_ref);
            assert!(
                e < 1e-6 * (2.0 * n as f64).sqrt(),
                "assembly n {n} p {p}: {e:.2e}"
            );
        }
        let (spd, lower) = spd_batch(50 + n as u64, b_count, n);
        let spd32: Vec<f32> = spd.as_slice().iter().map(|&v| v as f32).collect();
        let rhs = signed(n as u64, b_count * n);
        let c_inputs = Inputs {
            c: Some(&spd32),
            b: Some(&rhs),
            ..Inputs::default()
        };
        for job in [Job::Cholesky, Job::SpdSolve] {
            let refine = usize::from(job == Job::SpdSolve);
            let plan = Plan::new(job, n, 0, refine, limits)
                .unwrap()
                .with_problems_per_group(3, limits)
                .unwrap();
            let out = run(&kernels, &plan, &c_inputs, b_count, Poison::Nan).unwrap();
            for (p, low) in lower.iter().enumerate() {
                let c32 = low.to_f32().to_f64();
                let Ok(l_ref) = reference::cholesky(&c32) else {
                    assert_eq!(p, 2, "{job:?} n {n}");
                    assert_eq!(out.info[p], n as i32, "{job:?} n {n}");
                    continue;
                };
                assert_eq!(out.info[p], 0, "{job:?} n {n} p {p}");
                let e = if job == Job::Cholesky {
                    let got =
                        Matrix::from_fn(n, n, |i, j| f64::from(out.matrix[p * n * n + i * n + j]));
                    symraster::relative_error(&got, &l_ref)
                } else {
                    let x_ref = solve_with_factor(&l_ref, &widen(&rhs[p * n..(p + 1) * n]));
                    relative_error(&out.x[p * n..(p + 1) * n], &x_ref)
                };
                assert!(
                    e < 1e-6 * (n as f64).max(4.0),
                    "{job:?} n {n} p {p}: {e:.2e}"
                );
            }
        }
    }
}

/// The batched path checks ranges as the single one does: a Cₚ beyond float32's range (or
/// below its normal range) is refused naming the problem instead of coming back ±inf or 0, and
/// a solution below float32's range (C = 1e30·[[2, 1], [1, 2]], b = 1e-30: x ≈ 3.3e-61) is
/// solved through per-problem powers of two instead of coming back 0 with INFO 0.
#[test]
fn batched_ranges_are_checked_or_scaled_as_the_single_path() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let batched = gpu.batched();
    // Problem 1 overflows float32 (C(0, 0) = 2·1e40), problem 2 underflows (2·1e-44).
    let a = Batch::new(
        3,
        2,
        2,
        vec![
            1.0f64, 0.0, 0.0, 1.0, 1e20, 1e20, 1.0, 0.0, 1e-22, 1e-22, 1.0, 0.0,
        ],
    )
    .unwrap();
    let d = Batch::vectors(3, 2, vec![1.0f64; 6]).unwrap();
    for keep in [[0, 1], [0, 2]] {
        let pick = |b: &Batch<f64>| -> Vec<f64> {
            keep.iter().flat_map(|&p| b.problem(p).to_vec()).collect()
        };
        let a2 = Batch::new(2, 2, 2, pick(&a)).unwrap();
        let d2 = Batch::vectors(2, 2, pick(&d)).unwrap();
        match batched.assemble(&a2, &d2, BatchOptions::default()) {
            Err(Error::Numerical(NumericalError::BatchOutOfRange {
                problem, row: 0, ..
            })) => {
                assert_eq!(problem, 1)
            }
            other => panic!("problems {keep:?}: expected BatchOutOfRange, got {other:?}"),
        }
    }
    // x far below float32's range, beside an ordinary problem.
    let c = Batch::new(2, 2, 2, vec![2e30f64, 0.0, 1e30, 2e30, 4.0, 0.0, 1.0, 3.0]).unwrap();
    let b = Batch::vectors(2, 2, vec![1e-30f64, 1e-30, 1.0, 2.0]).unwrap();
    let s = batched.spd_solve(&c, &b, BatchOptions::default()).unwrap();
    assert_eq!(s.info, vec![0, 0]);
    let want = 1e-60 / 3.0;
    for &x in s.x.problem(0) {
        assert!((x - want).abs() <= 1e-6 * want, "x = {x:e}, want {want:e}");
    }
    let x1 = s.x.problem(1);
    assert!((4.0 * x1[0] + x1[1] - 1.0).abs() < 1e-6 && (x1[0] + 3.0 * x1[1] - 2.0).abs() < 1e-6);
    // The same through least squares: A = 1e15·I (C = 1e30·I), b = 1e-30: x = 1e-45.
    let a = Batch::new(1, 2, 2, vec![1e15f64, 0.0, 0.0, 1e15]).unwrap();
    let d = Batch::vectors(1, 2, vec![1.0f64, 1.0]).unwrap();
    let b = Batch::vectors(1, 2, vec![1e-30f64, 2e-30]).unwrap();
    let s = batched
        .least_squares(&a, &d, &b, BatchOptions::default())
        .unwrap();
    assert_eq!(s.info, vec![0]);
    let x = s.x.problem(0);
    assert!(
        (x[0] - 1e-45).abs() <= 1e-6 * 1e-45 && (x[1] - 2e-45).abs() <= 1e-6 * 2e-45,
        "{x:?}"
    );
}
