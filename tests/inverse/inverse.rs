//! Inversion, the sign function and Lyapunov equations on the GPU (Benner et al.) against CPU
//! references in f64: faer's LU inverse, eigendecompositions, a Kronecker-form solve. Sizes
//! tiny to a few hundred, odd and even, across block boundaries; upper triangles of SPD inputs
//! are garbage (never read).

use crate::common;

use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use symraster::InvertOptions;
use symraster::LyapunovOptions;
use symraster::inverse::{self, Handover, InverseMethod as Method, Inverter, Kind};
use symraster::{Error, Matrix, NumericalError, relative_error};

fn inverter(gpu: &symraster::Gpu) -> Inverter {
    Inverter::new(gpu).unwrap()
}

fn random(rows: usize, cols: usize, seed: u64) -> Matrix<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Matrix::from_fn(rows, cols, |_, _| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as f64 / (1u64 << 31) as f64 - 0.5
    })
}

fn faer_of(m: &Matrix<f64>) -> Mat<f64> {
    Mat::from_fn(m.rows(), m.cols(), |i, j| m[(i, j)])
}

fn of_faer(m: &Mat<f64>) -> Matrix<f64> {
    Matrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

fn cpu_inverse(m: &Matrix<f64>) -> Matrix<f64> {
    of_faer(&faer_of(m).partial_piv_lu().inverse())
}

fn matmul(a: &Matrix<f64>, b: &Matrix<f64>) -> Matrix<f64> {
    of_faer(&(faer_of(a) * faer_of(b)))
}

/// How far two runs' f32 iterates may drift apart where one μ_k differs in its last bit:
/// f32 rounding, carried through a few well-conditioned Newton steps.
const F32_DRIFT: f64 = 1e-4;

/// Whether `a` and `b` hold the same bits.
fn same_bits<T: Copy + Into<f64>>(a: &Matrix<T>, b: &Matrix<T>) -> bool {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .all(|(&p, &q)| p.into().to_bits() == q.into().to_bits())
}

/// A well-conditioned SPD matrix: B·Bᵀ/n + I.
fn spd(n: usize, seed: u64) -> Matrix<f64> {
    let b = random(n, n, seed);
    let mut c = matmul(&b, &b.transpose());
    for i in 0..n {
        for j in 0..n {
            c[(i, j)] /= n as f64;
        }
        c[(i, i)] += 1.0;
    }
    c
}

/// A general matrix that needs pivoting: random with a small diagonal, plus a shift that keeps
/// it well conditioned.
fn general(n: usize, seed: u64) -> Matrix<f64> {
    let mut a = random(n, n, seed);
    for i in 0..n {
        a[(i, i)] *= 1e-3;
        a[(i, (i + 1) % n)] += 2.0;
    }
    a
}

/// SPD input with garbage above the diagonal (never read).
fn garbage_above(a: &Matrix<f64>) -> Matrix<f32> {
    Matrix::from_fn(a.rows(), a.cols(), |i, j| {
        if j > i { f32::NAN } else { a[(i, j)] as f32 }
    })
}

/// Relative error of the GPU inverse against the f64 inverse, against κ·u₃₂ with headroom.
fn check(got: &Matrix<f32>, a: &Matrix<f64>, what: &str) {
    let want = cpu_inverse(a);
    let kappa = a.frobenius_norm() * want.frobenius_norm();
    let e = relative_error(&got.to_f64(), &want);
    let bound = 50.0 * kappa * common::U32;
    assert!(e < bound.max(1e-5), "{what}: error {e}, bound {bound}");
}

#[test]
fn spd_inverses_match_the_cpu_across_block_boundaries() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    for n in [1, 2, 3, 17, 64, 65, 130] {
        let a = spd(n, n as u64);
        let a32 = garbage_above(&a);
        for method in [Method::Cholesky, Method::Gje, Method::Lu] {
            for block in [inv.block(), 16] {
                let x = inverse::invert_with_block(&inv, &a32, Kind::Spd, method, block).unwrap();
                check(&x, &a, &format!("spd {method:?} n {n} b {block}"));
            }
        }
    }
}

/// The Cholesky route with its factor by the chained launch (`CholeskySchedule::Chain`, the
/// GPUs' Auto up to order 4096): orders within and across the chain's tiles, garbage above the
/// diagonal; a matrix that is not positive definite is still refused.
#[test]
fn spd_inverses_with_the_chained_cholesky_match_the_cpu() {
    let tuning = symraster::Tuning {
        kernel: symraster::KernelShape::SharedTiles,
        cholesky_schedule: Some(symraster::tiled::schedule::CholeskySchedule::Chain),
        ..symraster::Tuning::default()
    };
    let gpu = symraster::Gpu::builder().tuning(tuning).build().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let inv = inverter(&gpu);
    let chained = inv.tiled().chained_factors();
    for n in [1, 2, 31, 33, 64, 129, 300] {
        let a = spd(n, 11 + n as u64);
        let x = inverse::invert(&inv, &garbage_above(&a), Kind::Spd, Method::Cholesky).unwrap();
        check(&x, &a, &format!("spd Cholesky (chained factor) n {n}"));
    }
    assert!(
        inv.tiled().chained_factors() > chained,
        "the chain never ran"
    );
    let mut bad = spd(40, 3);
    bad[(20, 20)] = -1.0;
    assert!(inverse::invert(&inv, &bad.to_f32(), Kind::Spd, Method::Cholesky).is_err());
}

/// The Cholesky route with the shared-memory tile kernels (the GPUs' default), where the
/// triangular inverse is the diagonal blocks of 128 inverted in one launch and joined by
/// products: orders around one, two and several blocks, odd and even, garbage above the
/// diagonal.
#[test]
fn spd_inverses_by_joined_block_inverses_match_the_cpu() {
    let tuning = symraster::Tuning {
        kernel: symraster::KernelShape::SharedTiles,
        ..symraster::Tuning::default()
    };
    let gpu = symraster::Gpu::builder().tuning(tuning).build().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let inv = inverter(&gpu);
    assert!(inv.tiled().solves_by_inverses());
    for n in [1, 2, 127, 128, 129, 256, 300, 385, 520] {
        let a = spd(n, 7 + n as u64);
        let x = inverse::invert(&inv, &garbage_above(&a), Kind::Spd, Method::Cholesky).unwrap();
        check(&x, &a, &format!("spd Cholesky (joined blocks) n {n}"));
    }
}

#[test]
fn general_inverses_pivot_and_match_the_cpu() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    for n in [1, 2, 3, 5, 33, 64, 97, 200] {
        let a = general(n, 100 + n as u64);
        for method in [Method::Gje, Method::Lu] {
            for block in [inv.block(), 7] {
                let x = inverse::invert_with_block(&inv, &a.to_f32(), Kind::General, method, block)
                    .unwrap();
                check(&x, &a, &format!("general {method:?} n {n} b {block}"));
            }
        }
    }
}

