//! Diagnoses that name the real reason: an SPD matrix the f32 factor cannot take is called
//! too ill-conditioned for f32 (never "not positive definite"), graded and badly scaled
//! problems that LAPACK solves are solved (equilibrated judgements), and a matrix that is not
//! SPD is named so from its f64 factor.

use crate::common;

use symraster::least_squares::relative_error_vec;
use symraster::problems::rng;
use symraster::{Error, Matrix, NumericalError, Options, SolveOptions};

/// x with C·x = b from the f64 reference factor.
fn reference_solve(c: &Matrix<f64>, b: &[f64]) -> Vec<f64> {
    let l = symraster::reference::cholesky(&c.lower_triangle()).unwrap();
    symraster::least_squares::solve_with_factor(&l, b)
}

#[test]
fn an_spd_matrix_beyond_f32_is_called_ill_conditioned_not_indefinite() {
    let gpu = common::gpu();
    // Order 30, smallest eigenvalue 1, condition 1e9.
    let eigenvalues: Vec<f64> = (0..30).map(|k| 10f64.powf(9.0 * k as f64 / 29.0)).collect();
    let c = common::spd_with_eigenvalues(&eigenvalues, 7);
    for method in gpu.methods() {
        match gpu.cholesky(&c, Options::default().method(method)) {
            // The f32 factor may succeed by luck of rounding; it must never be called
            // indefinite.
            Ok(_) => {}
            Err(Error::Numerical(NumericalError::IllConditionedForSingle {
                condition, ..
            })) => {
                assert!(
                    condition > 1e7 && condition < 1e12,
                    "{method}: {condition:e}"
                );
            }
            Err(e) => panic!("{method}: {e}"),
        }
        // The SPD solve falls back to f64 and solves it.
        let b: Vec<f64> = (0..30).map(|i| (i as f64).sin()).collect();
        let options = SolveOptions::new().gpu(Options::default().method(method));
        let s = gpu.spd_solve(&c, &b, options).unwrap();
        let e = relative_error_vec(&s.x, &reference_solve(&c, &b));
        assert!(e < 1e-6, "{method}: forward error {e:.2e}");
    }
}

#[test]
fn a_matrix_that_is_not_spd_is_named_from_its_f64_factor() {
    let gpu = common::gpu();
    // Eigenvalues 1 .. 1e3 and one −1e-3: indefinite in any precision.
    let mut eigenvalues: Vec<f64> = (0..12).map(|k| 10f64.powf(k as f64 / 4.0)).collect();
    eigenvalues[5] = -1e-3;
    let c = common::spd_with_eigenvalues(&eigenvalues, 3);
    for method in gpu.methods() {
        match gpu.cholesky(&c, Options::default().method(method)) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { pivot, .. })) => {
                assert!(pivot <= 0.0 || pivot.is_nan(), "{method}: pivot {pivot}");
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

#[test]
fn a_diagonal_beyond_one_power_of_four_factors_where_l_fits_f32() {
    let gpu = common::gpu();
    // 1e-50 is below f32's range, its square root 1e-25 is not.
    let c = Matrix::from_fn(3, 3, |i, j| if i == j { [1.0, 1e-50, 2.0][i] } else { 0.0 });
    for method in gpu.methods() {
        let l = gpu.cholesky(&c, Options::default().method(method)).unwrap();
        let l = l.l().unwrap();
        for (j, want) in [1.0, 1e-25, 2f64.sqrt()].iter().enumerate() {
            let got = f64::from(l[(j, j)]);
            assert!(
                (got - want).abs() <= 1e-6 * want,
                "{method}: L({j},{j}) = {got:e}"
            );
        }
    }
}

#[test]
fn graded_spd_solves_are_solved() {
    let gpu = common::gpu();
    // diag(1, 1e-20, 2, 3): condition 3e20 unequilibrated, 1 equilibrated.
    let c = Matrix::from_fn(4, 4, |i, j| {
        if i == j {
            [1.0, 1e-20, 2.0, 3.0][i]
        } else {
            0.0
        }
    });
    let b = [1.0, 1.0, 1.0, 1.0];
    let s = gpu.spd_solve(&c, &b, SolveOptions::default()).unwrap();
    let want = [1.0, 1e20, 0.5, 1.0 / 3.0];
    assert!(relative_error_vec(&s.x, &want) < 1e-15, "{:?}", s.x);

    // A well-conditioned SPD matrix graded by D = diag(10^-4 .. 10^4): D·C·D.
    let m = 20;
    let eigenvalues: Vec<f64> = (0..m).map(|k| 1.0 + k as f64 / 4.0).collect();
    let base = common::spd_with_eigenvalues(&eigenvalues, 11);
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-4.0 + 8.0 * i as f64 / (m - 1) as f64))
        .collect();
    let graded = Matrix::from_fn(m, m, |i, j| d[i] * base[(i, j)] * d[j]);
    let b: Vec<f64> = (0..m).map(|i| d[i] * (1.0 + i as f64)).collect();
    let s = gpu.spd_solve(&graded, &b, SolveOptions::default()).unwrap();
    let x_ref = reference_solve(&graded, &b);
    let e = relative_error_vec(&s.x, &x_ref);
    assert!(e < 1e-10, "graded: forward error {e:.2e}");
}

