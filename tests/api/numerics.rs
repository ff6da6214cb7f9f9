//! No silent wrong answer in the solves and factorizations (issue 23): right sides of any
//! finite scale, non-finite inputs, singular and ill-conditioned AD²Aᵀ, tiny and huge SPD
//! matrices. Each test compares against an f64 reference or asserts the typed error.

use symraster::internal::GpuInternals;
use symraster::least_squares::{Fallback, relative_error_vec, solve_normal_equations_faer};
use symraster::problems::random_least_squares;
use symraster::{
    Error, Format, Gpu, InputError, Matrix, Method, NumericalError, SolveOptions, SpdFactor,
};

/// Every method this device runs, each with `options`.
fn each_method(gpu: &Gpu, options: SolveOptions) -> Vec<(Method, SolveOptions)> {
    gpu.methods()
        .into_iter()
        .map(|m| (m, options.gpu(options.gpu.method(m))))
        .collect()
}

/// v·2^k, exact wherever the result is normal (2^k itself need not be representable).
fn times_two_to(v: f64, k: i32) -> f64 {
    let half = k / 2;
    v * 2f64.powi(half) * 2f64.powi(k - half)
}

/// b of any finite scale solves, and x scales with b exactly: x(2^k·b) = 2^k·x(b) bit for
/// bit, even where b (1e-310) and x are subnormal.
#[test]
fn right_sides_of_any_scale_solve_and_scale_exactly() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(101, 20);
    let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        let solve = |b: &[f64]| {
            gpu.least_squares(&p.a, &p.d, b, opts)
                .unwrap_or_else(|e| panic!("{method}: {e}"))
        };
        let base = solve(&p.b);
        assert!(base.converged, "{method}");
        assert!(relative_error_vec(&base.x, &x_cpu) < 1e-12, "{method}");
        for k in [130, -200, 1000, -1000] {
            let b: Vec<f64> = p.b.iter().map(|&v| times_two_to(v, k)).collect();
            let s = solve(&b);
            let expected: Vec<f64> = base.x.iter().map(|&v| times_two_to(v, k)).collect();
            assert!(
                s.converged && s.backward_error <= s.tolerance,
                "{method} 2^{k}"
            );
            assert_eq!(s.x, expected, "{method}: x(2^{k}·b) is not 2^{k}·x(b)");
        }
        // b = 1e-310·b₀ (subnormal): the same as solving 2^1074·b and scaling x back.
        let tiny: Vec<f64> = p.b.iter().map(|&v| v * 1e-310).collect();
        let up: Vec<f64> = tiny.iter().map(|&v| times_two_to(v, 1074)).collect();
        let s_tiny = solve(&tiny);
        let s_up = solve(&up);
        let expected: Vec<f64> = s_up.x.iter().map(|&v| times_two_to(v, -1074)).collect();
        assert_eq!(s_tiny.x, expected, "{method}: b of 1e-310");
        let reference: Vec<f64> = x_cpu.iter().map(|v| v * 1e-310).collect();
        assert!(relative_error_vec(&s_tiny.x, &reference) < 1e-9, "{method}");
        assert!(s_tiny.converged, "{method}: b of 1e-310");
        // And b of 1e39 (beyond f32) is no NaN.
        let big: Vec<f64> = p.b.iter().map(|&v| v * 1e39).collect();
        let s = solve(&big);
        let reference: Vec<f64> = x_cpu.iter().map(|v| v * 1e39).collect();
        assert!(
            s.converged && relative_error_vec(&s.x, &reference) < 1e-12,
            "{method}"
        );
    }
}

/// b = 0 gives x = 0 exactly; an x beyond f64's range once scaled back is an error naming
/// the entry, not infinities in an `Ok`.
#[test]
fn zero_right_sides_and_solutions_beyond_double() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(107, 6);
    let mut tiny_a = p.a.clone();
    for v in tiny_a.as_mut_slice() {
        *v *= 1e-160;
    }
    let huge_b: Vec<f64> = p.b.iter().map(|v| v * 1e300).collect();
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        let s = gpu.least_squares(&p.a, &p.d, &[0.0; 12], opts).unwrap();
        assert!(
            s.converged && s.x.iter().all(|&v| v == 0.0),
            "{method}: {:?}",
            s.x
        );
        match gpu.least_squares(&tiny_a, &p.d, &huge_b, opts) {
            Err(e @ Error::Numerical(NumericalError::SolutionOutOfRange { .. })) => {
                assert!(e.to_string().contains("double precision's range"), "{e}")
            }
            other => panic!("{method}: x of about 1e460: {other:?}"),
        }
    }
}

