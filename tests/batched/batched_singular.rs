//! The batched solves' flag for a member singular to working precision (INFO n + 1,
//! `Failure::Singular`): a member whose last unknown repeats its first but for a tiny
//! separation (C's last row equal to its first but for 2⁻²¹·C(0,0) on the diagonal; in least
//! squares two equal unknowns but for one observation of weight 2⁻¹⁸) has a last pivot of
//! exactly 2⁻²¹·C(0,0) in f32 (the data are built so that every step of the elimination is
//! exact there), so its f32 factor passes and x is noise: it is flagged, its x NaN, while the
//! well-conditioned members beside it get INFO 0 and their f64 reference solutions. Orders
//! from 2 past the shared-memory limit (129: the global work path on llvmpipe), by the public
//! API's plans, with 0 to 2 refinement steps.

use crate::common;

use symraster::least_squares::{pivot_tolerance, solve_with_factor};
use symraster::problems::{rng, uniform_vector};
use symraster::{Batch, BatchOptions, Failure, Matrix, reference};

const ORDERS: [usize; 9] = [2, 3, 7, 8, 16, 31, 33, 64, 129];

/// Members per batch; the flagged one is `SINGULAR`.
const COUNT: usize = 4;
const SINGULAR: usize = 2;

/// The separation of the repeated unknown relative to C(0,0): a pivot ratio of 2⁻²¹, a
/// quarter of the tolerance 2⁻¹⁹.
const SEPARATION: f64 = 1.0 / (1u64 << 21) as f64;

/// Values uniform in [lo, lo + 1), rounded to multiples of 2⁻⁸ (exact in f32, and their
/// products and short sums too).
fn uniform(seed: u64, len: usize, lo: f64) -> Vec<f64> {
    uniform_vector(&mut rng(seed), len)
        .iter()
        .map(|&v| ((f64::from(v) + lo) * 256.0).floor() / 256.0)
        .collect()
}

/// A diagonally dominant SPD matrix of order n whose C(0,0) is a power of two.
fn dominant(seed: u64, n: usize) -> Matrix<f64> {
    let g = uniform(seed, n * n, -0.5);
    let top = (n as f64).log2().ceil().exp2() * 2.0;
    Matrix::from_fn(n, n, |i, j| match (i, j) {
        (0, 0) => top,
        _ if i == j => n as f64 + 1.0,
        _ => g[i.min(j) * n + i.max(j)],
    })
}

/// [`dominant`] with its last row and column replaced by its first, C(n−1, n−1) = C(0,0)·(1 +
/// 2⁻²¹): singular to working precision, its last pivot exactly 2⁻²¹·C(0,0) in f32.
fn repeated_unknown(seed: u64, n: usize) -> Matrix<f64> {
    let c = dominant(seed, n);
    let last = n - 1;
    let from = |i: usize| if i == last { 0 } else { i };
    Matrix::from_fn(n, n, |i, j| {
        if i == last && j == last {
            c[(0, 0)] * (1.0 + SEPARATION)
        } else {
            c[(from(i), from(j))]
        }
    })
}

#[test]
fn the_refinement_tolerance_is_the_single_paths() {
    assert_eq!(symraster::batched::SINGULAR_PIVOT_RATIO, pivot_tolerance());
}

#[test]
fn an_spd_member_singular_to_working_precision_is_flagged_alone() {
    let gpu = common::gpu();
    for n in ORDERS {
        let members: Vec<Matrix<f64>> = (0..COUNT)
            .map(|p| {
                let seed = 100 * n as u64 + p as u64;
                if p == SINGULAR {
                    repeated_unknown(seed, n)
                } else {
                    dominant(seed, n)
                }
            })
            .collect();
        // The flagged member is SPD with a last pivot ratio of 2⁻²¹, under the tolerance: the
        // case that came back as INFO 0 and noise.
        let flagged = reference::cholesky(&members[SINGULAR]).unwrap();
        let ratio = flagged[(n - 1, n - 1)].powi(2) / members[SINGULAR][(n - 1, n - 1)];
        assert!(
            ratio > 0.0 && ratio < pivot_tolerance() / 2.0,
            "n {n}: {ratio:e}"
        );
        let c = Batch::from_matrices(&members).unwrap();
        let rhs = Batch::vectors(COUNT, n, uniform(7 * n as u64, COUNT * n, -0.5)).unwrap();
        for steps in [0, 1, 2] {
            let s = gpu
                .batched()
                .spd_solve(&c, &rhs, BatchOptions::default().refinement_steps(steps))
                .unwrap();
            for (p, member) in members.iter().enumerate() {
                if p == SINGULAR {
                    assert_eq!(s.info[p], n as i32 + 1, "n {n} steps {steps}");
                    assert_eq!(s.failure(p), Some(Failure::Singular));
                    assert!(s.x.problem(p).iter().all(|v| v.is_nan()), "n {n}");
                    continue;
                }
                assert_eq!(s.info[p], 0, "n {n} steps {steps} p {p}");
                let x_ref =
                    solve_with_factor(&reference::cholesky(member).unwrap(), rhs.problem(p));
                let e = common::max_relative_error(s.x.problem(p), &x_ref);
                let bound = if steps == 0 { 1e-5 } else { 1e-9 } * (n as f64).max(4.0);
                assert!(e < bound, "n {n} steps {steps} p {p}: {e:.2e}");
            }
            assert_eq!(s.failed(), vec![SINGULAR], "n {n}");
        }
    }
}