#[test]
fn symmetric_indefinite_goes_through_general_gje() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let n = 40;
    let mut a = spd(n, 9);
    for i in 0..n {
        a[(i, i)] -= 1.5; // eigenvalues on both sides of zero
    }
    let err = inverse::invert(&inv, &a.to_f32(), Kind::Spd, Method::Cholesky).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Numerical(NumericalError::NotPositiveDefinite { .. })
        ),
        "{err}"
    );
    let x = inverse::invert(&inv, &a.to_f32(), Kind::General, Method::Gje).unwrap();
    check(&x, &a, "symmetric indefinite by general GJE");
}

#[test]
fn not_spd_names_the_failing_column() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    // Leading 4x4 block SPD, column 4's pivot negative, for both SPD methods.
    let n = 9;
    let mut a = Matrix::from_fn(n, n, |i, j| if i == j { 4.0 } else { 0.5 });
    a[(4, 4)] = -1.0;
    for method in [Method::Cholesky, Method::Gje] {
        for block in [2, 3, 64] {
            let err = inverse::invert_with_block(&inv, &a, Kind::Spd, method, block).unwrap_err();
            match err {
                Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }) => {
                    assert_eq!(column, 4, "{method:?} b {block}")
                }
                e => panic!("{method:?}: {e}"),
            }
        }
    }
}

#[test]
fn singular_matrices_name_the_pivot_column() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    // Column 3 is the sum of columns 0 and 1: the fourth pivot vanishes.
    let n = 6;
    let mut a = Matrix::from_fn(n, n, |i, j| {
        ((i * 7 + j * 3) % 5) as f32 + if i == j { 4.0 } else { 0.0 }
    });
    for i in 0..n {
        a[(i, 3)] = a[(i, 0)] + a[(i, 1)];
    }
    for method in [Method::Gje, Method::Lu] {
        for block in [2, 64] {
            let err =
                inverse::invert_with_block(&inv, &a, Kind::General, method, block).unwrap_err();
            match err {
                Error::Numerical(NumericalError::SingularMatrix { column, .. }) => {
                    assert_eq!(column, 3, "{method:?} b {block}")
                }
                e => panic!("{method:?}: {e}"),
            }
        }
    }
    let zero = Matrix::filled(3, 3, 0.0f32);
    assert!(matches!(
        inverse::invert(&inv, &zero, Kind::General, Method::Gje),
        Err(Error::Numerical(NumericalError::SingularMatrix {
            column: 0,
            ..
        }))
    ));
}

#[test]
fn bad_input_is_refused() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let kinds = |e: Error| e.kind();
    let rect = Matrix::filled(2, 3, 1.0f32);
    assert_eq!(
        kinds(inverse::invert(&inv, &rect, Kind::General, Method::Gje).unwrap_err()),
        symraster::ErrorKind::Input
    );
    let empty = Matrix::<f32>::zeros(0, 0);
    assert_eq!(
        kinds(inverse::invert(&inv, &empty, Kind::General, Method::Lu).unwrap_err()),
        symraster::ErrorKind::Input
    );
    let mut nan = Matrix::filled(3, 3, 1.0f32);
    nan[(2, 1)] = f32::NAN;
    assert_eq!(
        kinds(inverse::invert(&inv, &nan, Kind::Spd, Method::Gje).unwrap_err()),
        symraster::ErrorKind::Input
    );
    let eye = Matrix::from_fn(3, 3, |i, j| f32::from(u8::from(i == j)));
    assert_eq!(
        kinds(inverse::invert(&inv, &eye, Kind::General, Method::Cholesky).unwrap_err()),
        symraster::ErrorKind::Input
    );
}

#[test]
fn refinement_reaches_double_accuracy_when_conditioning_allows() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let n = 50;
    let a = general(n, 5);
    let x = inverse::invert(&inv, &a.to_f32(), Kind::General, Method::Gje).unwrap();
    let r = inverse::refine_inverse(&a, &x.to_f64(), 4);
    assert!(r.refined, "{:?}", r.residuals);
    let want = cpu_inverse(&a);
    let e0 = relative_error(&x.to_f64(), &want);
    let e = relative_error(&r.x, &want);
    assert!(
        e < 1e-12 && e < 1e-4 * e0,
        "refined error {e} (f32 {e0}), residuals {:?}",
        r.residuals
    );
    // A far too ill-conditioned start is returned unrefined.
    let bad = Matrix::from_fn(n, n, |i, j| 2.0 * f64::from(u8::from(i == j)));
    let r = inverse::refine_inverse(
        &bad,
        &Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j))),
        3,
    );
    assert!(!r.refined);
}

/// sign(A) of a symmetric A from its eigendecomposition: V·sign(Λ)·Vᵀ.
fn sign_by_eigen(a: &Matrix<f64>) -> Matrix<f64> {
    let e = faer_of(a).self_adjoint_eigen(faer::Side::Lower).unwrap();
    let (u, s) = (e.U(), e.S());
    let n = a.rows();
    Matrix::from_fn(n, n, |i, j| {
        (0..n).map(|k| u[(i, k)] * s[k].signum() * u[(j, k)]).sum()
    })
}

#[test]
fn sign_matches_eigendecompositions() {
    let gpu = common::gpu();
    // Symmetric indefinite: spectrum on both sides of zero, kept away from it. From n = 64 the
    // device iteration's passes run in several work groups (4096 entries each).
    for n in [1, 2, 5, 24, 90] {
        let mut a = spd(n, 40 + n as u64);
        for i in 0..n {
            a[(i, i)] -= if i % 2 == 0 { 3.0 } else { 0.0 };
        }
        let want = sign_by_eigen(&a);
        let got = gpu.sign(&a, Default::default()).unwrap();
        let e = relative_error(&got.s, &want);
        assert!(
            e < 1e-5,
            "symmetric n {n}: error {e} ({} iterations)",
            got.iterations
        );
        assert!(got.residual < 1e-13, "not an involution: {}", got.residual);
        let refined = gpu
            .sign(
                &a,
                inverse::SignOptions {
                    refine_inverses: true,
                    ..Default::default()
                },
            )
            .unwrap();
        let e = relative_error(&refined.s, &want);
        assert!(e < 1e-12, "symmetric n {n}, refined inverses: error {e}");
        let plain = gpu
            .sign(
                &a,
                inverse::SignOptions {
                    scaling: false,
                    polish_steps: 0,
                    ..Default::default()
                },
            )
            .unwrap();
        let e = relative_error(&plain.s, &want);
        assert!(e < 1e-4, "unscaled f32 n {n}: error {e}");
        assert!(plain.iterations >= got.iterations);
    }
    // Nonsymmetric: A = V·diag(d)·V⁻¹, sign(A) = V·diag(sign d)·V⁻¹.
    let n = 12;
    let mut v = random(n, n, 77);
    for i in 0..n {
        v[(i, i)] += 2.0;
    }
    let vinv = cpu_inverse(&v);
    let d: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                -(1.0 + i as f64)
            } else {
                0.5 + 0.3 * i as f64
            }
        })
        .collect();
    let diag =
        |f: &dyn Fn(f64) -> f64| Matrix::from_fn(n, n, |i, j| if i == j { f(d[i]) } else { 0.0 });
    let a = matmul(&matmul(&v, &diag(&|x| x)), &vinv);
    let want = matmul(&matmul(&v, &diag(&f64::signum)), &vinv);
    let got = gpu.sign(&a, Default::default()).unwrap();
    let e = relative_error(&got.s, &want);
    assert!(e < 1e-4, "nonsymmetric: error {e}");
    let options = inverse::SignOptions {
        refine_inverses: true,
        ..Default::default()
    };
    let got = gpu.sign(&a, options).unwrap();
    let e = relative_error(&got.s, &want);
    assert!(e < 1e-11, "nonsymmetric, refined inverses: error {e}");
}