#[test]
fn least_squares_with_unknowns_in_different_units_is_solved() {
    let gpu = common::gpu();
    use rand::Rng;
    let (m, n) = (6, 40);
    let mut r = rng(5);
    // Row i of A (unknown i) in units 10^(−4 + 8i/(m−1)).
    let a = Matrix::from_fn(m, n, |i, _| {
        (r.random::<f64>() - 0.5) * 10f64.powf(-4.0 + 8.0 * i as f64 / (m - 1) as f64)
    });
    let d: Vec<f64> = (0..n).map(|k| 1.0 + (k % 3) as f64).collect();
    let b: Vec<f64> = (0..n).map(|k| (k as f64 * 0.3).cos()).collect();
    let s = gpu
        .least_squares(&a, &d, &b, SolveOptions::default())
        .unwrap();
    // The reference: C = A·D²·Aᵀ and A·D²·b in f64, solved by the f64 factor.
    let c = Matrix::from_fn(m, m, |i, j| {
        (0..n).map(|k| a[(i, k)] * d[k] * a[(j, k)]).sum()
    });
    let rhs: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|k| a[(i, k)] * d[k] * b[k]).sum())
        .collect();
    let e = relative_error_vec(&s.x, &reference_solve(&c, &rhs));
    assert!(e < 1e-8, "forward error {e:.2e}");
}

#[test]
fn a_graded_spd_inverse_is_refined_to_f64_accuracy() {
    use symraster::InvertOptions;
    let gpu = common::gpu();
    // D·C·D with C of condition 1e3 and D spanning 1e-4..1e4: the equilibrated inverse.
    let m = 24;
    let eigenvalues: Vec<f64> = (0..m)
        .map(|k| 10f64.powf(3.0 * k as f64 / (m - 1) as f64))
        .collect();
    let base = common::spd_with_eigenvalues(&eigenvalues, 13);
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-4.0 + 8.0 * i as f64 / (m - 1) as f64))
        .collect();
    let graded = Matrix::from_fn(m, m, |i, j| d[i] * base[(i, j)] * d[j]);
    let x = gpu.invert(&graded, InvertOptions::spd()).unwrap().x;
    // D⁻¹·C⁻¹·D⁻¹ entry by entry: each within f64's rounding times the condition.
    let l = symraster::reference::cholesky(&base.lower_triangle()).unwrap();
    for j in 0..m {
        let mut e = vec![0.0; m];
        e[j] = 1.0;
        let column = symraster::least_squares::solve_with_factor(&l, &e);
        for i in 0..m {
            let want = column[i] / (d[i] * d[j]);
            let scale = (column[i].abs().max(1e-3)) / (d[i] * d[j]);
            assert!(
                (x[(i, j)] - want).abs() <= 1e-11 * scale,
                "({i},{j}): {} against {want}",
                x[(i, j)]
            );
        }
    }
}

