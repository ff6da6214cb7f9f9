//! Inversion, the sign function and Lyapunov never give a silent wrong answer (issue 23): an
//! inverse whose residual shows it is none is an error or the f64 fallback, every SPD method
//! refuses an indefinite matrix at the same column, and sign/Lyapunov do not depend on A's
//! scale. References in f64: the Hilbert inverse's closed form, eigen-constructed sign
//! functions, the Kronecker-form Lyapunov solve.

use crate::common;

use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use symraster::LyapunovOptions;
use symraster::inverse::{
    self, InverseMethod as Method, InvertOptions, Inverter, Kind, SignOptions, Storage,
};
use symraster::layout::rfp;
use symraster::{Error, Matrix, NumericalError, SymmetricView, relative_error};

fn faer_of(m: &Matrix<f64>) -> Mat<f64> {
    Mat::from_fn(m.rows(), m.cols(), |i, j| m[(i, j)])
}

fn of_faer(m: &Mat<f64>) -> Matrix<f64> {
    Matrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

fn random(n: usize, seed: u64) -> Matrix<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005) | 1;
    Matrix::from_fn(n, n, |_, _| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as f64 / (1u64 << 31) as f64 - 0.5
    })
}

fn binomial(n: i64, k: i64) -> f64 {
    if k < 0 || k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The Hilbert matrix of order n and its exact inverse (integers, closed form).
fn hilbert(n: usize) -> (Matrix<f64>, Matrix<f64>) {
    let h = Matrix::from_fn(n, n, |i, j| 1.0 / (i + j + 1) as f64);
    let m = n as i64;
    let inv = Matrix::from_fn(n, n, |i, j| {
        let (i, j) = (i as i64, j as i64);
        let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
        sign * (i + j + 1) as f64
            * binomial(m + i, m - j - 1)
            * binomial(m + j, m - i - 1)
            * binomial(i + j, i).powi(2)
    });
    (h, inv)
}

/// Every (method, storage) of the SPD inverse.
const SPD_ROUTES: [(Method, Storage); 4] = [
    (Method::Gje, Storage::Full),
    (Method::Cholesky, Storage::Full),
    (Method::Lu, Storage::Full),
    (Method::Cholesky, Storage::Rfp),
];

fn options(storage: Storage) -> InvertOptions {
    InvertOptions {
        storage,
        ..InvertOptions::default()
    }
}

#[test]
fn an_inverse_whose_residual_shows_it_is_none_is_never_a_result() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // κ(H8) ≈ 1.5e10: the f32 inverse is wrong in every digit (its residual was 5.5).
    let n = 8;
    let (h, want) = hilbert(n);
    let kappa = h.frobenius_norm() * want.frobenius_norm();
    for (method, storage) in SPD_ROUTES {
        let what = format!("{method:?} {storage:?}");
        let o = options(storage);
        // The f32 result alone, and the f64 entry without refinement: an error naming why.
        for err in [
            inverse::invert_with(&inv, &h.to_f32(), Kind::Spd, method, o).map(|_| ()),
            gpu.invert(
                &h,
                InvertOptions {
                    kind: Kind::Spd,
                    method,
                    refine_steps: 0,
                    ..o
                },
            )
            .map(|_| ()),
        ] {
            match err {
                Err(Error::Numerical(NumericalError::IllConditioned {
                    precision,
                    residual,
                    ..
                })) => assert!(precision == "single" && residual >= 0.5, "{what}"),
                // A pivot that fails in f32 is an error too (never Ok).
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { .. })) => {}
                other => panic!("{what}: {:?}", other.map(|_| "Ok")),
            }
        }
        // With refinement: the f64 CPU inverse, refined (or, for the Cholesky in full
        // storage, the f64 inverse on the GPU), to f64's accuracy for κ(H8).
        let r = gpu
            .invert(
                &h,
                InvertOptions {
                    kind: Kind::Spd,
                    method,
                    refine_steps: 2,
                    ..o
                },
            )
            .unwrap();
        let in_double = (method, storage) == (Method::Cholesky, Storage::Full);
        assert!(
            r.fallback.is_some() != in_double,
            "{what}: {:?}",
            r.residuals
        );
        let e = relative_error(&r.x, &want);
        let bound = 10.0 * n as f64 * kappa * f64::EPSILON;
        assert!(e < bound, "{what}: error {e}, bound {bound}");
        assert!(*r.residuals.last().unwrap() < 1e-4, "{:?}", r.residuals);
    }
    // A matrix singular in f64 too stays an error with refinement.
    let mut singular = Matrix::from_fn(6, 6, |i, j| ((i * 7 + j * 3) % 5) as f64);
    for i in 0..6 {
        singular[(i, 3)] = singular[(i, 0)] + singular[(i, 1)];
    }
    let err = gpu
        .invert(
            &singular,
            InvertOptions {
                kind: Kind::General,
                method: Method::Gje,
                refine_steps: 2,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Numerical(
                NumericalError::SingularMatrix { .. } | NumericalError::IllConditioned { .. }
            )
        ),
        "{err}"
    );
}