#[test]
fn sign_refuses_eigenvalues_on_the_imaginary_axis() {
    let gpu = common::gpu();
    // Eigenvalues ±i (a rotation) beside a stable block; and a singular matrix (eigenvalue 0).
    let mut a = Matrix::from_fn(
        4,
        4,
        |i, j| if i == j { -1.0 } else { 0.1 * (i + j) as f64 },
    );
    a[(0, 0)] = 0.0;
    a[(1, 1)] = 0.0;
    a[(0, 1)] = 1.0;
    a[(1, 0)] = -1.0;
    for i in 0..2 {
        for j in 2..4 {
            a[(i, j)] = 0.0;
        }
    }
    let singular = Matrix::from_fn(3, 3, |i, j| (i + j) as f64);
    for m in [a, singular] {
        let err = gpu.sign(&m, Default::default()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Numerical(NumericalError::SignNotConverged { .. })
            ),
            "{err}"
        );
    }
}

/// X with A·X + X·Aᵀ = Q by the Kronecker form (I⊗A + A⊗I)·vec X = vec Q, in f64.
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

/// A stable, nonsymmetric test matrix: −(SPD) plus a skew part.
fn stable(n: usize, seed: u64) -> Matrix<f64> {
    let s = spd(n, seed);
    let r = random(n, n, seed + 1);
    Matrix::from_fn(n, n, |i, j| -s[(i, j)] + 0.8 * (r[(i, j)] - r[(j, i)]))
}

#[test]
fn lyapunov_matches_scipy_convention_and_the_kronecker_solve() {
    let gpu = common::gpu();
    for n in [1, 2, 7, 16] {
        let a = stable(n, 300 + n as u64);
        let b = random(n, n, 400 + n as u64);
        let q = matmul(&b, &b.transpose());
        let want = lyapunov_by_kronecker(&a, &q);
        let got = gpu
            .lyapunov(&a, &q, LyapunovOptions { refine_steps: 3 })
            .unwrap();
        let e = relative_error(&got.x, &want);
        let r = *got.residuals.last().unwrap();
        assert!(r < 1e-13, "n {n}: residual {:?}", got.residuals);
        assert!(e < 1e-11, "n {n}: error {e} against the Kronecker solve");
        // Without refinement the f32 operator alone: single-precision accuracy.
        let raw = gpu
            .lyapunov(&a, &q, LyapunovOptions { refine_steps: 0 })
            .unwrap();
        assert!(
            raw.residuals[0] < 1e-4,
            "n {n}: f32 residual {:?}",
            raw.residuals
        );
    }
    // Larger than one work group of the device passes (4096 entries), and than two product
    // tiles each way (the symmetric operator's lower-only products on packed panels): the
    // residual only (the Kronecker solve would be of order 4900 and more).
    for n in [70, 300] {
        let (a, b) = (stable(n, 5), random(n, n, 6));
        let q = matmul(&b, &b.transpose());
        let got = gpu
            .lyapunov(&a, &q, LyapunovOptions { refine_steps: 3 })
            .unwrap();
        assert!(
            *got.residuals.last().unwrap() < 1e-13 && got.residuals[0] < 1e-4,
            "n {n}: residuals {:?}",
            got.residuals
        );
    }
    // A nonsymmetric Q is fine too (scipy does not ask for symmetry).
    let (a, q) = (stable(5, 9), random(5, 5, 10));
    let got = gpu
        .lyapunov(&a, &q, LyapunovOptions { refine_steps: 3 })
        .unwrap();
    assert!(relative_error(&got.x, &lyapunov_by_kronecker(&a, &q)) < 1e-11);
}

#[test]
fn lyapunov_refuses_unstable_a_and_bad_shapes() {
    let gpu = common::gpu();
    let n = 6;
    let mut a = stable(n, 3);
    a[(0, 0)] += 10.0; // one eigenvalue pushed into the right half-plane
    let q = Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j)));
    match gpu
        .lyapunov(&a, &q, LyapunovOptions { refine_steps: 1 })
        .unwrap_err()
    {
        Error::Numerical(NumericalError::NotStable {
            unstable, order, ..
        }) => {
            assert_eq!((unstable, order), (1, n))
        }
        e => panic!("{e}"),
    }
    // Past one work group of the stability test's sums (4096 entries): a stable block of
    // order 97 beside the eigenvalues 1, 2 and 3.
    let s97 = stable(97, 4);
    let a = Matrix::from_fn(100, 100, |i, j| match (i < 97, j < 97) {
        (true, true) => s97[(i, j)],
        (false, false) if i == j => (i - 96) as f64,
        _ => 0.0,
    });
    let q = Matrix::from_fn(100, 100, |i, j| f64::from(u8::from(i == j)));
    match gpu
        .lyapunov(&a, &q, LyapunovOptions { refine_steps: 1 })
        .unwrap_err()
    {
        Error::Numerical(NumericalError::NotStable {
            unstable, order, ..
        }) => {
            assert_eq!((unstable, order), (3, 100))
        }
        e => panic!("{e}"),
    }
    // Eigenvalues ±i: on the axis.
    let rot = Matrix::from_fn(2, 2, |i, j| [[0.0, 1.0], [-1.0, 0.0]][i][j]);
    let eye2 = Matrix::from_fn(2, 2, |i, j| f64::from(u8::from(i == j)));
    assert!(matches!(
        gpu.lyapunov(&rot, &eye2, LyapunovOptions { refine_steps: 1 }),
        Err(Error::Numerical(NumericalError::SignNotConverged { .. }))
    ));
    let err = gpu
        .lyapunov(&stable(3, 1), &eye2, LyapunovOptions { refine_steps: 1 })
        .unwrap_err();
    assert_eq!(err.kind(), symraster::ErrorKind::Input);
    // Q is checked while the GPU takes the first inverse: a NaN or an infinity in Q is still
    // Q's input error, before an unstable A is found.
    for n in [5, 130] {
        for (bad, unstable) in [(f64::NAN, false), (f64::INFINITY, true), (f64::NAN, true)] {
            let mut a = stable(n, 2);
            if unstable {
                a[(0, 0)] += 10.0;
            }
            let mut q = Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j)));
            q[(n - 1, 2)] = bad;
            let err = gpu
                .lyapunov(&a, &q, LyapunovOptions { refine_steps: 1 })
                .unwrap_err();
            assert_eq!(err.kind(), symraster::ErrorKind::Input, "{err}");
            assert!(err.to_string().contains("Q"), "{err}");
            assert!(
                err.to_string()
                    .contains(&format!("row {}, column 2", n - 1)),
                "{err}"
            );
        }
    }
}