#[test]
fn sign_falls_back_to_f64_where_the_f32_iterate_cannot_be_inverted() {
    let gpu = common::gpu();
    // Eigenvalues spanning twelve decades: beyond what f32 can invert.
    let a = Matrix::from_fn(4, 4, |i, j| {
        if i == j {
            [1e6, -1e-6, 3.0, -2.0][i]
        } else {
            0.0
        }
    });
    let s = gpu.sign(&a, Default::default()).unwrap();
    for (j, want) in [1.0, -1.0, 1.0, -1.0].iter().enumerate() {
        assert!((s.s[(j, j)] - want).abs() < 1e-13, "{j}: {}", s.s[(j, j)]);
    }
    assert!(s.fallback.is_some(), "{s:?}");
    // The same eigenvalues in a rotated basis (Q = I − 2vvᵀ/vᵀv; A's rounding there is about
    // 1e-10, a relative 1e-4 of its smallest eigenvalue), on both iterations: the fallback's
    // S, and its commutation test of that S.
    let v = [1.0, 2.0, 3.0, 4.0];
    let q = Matrix::from_fn(4, 4, |i, j| {
        f64::from(u8::from(i == j)) - 2.0 * v[i] * v[j] / 30.0
    });
    let rotate = |d: [f64; 4]| -> Matrix<f64> {
        Matrix::from_fn(4, 4, |i, j| {
            (0..4).map(|k| q[(i, k)] * d[k] * q[(k, j)]).sum()
        })
    };
    let (a, want) = (
        rotate([1e6, -1e-6, 3.0, -2.0]),
        rotate([1.0, -1.0, 1.0, -1.0]),
    );
    for refine_inverses in [true, false] {
        let options = symraster::inverse::SignOptions {
            refine_inverses,
            ..Default::default()
        };
        let s = gpu.sign(&a, options).unwrap();
        let error = (0..16)
            .map(|k| (s.s[(k / 4, k % 4)] - want[(k / 4, k % 4)]).abs())
            .fold(0.0, f64::max);
        assert!(error < 1e-9, "refined {refine_inverses}: error {error:e}");
        assert!(s.fallback.is_some(), "refined {refine_inverses}: {s:?}");
        assert!(
            s.commutation < 1e-14,
            "refined {refine_inverses}: commutation {:e}",
            s.commutation
        );
    }
}

#[test]
fn spd_solves_near_f64s_smallest_numbers() {
    let gpu = common::gpu();
    // C·1e-310 (subnormal entries): one power of four for all of C would overflow.
    let c = Matrix::from_row_major(2, 2, vec![2e-310, 1e-310, 1e-310, 2e-310]).unwrap();
    let b = [1e-300, 1e-300];
    let s = gpu.spd_solve(&c, &b, SolveOptions::default()).unwrap();
    let want = 1e10 / 3.0;
    for x in &s.x {
        assert!((x - want).abs() < 1e-6 * want, "{:?}", s.x);
    }
}

/// The refined sign iteration hands an f32 inverse too far off to refine (‖I − X·Y‖_F ≥ ½ with
/// every pivot above the tolerance: 0.01·I plus ones above the diagonal, κ about 1e12) to the
/// f64 iteration on the host, which returns sign(A) = I.
#[test]
fn sign_falls_back_where_an_f32_inverse_is_too_far_off_to_refine() {
    let gpu = common::gpu();
    let n = 6;
    let a = Matrix::from_fn(n, n, |i, j| match j {
        _ if j == i => 0.01,
        _ if j == i + 1 => 1.0,
        _ => 0.0,
    });
    let s = gpu.sign(&a, Default::default()).unwrap();
    let why = s.fallback.as_deref().unwrap_or("");
    assert!(why.contains("accurately enough to refine"), "{why}");
    let error = (0..n * n)
        .map(|k| (s.s[(k / n, k % n)] - f64::from(u8::from(k / n == k % n))).abs())
        .fold(0.0, f64::max);
    assert!(error < 1e-12, "error {error:e}");
}