#[test]
fn every_spd_method_refuses_an_indefinite_matrix_at_the_same_column() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // Symmetric, nonsingular, well conditioned, with its first non-positive Cholesky pivot in
    // column 5: LU with partial pivoting inverts it happily, which kind spd must not.
    let n = 11;
    let mut a = Matrix::from_fn(n, n, |i, j| if i == j { 4.0 } else { 0.3 });
    a[(5, 5)] = -2.0;
    let lower = a.to_f32().lower_triangle();
    for (method, storage) in SPD_ROUTES {
        for block in [Some(2), Some(4), None] {
            let o = InvertOptions {
                block,
                storage,
                ..Default::default()
            };
            let what = format!("{method:?} {storage:?} b {block:?}");
            for err in [
                inverse::invert_with(&inv, &lower, Kind::Spd, method, o).map(|_| ()),
                gpu.invert(
                    &a,
                    InvertOptions {
                        kind: Kind::Spd,
                        method,
                        refine_steps: 2,
                        ..o
                    },
                )
                .map(|_| ()),
            ] {
                match err {
                    Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                        column,
                        pivot,
                    })) => assert!(column == 5 && pivot < 0.0, "{what}: {column} {pivot}"),
                    other => panic!("{what}: {:?}", other.map(|_| "Ok")),
                }
            }
        }
    }
    let arf = rfp::from_lower(&lower).unwrap();
    assert!(matches!(
        inverse::invert_rfp(&inv, n, &arf),
        Err(Error::Numerical(NumericalError::NotPositiveDefinite {
            column: 5,
            ..
        }))
    ));
    // The first column itself: column 0.
    let mut b = a.clone();
    b[(5, 5)] = 4.0;
    b[(0, 0)] = -1.0;
    let err = inverse::invert(&inv, &b.to_f32(), Kind::Spd, Method::Lu).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Numerical(NumericalError::NotPositiveDefinite { column: 0, .. })
        ),
        "{err}"
    );
    // An SPD matrix through LU without pivoting still inverts (across blocks), and the
    // indefinite one through the general kind too.
    let spd = Matrix::from_fn(70, 70, |i, j| {
        if i == j {
            4.0
        } else {
            1.0 / (1 + i + j) as f64
        }
    });
    let want = of_faer(&faer_of(&spd).partial_piv_lu().inverse());
    let x = inverse::invert_with_block(&inv, &spd.to_f32(), Kind::Spd, Method::Lu, 16).unwrap();
    assert!(relative_error(&x.to_f64(), &want) < 70.0 * 50.0 * common::U32);
    assert!(inverse::invert(&inv, &a.to_f32(), Kind::General, Method::Lu).is_ok());
}