#[test]
fn timing_entry_runs_every_method_on_a_matrix_it_inverts() {
    use symraster::inverse::bench;
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let s = 40;
    for kind in [Kind::Spd, Kind::General] {
        let a = bench::test_matrix(kind, s);
        let full = if kind == Kind::Spd {
            a.symmetric_from_lower()
        } else {
            a.clone()
        };
        for method in [Method::Gje, Method::Cholesky, Method::Lu] {
            if !method.supports(kind) {
                assert!(bench::time_inverse(&inv, kind, method, s, None, 1).is_err());
                continue;
            }
            let x = inverse::invert(&inv, &a, kind, method).unwrap();
            check(
                &x,
                &full.to_f64(),
                &format!("bench matrix {kind:?} {method:?}"),
            );
            let t = bench::time_inverse(&inv, kind, method, s, Some(16), 1).unwrap();
            assert!(
                t.wall_ms > 0.0 && t.gflops.is_finite() && t.gflops > 0.0 && t.order == s,
                "{t:?}"
            );
        }
    }
    assert_eq!(Kind::General.flops(10), 2000.0);
    assert_eq!(Kind::Spd.flops(10), 1000.0);
}

#[test]
fn f64_entry_refines_spd_and_general() {
    let gpu = common::gpu();
    let a = spd(30, 8);
    let mut lower_only = a.clone();
    for i in 0..30 {
        for j in i + 1..30 {
            lower_only[(i, j)] = 1e30; // never read
        }
    }
    for (m, kind, method) in [
        (&lower_only, Kind::Spd, Method::Cholesky),
        (&a, Kind::General, Method::Lu),
    ] {
        let r = gpu
            .invert(
                m,
                InvertOptions {
                    kind,
                    method,
                    refine_steps: 3,
                    ..Default::default()
                },
            )
            .unwrap();
        let e = relative_error(&r.x, &cpu_inverse(&a));
        // The SPD route runs in f64 on the GPU from the start: nothing to refine.
        let spd = kind == Kind::Spd;
        assert!(
            r.refined != spd && e < 1e-12,
            "{kind:?} {method:?}: {e} {:?}",
            r.residuals
        );
    }
}

/// The general inverses refined without leaving the device (the f32 inverse by Gauss-Jordan or
/// LU, its columns put back, widened and refined there) reach f64's accuracy against faer's f64
/// inverse: nonsymmetric matrices of orders tiny, odd and around the blocks of 32 and 64 and one
/// f32 product tile, and LU in blocks of 256 past one block (as LU's wide blocks run at large
/// orders); the default method (`Auto`, Gauss-Jordan at these orders) gives Gauss-Jordan's bits.
/// A matrix the f32 sweep cannot invert but f64 can goes to the CPU's inverse
/// (Refined::fallback), by either method; one singular in f64 too stays an error.
#[test]
fn general_inverses_refined_on_the_device_reach_f64() {
    let gpu = common::gpu();
    let run = |a: &Matrix<f64>, method, block| {
        let options = InvertOptions {
            method,
            block,
            ..Default::default()
        };
        gpu.invert(a, options).unwrap()
    };
    let cases = [1, 2, 3, 31, 33, 64, 65, 129, 300]
        .into_iter()
        .map(|n| (n, None))
        .chain([(300, Some(256))]);
    for (n, block) in cases {
        let mut a = stable(n, 1500 + n as u64);
        // Off the sign function's test case: shifted, so neither A nor −A is near definite.
        for i in (0..n).step_by(3) {
            a[(i, i)] += 2.5;
        }
        let want = cpu_inverse(&a);
        let methods = if block.is_some() {
            vec![Method::Lu]
        } else {
            vec![Method::Gje, Method::Lu]
        };
        for method in methods {
            let r = run(&a, method, block);
            let e = relative_error(&r.x, &want);
            assert!(
                r.fallback.is_none() && e < 1e-12,
                "n {n} {method:?} block {block:?}: error {e:e}, residuals {:?}, fallback {:?}",
                r.residuals,
                r.fallback
            );
            let (first, last) = (r.residuals[0], *r.residuals.last().unwrap());
            assert!(
                last < 1e-10 && last <= 1e-3 * first,
                "n {n} {method:?}: residuals {:?}",
                r.residuals
            );
        }
        if block.is_none() {
            assert_eq!(Method::Auto.resolve(Kind::General, n), Method::Gje);
            let (auto, gje) = (run(&a, Method::Auto, None), run(&a, Method::Gje, None));
            assert_eq!(auto.x.as_slice(), gje.x.as_slice(), "n {n}");
        }
    }
    // Entries spanning 1e-9..1 on the diagonal: f32's pivots fail, f64's do not.
    let graded = Matrix::from_fn(5, 5, |i, j| match (i, j) {
        _ if i == j => 10f64.powi(-2 * i as i32),
        (0, 4) => 1.0,
        _ => 0.0,
    });
    let singular = Matrix::from_fn(4, 4, |i, j| ((i + 1) * (j + 2)) as f64);
    for method in [Method::Gje, Method::Lu] {
        let r = run(&graded, method, None);
        let e = relative_error(&r.x, &cpu_inverse(&graded));
        assert!(
            r.fallback.is_some() && e < 1e-12,
            "graded, {method:?}: {e:e} {:?}",
            r.fallback
        );
        let options = InvertOptions {
            method,
            ..Default::default()
        };
        match gpu.invert(&singular, options) {
            Err(Error::Numerical(_)) => {}
            other => panic!("singular, {method:?}: {:?}", other.map(|r| r.residuals)),
        }
    }
}