/// NaN or Inf in b is an input error for the solve and for both factors' solves.
#[test]
fn non_finite_right_sides_are_refused() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(102, 8);
    for bad in [f64::NAN, f64::INFINITY] {
        let mut b = p.b.clone();
        b[3] = bad;
        for (method, opts) in each_method(&gpu, SolveOptions::new()) {
            assert!(
                matches!(
                    gpu.least_squares(&p.a, &p.d, &b, opts),
                    Err(Error::Input(InputError::NonFinite { .. }))
                ),
                "{method}: b with {bad}"
            );
        }
    }
    let c = Matrix::from_fn(4, 4, |i, j| if i == j { 2.0f32 } else { 0.5 });
    let l = gpu.cholesky(&c, Format::Full).unwrap();
    let b = [1.0, f32::NAN, 0.0, 2.0];
    assert!(matches!(
        l.solve(&b),
        Err(Error::Input(InputError::NonFinite { .. }))
    ));
    if gpu.info().has_compute() {
        let f = gpu
            .cholesky(
                &c,
                symraster::Options::new(Format::Full).method(symraster::Method::Tiled),
            )
            .unwrap();
        assert!(matches!(
            f.solve(&b),
            Err(Error::Input(InputError::NonFinite { .. }))
        ));
        assert!(
            f.solve(&[1.0f32, 2.0, 3.0, 4.0])
                .unwrap()
                .iter()
                .all(|v| v.is_finite())
        );
    }
}

/// AD²Aᵀ singular by shape (n < m) or weights (fewer than m non-zero d): the typed error,
/// saying why, on every method.
#[test]
fn singular_products_are_refused_up_front() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(103, 12);
    let mut d = p.d.clone();
    for v in d.iter_mut().skip(9) {
        *v = 0.0;
    }
    let wide = Matrix::from_fn(12, 10, |i, j| p.a[(i, j)]);
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        match gpu.least_squares(&p.a, &d, &p.b, opts) {
            Err(e @ Error::Numerical(NumericalError::SingularProduct { nonzero: 9, .. })) => {
                assert!(e.to_string().contains("only 9 of d's 24 entries"), "{e}")
            }
            other => panic!("{method}: 9 non-zero weights, m = 12: {other:?}"),
        }
        match gpu.least_squares(&wide, &p.d[..10], &p.b[..10], opts) {
            Err(e @ Error::Numerical(NumericalError::SingularProduct { m: 12, n: 10, .. })) => {
                assert!(e.to_string().contains("because n < m"), "{e}")
            }
            other => panic!("{method}: n < m: {other:?}"),
        }
    }
}

/// A with a row that is the sum of two others (C singular, not caught by shape or weights):
/// an error on every method, never a solution with a small error bound.
#[test]
fn a_dependent_row_is_an_error() {
    let gpu = Gpu::new().unwrap();
    let mut p = random_least_squares(104, 24);
    for k in 0..p.a.cols() {
        p.a[(10, k)] = p.a[(3, k)] + p.a[(7, k)];
    }
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        match gpu.least_squares(&p.a, &p.d, &p.b, opts) {
            Err(Error::Numerical(
                NumericalError::NotPositiveDefinite { .. }
                | NumericalError::NumericallySingular { .. }
                | NumericalError::SingularToDouble { .. },
            )) => {}
            Ok(s) => panic!(
                "{method}: a singular C solved with condition {:.2e}, forward bound {:.2e}",
                s.condition, s.forward_error_estimate
            ),
            Err(e) => panic!("{method}: {e}"),
        }
    }
}

/// An m x m matrix with orthonormal columns (m ≤ rows), by modified Gram-Schmidt run twice.
fn orthonormal_columns(rng: &mut impl FnMut() -> f64, rows: usize, cols: usize) -> Vec<Vec<f64>> {
    let mut q: Vec<Vec<f64>> = Vec::new();
    for _ in 0..cols {
        let mut v: Vec<f64> = (0..rows).map(|_| rng() - 0.5).collect();
        for _ in 0..2 {
            for u in &q {
                let dot: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
                for (v, u) in v.iter_mut().zip(u) {
                    *v -= dot * u;
                }
            }
        }
        let norm = v.iter().map(|v| v * v).sum::<f64>().sqrt();
        q.push(v.into_iter().map(|v| v / norm).collect());
    }
    q
}