/// A = V·diag(d)·V⁻¹ and sign(A) = V·diag(sign d)·V⁻¹, nonsymmetric, in f64.
fn eigen_constructed(n: usize, seed: u64) -> (Matrix<f64>, Matrix<f64>) {
    let mut v = faer_of(&random(n, seed));
    for i in 0..n {
        v[(i, i)] += 2.0;
    }
    let vi = v.partial_piv_lu().inverse();
    let d: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                -(0.5 + 0.1 * i as f64)
            } else {
                0.3 + 0.05 * i as f64
            }
        })
        .collect();
    let diag =
        |f: &dyn Fn(f64) -> f64| Mat::from_fn(n, n, |i, j| if i == j { f(d[i]) } else { 0.0 });
    let a = &v * diag(&|x| x) * &vi;
    let s = &v * diag(&f64::signum) * &vi;
    (of_faer(&a), of_faer(&s))
}

#[test]
fn sign_does_not_depend_on_the_scale_of_a() {
    let gpu = common::gpu();
    let n = 24;
    let (a, want) = eigen_constructed(n, 3);
    for refine_inverses in [false, true] {
        let o = SignOptions {
            refine_inverses,
            ..SignOptions::default()
        };
        let base = gpu.sign(&a, o).unwrap();
        let tol = if refine_inverses { 1e-10 } else { 1e-4 };
        let e = relative_error(&base.s, &want);
        assert!(e < tol, "refine {refine_inverses}: error {e}");
        for c in [2f64.powi(63), 2f64.powi(-63), 1e19, 1e-19] {
            let scaled = a.map(|v| v * c);
            let got = gpu
                .sign(&scaled, o)
                .unwrap_or_else(|e| panic!("c {c:e}, refine {refine_inverses}: {e}"));
            let e = relative_error(&got.s, &want);
            assert!(e < tol, "c {c:e}, refine {refine_inverses}: error {e}");
            if c.log2().fract() == 0.0 {
                // A power of two scales exactly: the very same iteration.
                assert_eq!(got.s.as_slice(), base.s.as_slice(), "c {c:e}");
            }
        }
    }
}

#[test]
fn sign_reports_an_honest_error_measure() {
    let gpu = common::gpu();
    // Eigenvalues near the axis relative to the spread: the f32 iteration's S is an involution
    // to f64's precision (‖I − S²‖ tiny) but off from sign(A) by far more.
    let n = 48;
    let (a, want) = eigen_constructed(n, 11);
    let o = SignOptions {
        refine_inverses: false,
        ..SignOptions::default()
    };
    let got = gpu.sign(&a, o).unwrap();
    let e = relative_error(&got.s, &want);
    // f64's floor for ‖I − S²‖_F of a rounded S is about 2ε·‖S‖_F² (1.1e-12 here, ‖S‖_F ≈ 50):
    // the f32 polish correction ends at 1.2e-12, the f64 one happened to reach 3.9e-13.
    let floor = 2.0 * f64::EPSILON * got.s.frobenius_norm().powi(2);
    assert!(
        got.residual < 2.0 * floor,
        "‖I − S²‖ {} (floor {floor:e})",
        got.residual
    );
    assert!(
        e > 1e3 * got.residual,
        "error {e} not above ‖I − S²‖ {}",
        got.residual
    );
    // The commutation residual sees the error ‖I − S²‖ hides.
    assert!(
        got.commutation > 1e-3 * e,
        "commutation {} against error {e}",
        got.commutation
    );
    // The default reaches double accuracy.
    let got = gpu.sign(&a, SignOptions::default()).unwrap();
    let e = relative_error(&got.s, &want);
    assert!(
        e < 1e-10 && got.commutation < 1e-12,
        "default: error {e}, {}",
        got.commutation
    );
}

/// X with A·X + X·Aᵀ = Q by the Kronecker form, in f64.
fn lyapunov_by_kronecker(a: &Matrix<f64>, q: &Matrix<f64>) -> Matrix<f64> {
    let n = a.rows();
    let k = Mat::from_fn(n * n, n * n, |r, c| {
        let (i, j, p, l) = (r % n, r / n, c % n, c / n);
        let mut v = 0.0;
        if j == l {
            v += a[(i, p)];
        }
        if i == p {
            v += a[(j, l)];
        }
        v
    });
    let rhs = Mat::from_fn(n * n, 1, |r, _| q[(r % n, r / n)]);
    let x = k.partial_piv_lu().inverse() * rhs;
    Matrix::from_fn(n, n, |i, j| x[(i + j * n, 0)])
}