/// Where the refinement's f64 squares exceed one storage buffer (the limit lowered here so that
/// f32 squares fit and f64 ones do not), the f64 inverse is faer's on the CPU, says so and is
/// f64-accurate, general and SPD (its lower triangle read: garbage above); an SPD matrix that is
/// not names its column; without refinement the GPU's f32 inverse still comes back, checked.
#[test]
fn inverses_past_the_f64_buffers_come_from_the_cpu() {
    let gpu = common::gpu();
    let n = 100;
    let inv = inverter(&gpu).with_max_bytes((n * n * 6) as u64);
    let mut g = stable(n, 41);
    for i in (0..n).step_by(3) {
        g[(i, i)] += 2.5;
    }
    let r = inverse::invert_f64(&inv, &g, Kind::General, Method::Auto, 8).unwrap();
    let e = relative_error(&r.x, &cpu_inverse(&g));
    assert!(
        e < 1e-12
            && r.fallback
                .as_deref()
                .is_some_and(|f| f.contains("cannot hold")),
        "general: {e:e} {:?}",
        r.fallback
    );
    let s = spd(n, 42);
    let mut lower = s.clone();
    for i in 0..n {
        for j in i + 1..n {
            lower[(i, j)] = 1e30;
        }
    }
    let r = inverse::invert_f64(&inv, &lower, Kind::Spd, Method::Auto, 8).unwrap();
    let e = relative_error(&r.x, &cpu_inverse(&s));
    assert!(e < 1e-12 && r.fallback.is_some(), "SPD: {e:e}");
    let mut bad = s.clone();
    bad[(5, 5)] = -100.0;
    match inverse::invert_f64(&inv, &bad, Kind::Spd, Method::Auto, 8) {
        Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: 5, .. })) => {}
        other => panic!("not SPD: {:?}", other.map(|r| r.residuals)),
    }
    let r = inverse::invert_f64(&inv, &g, Kind::General, Method::Auto, 0).unwrap();
    let e = relative_error(&r.x, &cpu_inverse(&g));
    assert!(r.fallback.is_none() && e < 1e-4, "f32 alone: {e:e}");
    // The full limit refines on the GPU.
    let r = inverse::invert_f64(&inverter(&gpu), &g, Kind::General, Method::Auto, 8).unwrap();
    assert!(r.fallback.is_none() && r.refined);
}

/// `InverseMethod::Auto` takes Cholesky for SPD matrices, and for general ones Gauss-Jordan up
/// to `AUTO_GJE_MAX_ORDER` and LU above it; the other methods stay as they are.
#[test]
fn auto_method_chooses_by_kind_and_order() {
    use symraster::AUTO_GJE_MAX_ORDER as MAX;
    for n in [1, 64, MAX - 1, MAX, MAX + 1, 4 * MAX] {
        assert_eq!(Method::Auto.resolve(Kind::Spd, n), Method::Cholesky);
        let general = if n <= MAX { Method::Gje } else { Method::Lu };
        assert_eq!(Method::Auto.resolve(Kind::General, n), general, "n {n}");
        for method in [Method::Gje, Method::Lu, Method::Cholesky] {
            for kind in [Kind::Spd, Kind::General] {
                assert_eq!(method.resolve(kind, n), method);
            }
        }
    }
    assert_eq!(InvertOptions::default().method, Method::Auto);
}

/// An inverse's refinement ended after the step from a residual r with r² ≤ ε
/// (`LastStep::Measured`, the general inverse's) against the halving rule run out: the same
/// accuracy, that step's residual formed (it matches ‖I − A·X‖_F formed on the CPU), and a
/// step fewer where the halving rule's last step could not gain. Starts from the f64 inverse
/// rounded to f32 and perturbed (residuals 1e-6 to 1e-3), orders tiny, odd, and past one
/// product tile.
#[test]
fn inverse_refinement_ends_once_the_next_step_reaches_rounding() {
    use symraster::inverse::kernels::double::{DoubleWork, LastStep};
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let mut saved = 0;
    for (n, noise) in [
        (1, 1e-4),
        (7, 1e-3),
        (33, 1e-6),
        (65, 1e-4),
        (129, 1e-5),
        (200, 1e-3),
    ] {
        let mut a = stable(n, 1700 + n as u64);
        for i in (0..n).step_by(3) {
            a[(i, i)] += 2.5;
        }
        let want = cpu_inverse(&a);
        let wiggle = random(n, n, 1800 + n as u64);
        let x0 = Matrix::from_fn(n, n, |i, j| {
            f64::from(want[(i, j)] as f32) * (1.0 + noise * wiggle[(i, j)])
        });
        let run = |last: LastStep| {
            let mut work = DoubleWork::new(&inv, n).unwrap();
            work.m.write(&a).unwrap();
            work.x.write(&x0).unwrap();
            let (residuals, refined) = work.refine_inverse_in_place(&inv, 8, last).unwrap();
            let x = work.x.download().unwrap();
            work.recycle(&inv);
            assert!(refined, "n {n}: {residuals:?}");
            (residuals, x)
        };
        let (rh, xh) = run(LastStep::Halving);
        let (rm, xm) = run(LastStep::Measured(f64::EPSILON));
        let (eh, em) = (relative_error(&xh, &want), relative_error(&xm, &want));
        assert!(
            em < 1e-13 && em <= 2.0 * eh + 1e-15,
            "n {n}: error {em:e} against {eh:e}"
        );
        let last = *rm.last().unwrap();
        let ax = matmul(&a, &xm);
        let host =
            Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j)) - ax[(i, j)]).frobenius_norm();
        assert!(
            (last - host).abs() <= 0.1 * host + 1e-15,
            "n {n}: reported {last:e}, formed on the CPU {host:e}"
        );
        assert!(rm.len() <= rh.len(), "n {n}: {rm:?} against {rh:?}");
        saved += rh.len() - rm.len();
    }
    assert!(saved > 0, "no refinement ended early");
}

/// The polish's correction S·E as an f32 product (the default) against the f64 one it replaces:
/// ‖I − S²‖ as small and the error against the reference as small, on the f32 iteration's S
/// (‖E‖ about 1e-5, where the correction matters) and the refined one; orders tiny, odd, and
/// past one work group of the conversions (16 x 16) and one f32 product tile.
#[test]
fn sign_polish_correction_in_f32_keeps_the_accuracy() {
    use inverse::PolishCorrection;
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let identity = |n: usize, v: f64| Matrix::from_fn(n, n, |i, j| if i == j { v } else { 0.0 });
    // Cases where the f32 correction ran after the f32 iteration (the point of the test).
    let mut polished = 0;
    for n in [1, 2, 3, 17, 64, 65, 130] {
        // Symmetric indefinite (reference: the eigendecomposition) and stable nonnormal
        // (reference: −I).
        let mut sym = spd(n, 700 + n as u64);
        for i in (0..n).step_by(2) {
            sym[(i, i)] -= 3.0;
        }
        let cases = [
            (sym.clone(), sign_by_eigen(&sym)),
            (stable(n, 800 + n as u64), identity(n, -1.0)),
        ];
        for (what, (a, want)) in ["symmetric", "nonnormal"].iter().zip(&cases) {
            for refine_inverses in [false, true] {
                let run = |polish_correction| {
                    let options = inverse::SignOptions {
                        refine_inverses,
                        polish_correction,
                        ..Default::default()
                    };
                    inverse::sign(&inv, a, options).unwrap()
                };
                let (double, single) =
                    (run(PolishCorrection::Double), run(PolishCorrection::Single));
                let (ed, es) = (
                    relative_error(&double.s, want),
                    relative_error(&single.s, want),
                );
                let tag = format!("{what} n {n} refined {refine_inverses}");
                polished += usize::from(single.polish_steps > 0 && !refine_inverses);
                assert!(
                    single.residual < 1e-13,
                    "{tag}: ‖I − S²‖ {:e}",
                    single.residual
                );
                assert!(
                    single.residual
                        <= 4.0 * double.residual + 8.0 * f64::EPSILON * (n as f64).sqrt(),
                    "{tag}: ‖I − S²‖ {:e} against the f64 correction's {:e}",
                    single.residual,
                    double.residual
                );
                assert!(
                    es <= 1.5 * ed + 1e-13,
                    "{tag}: error {es:e} against the f64 correction's {ed:e}"
                );
                assert!(
                    single.commutation <= 1.5 * double.commutation + 1e-13,
                    "{tag}: commutation"
                );
            }
        }
    }
    assert!(polished >= 8, "only {polished} cases polished");
}