/// A = U·Σ·Vᵀ (m x n) with random orthonormal U, V and singular values from 1 down to
/// 10^-decades/2: C = AAᵀ (d = 1) has condition 10^decades exactly in exact arithmetic.
fn graded(seed: u64, m: usize, n: usize, decades: f64) -> Matrix<f64> {
    let mut state = seed;
    let mut rng = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let u = orthonormal_columns(&mut rng, m, m);
    let v = orthonormal_columns(&mut rng, n, m);
    let sigma: Vec<f64> = (0..m)
        .map(|k| 10f64.powf(-decades / 2.0 * k as f64 / (m - 1) as f64))
        .collect();
    Matrix::from_fn(m, n, |i, j| {
        (0..m).map(|k| u[k][i] * sigma[k] * v[k][j]).sum()
    })
}

/// A (32 x 64, d = 1) whose C = AAᵀ has condition 1e10 and b = Aᵀ·x*: a zero-residual
/// problem whose solution is x*. Returns (A, d, b, x*).
pub(crate) fn graded_problem() -> (Matrix<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let (m, n) = (32, 64);
    let a = graded(105, m, n, 10.0);
    let x_true: Vec<f64> = (0..m).map(|i| 1.0 + (i as f64 * 0.7).sin()).collect();
    let b: Vec<f64> = (0..n)
        .map(|k| (0..m).map(|i| a[(i, k)] * x_true[i]).sum())
        .collect();
    (a, vec![1.0; n], b, x_true)
}

/// Weighted least squares whose C has condition 1e10: the f32 factor fails (not positive
/// definite in single precision), the solve falls back to an f64 factor, says so, and meets
/// the test to f64 accuracy.
#[test]
fn ill_conditioned_spd_falls_back_to_double() {
    let gpu = Gpu::new().unwrap();
    let (a, d, b, x_true) = graded_problem();
    // The f32 factor (the f64 one takes it without a fallback: least_squares_double.rs).
    let single = SolveOptions::new().spd_factor(SpdFactor::Single);
    for (method, opts) in each_method(&gpu, single) {
        let s = gpu
            .least_squares(&a, &d, &b, opts)
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert!(
            matches!(s.fallback, Some(Fallback::SingleFactorFailed { .. })),
            "{method}: {:?}",
            s.fallback
        );
        assert!(s.converged && s.backward_error <= s.tolerance, "{method}");
        let error = relative_error_vec(&s.x, &x_true);
        // κ = 1e10: the f64 solve is good to about κ·u ≈ 1e-6.
        assert!(error < 1e-4, "{method}: error {error:.2e}");
        assert!(
            s.condition > 1e9 && s.condition < 1e12,
            "{method}: condition {:.2e}",
            s.condition
        );
        assert!(s.forward_error_estimate >= error / 10.0, "{method}");
        // Without the fallback the f32 failure is the error.
        assert!(
            gpu.least_squares(&a, &d, &b, opts.fallback(false)).is_err(),
            "{method}"
        );
    }
}

/// A C that is not SPD in f64 either (one weight negative enough) is still an error naming
/// the f64 failing column, with the fallback on.
#[test]
fn indefinite_product_names_its_column_after_the_fallback() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(106, 8);
    let mut a = Matrix::<f64>::zeros(8, 16);
    for i in 0..8 {
        for k in 0..16 {
            a[(i, k)] = p.a[(i, k)];
        }
    }
    // Row 5 alone carries column 15, whose weight is very negative: C(5,5) < 0 in the Schur
    // complement, so column 5 fails in f64 too.
    for i in 0..8 {
        a[(i, 15)] = if i == 5 { 10.0 } else { 0.0 };
    }
    let mut d = p.d[..16].to_vec();
    d[15] = -1.0;
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        match gpu.least_squares(&a, &d, &p.b[..16], opts) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                assert_eq!(column, 5, "{method}");
                assert!(pivot < 0.0, "{method}: pivot {pivot}");
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