#[test]
fn lyapunov_solution_scales_exactly_with_a_and_q() {
    let gpu = common::gpu();
    let n = 9;
    let r = random(n, 21);
    let a = Matrix::from_fn(n, n, |i, j| {
        (if i == j { -3.0 } else { 0.0 }) + 0.5 * (r[(i, j)] - r[(j, i)]) + 0.2 * r[(i, j)]
    });
    let b = random(n, 22);
    let q = of_faer(&(faer_of(&b) * faer_of(&b).transpose()));
    let want = lyapunov_by_kronecker(&a, &q);
    let base = gpu
        .lyapunov(&a, &q, LyapunovOptions { refine_steps: 3 })
        .unwrap();
    assert!(relative_error(&base.x, &want) < 1e-11);
    for k in [63, -63] {
        let c = 2f64.powi(k);
        // A → 2^k·A: X → 2^-k·X, exactly.
        let got = gpu
            .lyapunov(&a.map(|v| v * c), &q, LyapunovOptions { refine_steps: 3 })
            .unwrap_or_else(|e| panic!("A·2^{k}: {e}"));
        assert_eq!(
            got.x.as_slice(),
            base.x.map(|v| v / c).as_slice(),
            "A·2^{k}"
        );
        assert!(relative_error(&got.x, &want.map(|v| v / c)) < 1e-11);
        // Q → 2^k·Q: X → 2^k·X, exactly; both at once cancel.
        let got = gpu
            .lyapunov(&a, &q.map(|v| v * c), LyapunovOptions { refine_steps: 3 })
            .unwrap();
        assert_eq!(
            got.x.as_slice(),
            base.x.map(|v| v * c).as_slice(),
            "Q·2^{k}"
        );
        let both = gpu
            .lyapunov(
                &a.map(|v| v * c),
                &q.map(|v| v * c),
                LyapunovOptions { refine_steps: 3 },
            )
            .unwrap();
        assert_eq!(both.x.as_slice(), base.x.as_slice(), "A, Q·2^{k}");
    }
    // Decimal scales, not exact: to the reference's accuracy.
    for c in [1e19, 1e-19] {
        let got = gpu
            .lyapunov(&a.map(|v| v * c), &q, LyapunovOptions { refine_steps: 3 })
            .unwrap();
        let e = relative_error(&got.x, &want.map(|v| v / c));
        assert!(e < 1e-11, "A·{c:e}: error {e}");
    }
}