/// Squares kept between calls hold the last call's values: a solve must not read them. The
/// kept squares of the order are filled with NaN first; the Lyapunov solve and the sign
/// function then match their references, and a second call gives the same X bit for bit; the
/// general inverses refined on the device, by Gauss-Jordan and by LU, match f64's.
#[test]
fn kept_squares_poisoned_with_nan_do_not_show() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let n = 23;
    let poison = |inv: &Inverter| {
        let doubles: Vec<_> = (0..16)
            .map(|_| inverse::kernels::double::DoubleSquare::new(inv, "poison", n).unwrap())
            .collect();
        let singles: Vec<_> = (0..16)
            .map(|_| inv.single_square("poison", n).unwrap())
            .collect();
        for d in doubles {
            d.buffer.write(0, &vec![f64::NAN; n * n]).unwrap();
            inv.recycle_double(d);
        }
        for s in singles {
            s.buffer.write(0, &vec![f32::NAN; n * n]).unwrap();
            inv.recycle_single(s);
        }
    };
    let (a, b) = (stable(n, 31), random(n, n, 32));
    let q = matmul(&b, &b.transpose());
    let want = lyapunov_by_kronecker(&a, &q);
    poison(&inv);
    let first = inverse::solve_continuous_lyapunov(&inv, &a, &q, 3).unwrap();
    let e = relative_error(&first.x, &want);
    assert!(
        e < 1e-11,
        "error {e} after poisoned squares ({:?})",
        first.residuals
    );
    poison(&inv);
    let second = inverse::solve_continuous_lyapunov(&inv, &a, &q, 3).unwrap();
    assert_eq!(first.x.as_slice(), second.x.as_slice());
    // Nonsymmetric Q (two-product residual), and the sign function, after poisoning again.
    let q = random(n, n, 33);
    poison(&inv);
    let got = inverse::solve_continuous_lyapunov(&inv, &a, &q, 3).unwrap();
    assert!(relative_error(&got.x, &lyapunov_by_kronecker(&a, &q)) < 1e-11);
    let mut sym = spd(n, 34);
    for i in (0..n).step_by(3) {
        sym[(i, i)] -= 3.0;
    }
    for refine_inverses in [false, true] {
        poison(&inv);
        let options = inverse::SignOptions {
            refine_inverses,
            ..Default::default()
        };
        let s = inverse::sign(&inv, &sym, options).unwrap();
        let e = relative_error(&s.s, &sign_by_eigen(&sym));
        assert!(e < 1e-5, "sign, refined {refine_inverses}: error {e}");
        assert!(s.residual < 1e-13);
    }
    // The general inverses refined on the device, their f32 squares (LU's three) kept ones.
    let mut g = stable(n, 35);
    for i in (0..n).step_by(3) {
        g[(i, i)] += 2.5;
    }
    let want = cpu_inverse(&g);
    for method in [Method::Gje, Method::Lu] {
        poison(&inv);
        let r = inverse::invert_f64(&inv, &g, Kind::General, method, 8).unwrap();
        let e = relative_error(&r.x, &want);
        assert!(
            r.fallback.is_none() && e < 1e-12,
            "{method:?} after poisoned squares: error {e:e}"
        );
    }
    inv.release_kept_squares();
}

/// The Newton iteration's one read-back per step ([`NewtonSync::Once`]: column order, μ_k and
/// sums formed on the device) against the three per step (CPU bookkeeping): μ_k within a few
/// units in the last place (the device's f64 square root need not round as the CPU's does;
/// where it does, as on llvmpipe, the inverses and iterates are the same bits), the inverses,
/// iterates and the Lyapunov solver's X within f32 rounding of each other, the same
/// iterations; both reach sign(A) = −I of a stable A; a singular iterate is the same error.
/// Orders tiny, odd, around the blocks of 32 and 64, larger.
#[test]
fn newton_sync_once_matches_per_pass() {
    use symraster::inverse::kernels::NewtonSync;
    use symraster::inverse::newton;
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    for n in [1, 2, 3, 31, 33, 64, 65, 130] {
        let a = stable(n, 900 + n as u64);
        let run = |sync| {
            inv.set_newton_sync(sync);
            let r = newton::iterate(&inv, &a, 20, true, true).unwrap();
            let x = r.x.download().unwrap();
            let inverses: Vec<(f64, Matrix<f32>)> = r
                .inverses
                .iter()
                .map(|(mu, y)| (*mu, y.download().unwrap()))
                .collect();
            (r.iterations, x, inverses)
        };
        let (k_old, x_old, inv_old) = run(NewtonSync::PerPass);
        let (k_new, x_new, inv_new) = run(NewtonSync::Once);
        assert_eq!(k_old, k_new, "n {n}: iterations");
        // Every μ so far the same bits: the iterates so far are too.
        let mut bitwise = true;
        for (k, ((mu_old, y_old), (mu_new, y_new))) in inv_old.iter().zip(&inv_new).enumerate() {
            assert!(
                (mu_old - mu_new).abs() <= 4.0 * f64::EPSILON * mu_old.abs(),
                "n {n}: mu_{k} {mu_old} vs {mu_new}"
            );
            assert!(
                mu_new.is_finite() && *mu_new > 0.0,
                "n {n}: mu_{k} = {mu_new}"
            );
            if bitwise {
                assert!(same_bits(y_old, y_new), "n {n}: inverse {k} differs");
            } else {
                let e = relative_error(&y_new.to_f64(), &y_old.to_f64());
                assert!(e < F32_DRIFT, "n {n}: inverse {k} differs by {e}");
            }
            bitwise &= mu_old.to_bits() == mu_new.to_bits();
        }
        if bitwise {
            assert!(same_bits(&x_old, &x_new), "n {n}: last iterates differ");
        } else {
            let e = relative_error(&x_new.to_f64(), &x_old.to_f64());
            assert!(e < F32_DRIFT, "n {n}: last iterates differ by {e}");
        }
        let minus_i = Matrix::from_fn(n, n, |i, j| if i == j { -1.0 } else { 0.0 });
        let e = relative_error(&x_new.to_f64(), &minus_i);
        assert!(
            e < 1e-4 * (n as f64).sqrt().max(1.0),
            "n {n}: sign error {e}"
        );
        // Lyapunov through the whole solver: the same X.
        let q = Matrix::from_fn(n, n, |i, j| if i == j { 1.0 } else { 0.0 });
        inv.set_newton_sync(NewtonSync::PerPass);
        let l_old = inverse::solve_continuous_lyapunov(&inv, &a, &q, 1).unwrap();
        inv.set_newton_sync(NewtonSync::Once);
        let l_new = inverse::solve_continuous_lyapunov(&inv, &a, &q, 1).unwrap();
        assert_eq!(
            l_old.iterations, l_new.iterations,
            "n {n}: Lyapunov iterations"
        );
        if bitwise {
            assert!(same_bits(&l_old.x, &l_new.x), "n {n}: Lyapunov X differs");
        } else {
            let e = relative_error(&l_new.x, &l_old.x);
            assert!(e < F32_DRIFT, "n {n}: Lyapunov X differs by {e}");
        }
    }
    // A singular iterate (A = 0): the same error from both.
    let zero = Matrix::from_fn(5, 5, |_, _| 0.0);
    let mut messages = Vec::new();
    for sync in [NewtonSync::PerPass, NewtonSync::Once] {
        inv.set_newton_sync(sync);
        match newton::iterate(&inv, &zero, 20, true, false) {
            Err(e @ Error::Numerical(NumericalError::SignNotConverged { .. })) => {
                messages.push(e.to_string())
            }
            Err(e) => panic!("{sync:?}: wrong error {e}"),
            Ok(_) => panic!("{sync:?}: a zero matrix was inverted"),
        }
    }
    assert_eq!(messages[0], messages[1]);
    assert!(
        messages[0].contains("cannot be inverted"),
        "{}",
        messages[0]
    );
}