/// The observations per least-squares problem of order n.
fn observations(n: usize) -> usize {
    2 * n + 10
}

/// Least-squares members of order n: the flagged one's A has small whole numbers (so every
/// sum of C = A·Aᵀ is exact in f32, in any order), row 0 ±1 in 8 observations (C(0,0) = 8) and
/// row n − 1 equal to it but for 2⁻⁹ in the last observation (C(n−1, n−1) = 8 + 2⁻¹⁸), unit
/// weights; the others random.
fn least_squares_members(n: usize) -> (Batch<f64>, Batch<f64>, Batch<f64>) {
    let k = observations(n);
    let mut a = Vec::with_capacity(COUNT * n * k);
    let mut d = Vec::with_capacity(COUNT * k);
    for p in 0..COUNT {
        let seed = 1000 * n as u64 + p as u64;
        let mut m = uniform(seed, n * k, -0.5);
        let mut w = uniform(seed + 500, k, 0.5);
        if p == SINGULAR {
            let whole = |e: usize| (m[e] * 5.0).floor().clamp(-2.0, 2.0);
            let row0 = |j: usize| match j {
                0..8 if m[j] < 0.0 => -1.0,
                0..8 => 1.0,
                _ => 0.0,
            };
            m = (0..n * k)
                .map(|e| {
                    let (i, j) = (e / k, e % k);
                    match i {
                        0 => row0(j),
                        _ if i == n - 1 && j == k - 1 => 1.0 / 512.0,
                        _ if i == n - 1 => row0(j),
                        _ if j == k - 1 => 0.0,
                        _ => whole(e),
                    }
                })
                .collect();
            w.fill(1.0);
        }
        a.extend(m);
        d.extend(w);
    }
    let b = uniform(9 * n as u64, COUNT * k, -0.5);
    (
        Batch::new(COUNT, n, k, a).unwrap(),
        Batch::vectors(COUNT, k, d).unwrap(),
        Batch::vectors(COUNT, k, b).unwrap(),
    )
}

#[test]
fn a_least_squares_member_with_dependent_unknowns_is_flagged_alone() {
    let gpu = common::gpu();
    for n in ORDERS {
        let (a, d, b) = least_squares_members(n);
        let s = gpu
            .batched()
            .least_squares(&a, &d, &b, BatchOptions::default())
            .unwrap();
        assert_eq!(s.failed(), vec![SINGULAR], "n {n}");
        for p in 0..COUNT {
            match p {
                SINGULAR => {
                    assert_eq!(s.info[p], n as i32 + 1, "n {n}");
                    assert_eq!(s.failure(p), Some(Failure::Singular));
                }
                _ => {
                    assert_eq!(s.info[p], 0, "n {n} p {p}");
                    let am = a.matrix(p);
                    let c = reference::assemble(&am, d.problem(p));
                    let g: Vec<f64> = (0..n)
                        .map(|i| {
                            (0..observations(n))
                                .map(|j| am[(i, j)] * d.problem(p)[j] * b.problem(p)[j])
                                .sum()
                        })
                        .collect();
                    let x_ref = solve_with_factor(&reference::cholesky(&c).unwrap(), &g);
                    let e = common::max_relative_error(s.x.problem(p), &x_ref);
                    // f64 data rounded to f32 once: about κ·2⁻²⁴ relative stays.
                    assert!(e < 1e-4 * (n as f64).max(4.0), "n {n} p {p}: {e:.2e}");
                }
            }
            if s.info[p] != 0 {
                assert!(s.x.problem(p).iter().all(|v| v.is_nan()), "n {n} p {p}");
            }
        }
    }
}