/// Inversion, sign and Lyapunov at any scale (issue 41): A beyond float32's range, or with
/// subnormal f64 entries, is scaled by a power of two first and the result scaled back
/// (A⁻¹ by the inverse power, X by Q's over A's, S not at all), matching the unscaled problem;
/// an inverse beyond f64's range once scaled back is an error, never ±inf.
#[test]
fn inversion_sign_and_lyapunov_take_any_scale() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let general =
        Matrix::from_row_major(3, 3, vec![-3.0, 1.0, 0.5, 0.0, 2.0, 1.0, 1.0, 0.0, -4.0]).unwrap();
    let spd =
        Matrix::from_row_major(3, 3, vec![4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]).unwrap();
    let stable =
        Matrix::from_row_major(3, 3, vec![-2.0, 1.0, 0.0, 0.0, -3.0, 1.0, 0.5, 0.0, -1.0]).unwrap();
    let q = Matrix::identity(3);
    let close = |x: &Matrix<f64>, want: &Matrix<f64>, scale: f64, what: &str| {
        let norm = want.max_abs() * scale;
        for (a, b) in x.as_slice().iter().zip(want.as_slice()) {
            assert!(
                (a - b * scale).abs() <= 1e-10 * norm,
                "{what}: {a:e} against {:e}",
                b * scale
            );
        }
    };
    let inv = gpu.invert(&general, InvertOptions::default()).unwrap().x;
    let inv_spd = gpu.invert(&spd, InvertOptions::spd()).unwrap().x;
    let sign = gpu.sign(&general, Default::default()).unwrap().s;
    let x = gpu.lyapunov(&stable, &q, Default::default()).unwrap().x;
    for s in [1e300, 1e39, 1e-39, 1e-300] {
        let what = format!("scale {s:e}");
        let r = gpu
            .invert(&general.map(|v| v * s), InvertOptions::default())
            .unwrap()
            .x;
        close(&r, &inv, 1.0 / s, &format!("{what}: general inverse"));
        let r = gpu
            .invert(&spd.map(|v| v * s), InvertOptions::spd())
            .unwrap()
            .x;
        close(&r, &inv_spd, 1.0 / s, &format!("{what}: SPD inverse"));
        let r = gpu
            .sign(&general.map(|v| v * s), Default::default())
            .unwrap()
            .s;
        close(&r, &sign, 1.0, &format!("{what}: sign"));
        let r = gpu
            .lyapunov(&stable.map(|v| v * s), &q, Default::default())
            .unwrap()
            .x;
        close(&r, &x, 1.0 / s, &format!("{what}: Lyapunov"));
    }
    // Subnormal entries: sign is still sign(A); A⁻¹ (about 1e310) leaves f64's range.
    let tiny = general.map(|v| v * 1e-310);
    close(
        &gpu.sign(&tiny, Default::default()).unwrap().s,
        &sign,
        1.0,
        "subnormal sign",
    );
    match gpu.invert(&tiny, InvertOptions::default()) {
        Err(Error::Numerical(NumericalError::ResultOutOfRange { .. })) => {}
        other => panic!("expected ResultOutOfRange, got {other:?}"),
    }
    // The SPD inverse too, through `invert` and the f64 one itself: its result, scaled back
    // as it is read, is refused where it leaves f64's range, with the entry named.
    let tiny_spd = spd.map(|v| v * 1e-310);
    let double = gpu.spd_inverse_double(SymmetricView::lower(&tiny_spd), Default::default());
    for (route, result) in [
        (
            "invert",
            gpu.invert(&tiny_spd, InvertOptions::spd()).map(|r| r.x),
        ),
        ("spd_inverse_double", double.map(|(x, _)| x)),
    ] {
        match result {
            Err(Error::Numerical(NumericalError::ResultOutOfRange { what, value, .. })) => {
                assert_eq!(what, "A⁻¹", "{route}");
                assert!(!value.is_finite(), "{route}: {value:e}");
            }
            other => panic!("{route}: expected ResultOutOfRange, got {other:?}"),
        }
    }
}

/// The refined general inverse of 2^k·A is 2^-k·A⁻¹ bit for bit, by both methods, whether
/// A's scale is taken as the device narrows it (moderate k: no host copy of A or X) or by a
/// scaled copy on the host (k far out), and right to f64's accuracy.
#[test]
fn general_inverses_scale_exactly_on_either_side_of_the_device_scaling() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let n = 70;
    let mut g = random(n, 41);
    for i in 0..n {
        g[(i, i)] += 4.0;
    }
    let want = of_faer(&faer_of(&g).partial_piv_lu().inverse());
    for method in [Method::Gje, Method::Lu] {
        let opts = InvertOptions {
            method,
            ..InvertOptions::default()
        };
        let base = gpu.invert(&g, opts).unwrap();
        assert!(base.fallback.is_none(), "{method:?}: {:?}", base.fallback);
        let e = relative_error(&base.x, &want);
        assert!(e < 1e-13, "{method:?}: error {e:.2e}");
        for k in [-300, -65, -64, -63, -7, -1, 1, 2, 11, 63, 64, 65, 300] {
            let c = 2f64.powi(k);
            let r = gpu.invert(&g.map(|v| v * c), opts).unwrap();
            let scaled_back = r.x.map(|v| v * c);
            assert!(
                scaled_back
                    .as_slice()
                    .iter()
                    .zip(base.x.as_slice())
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{method:?} 2^{k}: not 2^-k times the inverse of A"
            );
            assert_eq!(r.residuals, base.residuals, "{method:?} 2^{k}: residuals");
        }
    }
}