/// The Newton bookkeeping kernel alone (glsl/inverse/newton_report.comp), against the CPU's
/// forms: sums of more partials than one shared-memory chunk holds bit for bit (both modes,
/// NaN-free values of mixed magnitude), μ = (√Σy²/‖X‖)^½ with and without scaling within a few
/// units in the last place (two f64 square roots on the device) and the coefficients from
/// that μ, the status word passed through, and the column order of random pivots at the
/// largest order it takes.
#[test]
fn newton_report_kernel_matches_the_cpu_forms() {
    use symraster::gl::{Buffer, BufferTarget, BufferUsage};
    use symraster::inverse::kernels::{NEWTON_REPORT_WORDS, NewtonReportBuffers};
    use symraster::inverse::newton::{self, StepReport};
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let ctx = inv.context();
    let storage =
        |data: &[u32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, data).unwrap();
    let r = random(1, 20000, 77);
    for groups in [1, 3, 2731, 8193, 9000] {
        let values: Vec<[f32; 4]> = (0..groups)
            .map(|g| {
                let v = r[(0, g)] as f32;
                [v * v * 1e3, (v + 0.5) * 7.0, v.abs(), f32::NAN]
            })
            .collect();
        let partial =
            Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, &values).unwrap();
        let report = storage(&[0; NEWTON_REPORT_WORDS]);
        let (piv, perm) = (storage(&[0]), storage(&[0]));
        let buffers = NewtonReportBuffers {
            piv: &piv,
            report: &report,
            partial: &partial,
            perm: &perm,
        };
        let (yy, t, m) = values.iter().fold((0.0, 0.0, 0.0f64), |(s, t, m), v| {
            (
                s + f64::from(v[0]),
                t + f64::from(v[1]),
                m.max(f64::from(v[2])),
            )
        });
        for norm in [None, Some(3.25), Some(1e-3)] {
            inv.reset_status().unwrap();
            inv.newton_scale(groups, buffers, norm).unwrap();
            inv.newton_sums(groups, buffers).unwrap();
            let got = StepReport::decode(&report.download().unwrap());
            let mu = norm.map_or(1.0, |x| newton::norm_scaling(yy, x));
            assert_eq!(
                got.yy.to_bits(),
                yy.to_bits(),
                "{groups}: sum y^2 {} vs {yy}",
                got.yy
            );
            assert!(
                (got.mu - mu).abs() <= 4.0 * f64::EPSILON * mu,
                "{groups}: mu {} vs {mu}",
                got.mu
            );
            assert_eq!(
                got.coefficients,
                [(0.5 * got.mu) as f32, (0.5 / got.mu) as f32],
                "{groups}"
            );
            assert_eq!(got.sums.0.to_bits(), yy.to_bits(), "{groups}: first sum");
            assert_eq!(got.sums.1.to_bits(), t.to_bits(), "{groups}: second sum");
            assert_eq!(got.sums.2, m, "{groups}: max");
            assert_eq!(got.failure, None, "{groups}: status");
        }
    }
    for n in [1, 2, 5, 33, inv.newton_max_order()] {
        let r = random(1, n, n as u64);
        let pivots: Vec<u32> = (0..n)
            .map(|p| p as u32 + ((r[(0, p)] + 0.5) * (n - p) as f64) as u32 % (n - p) as u32)
            .collect();
        let piv = storage(&pivots);
        let perm = storage(&vec![u32::MAX; n]);
        let report = storage(&[0; NEWTON_REPORT_WORDS]);
        let partial = Buffer::new(
            ctx,
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            &[[0f32; 4]],
        )
        .unwrap();
        let buffers = NewtonReportBuffers {
            piv: &piv,
            report: &report,
            partial: &partial,
            perm: &perm,
        };
        inv.newton_column_order(n, buffers).unwrap();
        assert_eq!(
            perm.download().unwrap(),
            newton::column_order(&pivots),
            "order {n}"
        );
    }
}