/// Tiny and huge SPD matrices factor on every method and format: L = √s·I for s·I, and
/// s·C for an SPD C gives √s·L(C).
#[test]
fn tiny_and_huge_spd_matrices_factor() {
    let gpu = Gpu::new().unwrap();
    let m = 9;
    let base = Matrix::from_fn(m, m, |i, j| {
        if i == j {
            4.0f64
        } else {
            1.0 / (1.0 + (i + j) as f64)
        }
    });
    let l_ref = symraster::reference::cholesky(&base).unwrap();
    for method in gpu.methods() {
        for format in [Format::Full, Format::Packed] {
            let opts = symraster::Options::new(format).method(method);
            for s in [1e-39f64, 1e-30, 1e30] {
                let c = base.map(|v| (v * s) as f32);
                let l = gpu
                    .cholesky(&c, opts)
                    .unwrap_or_else(|e| panic!("{method} {format} {s:e}: {e}"));
                for i in 0..m {
                    for j in 0..=i {
                        let want = l_ref[(i, j)] * s.sqrt();
                        let got = f64::from(l.l().unwrap()[(i, j)]);
                        assert!(
                            (got - want).abs() <= 1e-5 * s.sqrt() * 2.0,
                            "{method} {format} {s:e}: L({i},{j}) = {got:e}, not {want:e}"
                        );
                    }
                }
            }
            // 1e-50·I and 1e60·C exist only in f64: the f64 entry scales before rounding.
            for s in [1e-50f64, 1e60] {
                let c = base.map(|v| v * s);
                let l = gpu
                    .cholesky(&c, opts)
                    .unwrap_or_else(|e| panic!("{method} {format} {s:e}: {e}"));
                let want = l_ref[(m - 1, m - 1)] * s.sqrt();
                let got = f64::from(l.l().unwrap()[(m - 1, m - 1)]);
                assert!((got / want - 1.0).abs() < 1e-5, "{method} {format} {s:e}");
            }
            // The packed, tiled (kept on the GPU) and RFP entries scale too.
            for s in [1e-39f64, 1e30] {
                let c = base.map(|v| (v * s) as f32);
                let check = |l: &Matrix<f32>, what: &str| {
                    for j in 0..m {
                        let want = l_ref[(j, j)] * s.sqrt();
                        let got = f64::from(l[(j, j)]);
                        assert!((got / want - 1.0).abs() < 1e-5, "{what} {s:e}: {got:e}");
                    }
                };
                let packed = symraster::PackedMatrix::from_lower(&c).unwrap();
                check(
                    &gpu.cholesky_packed_raw(&packed).unwrap().to_lower(),
                    "packed raw",
                );
                if gpu.info().has_compute() {
                    let f = gpu
                        .cholesky(
                            &c,
                            symraster::Options::new(format).method(symraster::Method::Tiled),
                        )
                        .unwrap();
                    check(&f.l().unwrap(), "tiled");
                    // C·x = s·1: x = base⁻¹·1, of order 1 at any s.
                    let b = vec![s as f32; m];
                    let x = f.solve(&b).unwrap();
                    let x_ref = symraster::least_squares::solve_with_factor(&l_ref, &vec![1.0; m]);
                    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
                    assert!(relative_error_vec(&x64, &x_ref) < 1e-5, "tiled solve {s:e}");
                    let arf = symraster::rfp::from_lower(&c).unwrap();
                    let f = gpu.cholesky_rfp(m, &arf).unwrap();
                    check(&f.l().unwrap(), "rfp");
                    let l_rfp = symraster::rfp::to_lower(&f.to_rfp().unwrap()).unwrap();
                    check(&l_rfp, "rfp download");
                }
            }
            // An L outside f32's range is the range error.
            let c = base.map(|v| v * 1e-90);
            assert!(
                matches!(
                    gpu.cholesky(&c, opts),
                    Err(Error::Numerical(NumericalError::OutOfRange { .. }))
                ),
                "{method} {format}"
            );
        }
    }
}

/// An indefinite C names its true first failing column with a finite, non-positive pivot, at
/// any scale, on every method and format.
#[test]
fn indefinite_matrices_name_the_right_column() {
    let gpu = Gpu::new().unwrap();
    let m = 10;
    for method in gpu.methods() {
        for format in [Format::Full, Format::Packed] {
            let opts = symraster::Options::new(format).method(method);
            for s in [1e-39f32, 1.0, 1e30] {
                let mut c = Matrix::from_fn(m, m, |i, j| if i == j { 2.0 * s } else { 0.0 });
                c[(6, 6)] = -s;
                match gpu.cholesky(&c, opts) {
                    Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                        column,
                        pivot,
                    })) => {
                        assert_eq!(column, 6, "{method} {format} {s:e}");
                        assert!(
                            pivot <= 0.0 && pivot.is_finite(),
                            "{method} {format} {s:e}: pivot {pivot}"
                        );
                    }
                    other => panic!("{method} {format} {s:e}: {other:?}"),
                }
            }
            // A diagonal spread beyond f32's normal range is SPD and its L fits f32: each row
            // and column is scaled by its own power of two (dpoequ) before the f32 factor.
            let mut c = Matrix::from_fn(m, m, |i, j| if i == j { 1.0f32 } else { 0.0 });
            c[(3, 3)] = 1e-39;
            match gpu.cholesky(&c, opts).and_then(|l| l.l()) {
                Ok(l) => {
                    let want = 1e-39f64.sqrt();
                    let got = f64::from(l[(3, 3)]);
                    assert!(
                        (got - want).abs() < 1e-5 * want,
                        "{method} {format}: {got:e}"
                    );
                    assert_eq!(l[(0, 0)], 1.0, "{method} {format}");
                }
                other => panic!("{method} {format}: {other:?}"),
            }
        }
    }
}