/// The hand-over to the polish (SignOptions::handover; the default on GPUs) reaches the sign that
/// Newton to convergence reaches, as accurately, in no more Newton iterations (fewer where it
/// hands over), on both iterations (f32 on the device, refined on the host); the f32 iteration's
/// Newton-Schulz steps in f32 after the hand-over (SignOptions::schulz_in_f32) leave it as
/// accurate in fewer f64 polish steps; without polish steps there is no hand-over, and a limit
/// outside (0, 1) is refused by name.
#[test]
fn sign_handover_to_the_polish_keeps_the_accuracy() {
    let gpu = common::gpu();
    let inv = inverter(&gpu);
    let identity = |n: usize, v: f64| Matrix::from_fn(n, n, |i, j| if i == j { v } else { 0.0 });
    let (mut handed, mut fewer, mut single) = (0, 0, 0);
    for n in [1, 2, 3, 17, 64, 65, 130] {
        let mut sym = spd(n, 900 + n as u64);
        for i in (0..n).step_by(2) {
            sym[(i, i)] -= 3.0;
        }
        let cases = [
            (sym.clone(), sign_by_eigen(&sym)),
            (stable(n, 1000 + n as u64), identity(n, -1.0)),
        ];
        for (what, (a, want)) in ["symmetric", "nonnormal"].iter().zip(&cases) {
            for refine_inverses in [false, true] {
                let run = |handover, schulz_in_f32| {
                    let options = inverse::SignOptions {
                        refine_inverses,
                        handover,
                        schulz_in_f32,
                        ..Default::default()
                    };
                    inverse::sign(&inv, a, options).unwrap()
                };
                let (newton, hand) = (run(Handover::Off, true), run(Handover::At(0.5), true));
                let (en, eh) = (
                    relative_error(&newton.s, want),
                    relative_error(&hand.s, want),
                );
                let tag = format!("{what} n {n} refined {refine_inverses}");
                assert!(!newton.handed_over, "{tag}: handed over without a limit");
                assert!(hand.iterations <= newton.iterations, "{tag}: iterations");
                handed += usize::from(hand.handed_over);
                fewer += usize::from(hand.iterations < newton.iterations);
                assert!(hand.residual < 1e-13, "{tag}: ‖I − S²‖ {:e}", hand.residual);
                assert!(
                    eh <= 2.0 * en + 1e-13,
                    "{tag}: error {eh:e} against Newton's {en:e}"
                );
                assert!(
                    hand.commutation <= 2.0 * newton.commutation + 1e-13,
                    "{tag}: commutation {:e} against Newton's {:e}",
                    hand.commutation,
                    newton.commutation
                );
                if refine_inverses {
                    assert_eq!(
                        hand.schulz_steps_f32, 0,
                        "{tag}: f32 steps on the refined path"
                    );
                    continue;
                }
                // The f32 Newton-Schulz steps after the hand-over, against the f64 polish from
                // the hand-over: the f32 iteration's accuracy, in no more f64 steps.
                let f64_polish = run(Handover::At(0.5), false);
                assert_eq!(f64_polish.schulz_steps_f32, 0, "{tag}: f32 steps when off");
                if hand.handed_over {
                    single += hand.schulz_steps_f32;
                    assert!(
                        hand.polish_steps <= f64_polish.polish_steps,
                        "{tag}: polish steps {} against {}",
                        hand.polish_steps,
                        f64_polish.polish_steps
                    );
                }
                let ef = relative_error(&f64_polish.s, want);
                assert!(
                    eh <= 2.0 * ef.max(en) + 1e-13,
                    "{tag}: error {eh:e} against the f64 polish's {ef:e}"
                );
            }
        }
    }
    // Every f32 hand-over takes f32 steps (at least one each on most of the 14).
    assert!(single >= 10, "f32 Newton-Schulz steps {single}");
    // 28 cases; all but the two symmetric ones of order 1 hand over, two Newton steps early.
    assert!(
        handed >= 20 && fewer >= 20,
        "handed over {handed}, fewer {fewer}"
    );
    let a = stable(40, 1200);
    // One f64 polish step cannot finish from a hand-over at ½: the Newton iteration resumes
    // (the f32 one from the iterate it handed over, the refined one from the partly polished
    // S, no further from the sign) and S is as accurate as without the hand-over.
    for refine_inverses in [false, true] {
        let one_step = |handover| {
            let options = inverse::SignOptions {
                refine_inverses,
                handover,
                polish_steps: 1,
                schulz_in_f32: false,
                ..Default::default()
            };
            inverse::sign(&inv, &a, options).unwrap()
        };
        let (newton, resumed) = (one_step(Handover::Off), one_step(Handover::At(0.5)));
        let want = identity(40, -1.0);
        let (en, er) = (
            relative_error(&newton.s, &want),
            relative_error(&resumed.s, &want),
        );
        let tag = format!("resumed, refined {refine_inverses}");
        assert!(!resumed.handed_over, "{tag}: one step finished the polish");
        assert_eq!(
            resumed.polish_steps, 2,
            "{tag}: the stalled step and the last"
        );
        if !refine_inverses {
            assert!(resumed.iterations >= newton.iterations, "{tag}: iterations");
        }
        assert!(er <= 2.0 * en + 1e-13, "{tag}: error {er:e} against {en:e}");
        assert!(
            resumed.residual <= 2.0 * newton.residual + 1e-13,
            "{tag}: ‖I − S²‖"
        );
        // With no iterations left to resume, the error counts the ones before the hand-over.
        let handed = inverse::SignOptions {
            refine_inverses,
            handover: Handover::At(0.5),
            schulz_in_f32: false,
            ..Default::default()
        };
        let at = inverse::sign(&inv, &a, handed).unwrap().iterations;
        let no_room = inverse::SignOptions {
            polish_steps: 1,
            max_iterations: at,
            ..handed
        };
        match inverse::sign(&inv, &a, no_room) {
            Err(Error::Numerical(NumericalError::SignNotConverged { iterations, why })) => {
                assert_eq!(iterations, at, "{tag}: {why}");
                assert!(why.contains("resumed after"), "{tag}: {why}");
            }
            other => panic!("{tag}: {other:?}"),
        }
    }
    let unpolished = inverse::SignOptions {
        polish_steps: 0,
        handover: Handover::At(0.5),
        ..Default::default()
    };
    let plain = inverse::sign(&inv, &a, unpolished).unwrap();
    let newton = inverse::SignOptions {
        handover: Handover::Off,
        ..unpolished
    };
    let newton = inverse::sign(&inv, &a, newton).unwrap();
    assert!(!plain.handed_over && plain.polish_steps == 0);
    assert_eq!(
        plain.iterations, newton.iterations,
        "no polish, no hand-over"
    );
    // Auto: off on software renderers, at ½ on GPUs.
    let with = |handover| {
        let options = inverse::SignOptions {
            handover,
            ..Default::default()
        };
        inverse::sign(&inv, &a, options).unwrap()
    };
    let (auto, off, half) = (
        with(Handover::Auto),
        with(Handover::Off),
        with(Handover::At(0.5)),
    );
    assert!(half.handed_over && half.iterations < off.iterations);
    let want = if gpu.info().software { &off } else { &half };
    assert_eq!(
        (auto.iterations, auto.handed_over),
        (want.iterations, want.handed_over),
        "Auto on {}",
        gpu.info().renderer
    );
    for bad in [0.0, 1.0, -0.5, f64::NAN, f64::INFINITY] {
        let options = inverse::SignOptions {
            handover: Handover::At(bad),
            ..Default::default()
        };
        match inverse::sign(&inv, &a, options) {
            Err(Error::Input(e)) => assert!(e.to_string().contains("handover"), "{e}"),
            other => panic!("handover {bad}: {other:?}"),
        }
    }
}
