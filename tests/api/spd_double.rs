//! `Gpu::spd_solve` through the f64 factor on the GPU (`SpdFactor::Double`): against the f32
//! factor's solve and an f64 reference around the chained launches' tile of 32, from either
//! triangle with garbage in the other, at any scale, ill-conditioned, and its failed pivots.

use crate::common;
use crate::spd_solve::{reference_solve, rhs, spd};

use symraster::least_squares::relative_error_vec;
use symraster::{
    Error, Matrix, NumericalError, Solution, SolveOptions, SpdFactor, SymmetricView, Triangle,
    reference,
};

/// C's `triangle` stored row-major with NaN in the other one.
fn stored(c: &Matrix<f64>, triangle: Triangle) -> Vec<f64> {
    let m = c.rows();
    (0..m * m)
        .map(|p| {
            let (i, j) = (p / m, p % m);
            let kept = match triangle {
                Triangle::Lower => j <= i,
                Triangle::Upper => j >= i,
            };
            if kept { c[(i, j)] } else { f64::NAN }
        })
        .collect()
}

/// The options with the f64 factor.
pub(crate) fn double() -> SolveOptions {
    SolveOptions::new().spd_factor(SpdFactor::Double)
}

/// The options with the f32 factor.
pub(crate) fn single() -> SolveOptions {
    SolveOptions::new().spd_factor(SpdFactor::Single)
}

#[test]
fn the_f64_factor_solves_as_the_f32_one_around_the_tile() {
    let gpu = common::gpu();
    for m in [1, 2, 31, 32, 33, 64, 65, 97, 130, 257] {
        let c = spd(m as u64, m);
        let b = rhs(7 + m as u64, m);
        let x_ref = reference_solve(&c, &b);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let data = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, m, triangle).unwrap();
            let d = gpu.spd_solve_view(view, &b, double()).unwrap();
            let s = gpu.spd_solve_view(view, &b, single()).unwrap();
            factors_agree(&d, &s, &x_ref, &format!("m {m} {triangle:?}"));
            assert!(d.backward_error <= 1e-15 * (m as f64).sqrt().max(1.0));
        }
    }
}

/// The f64 factor's solution `d` and the f32 factor's `s` of one order-m system against its
/// reference `x_ref`: both converged to it, no fallback, the f64 factor's x⁰ accurate before
/// any step where the f32 factor's is not (m > 2), κ₁ estimated within a small factor of each
/// other (LAPACK's estimator).
pub(crate) fn factors_agree(d: &Solution, s: &Solution, x_ref: &[f64], what: &str) {
    let m = x_ref.len();
    assert!(d.converged && d.fallback.is_none(), "{what}: {d:?}");
    let bound = 1e-14 * (m as f64).sqrt().max(1.0) * d.condition;
    assert!(relative_error_vec(&d.x, x_ref) < bound, "{what}");
    assert!(relative_error_vec(&d.x, &s.x) < 2.0 * bound, "{what}");
    let e0 = relative_error_vec(&d.x0, x_ref);
    assert!(e0 < 1e-12 * d.condition, "{what}: x⁰ error {e0:.2e}");
    if m > 2 {
        assert!(relative_error_vec(&s.x0, x_ref) > 1e-10, "{what}");
    }
    let ratio = d.condition / s.condition;
    assert!((0.3..3.0).contains(&ratio), "{what}: κ {ratio}");
}

#[test]
fn the_f64_factor_takes_any_scale_and_ill_conditioned_c() {
    let gpu = common::gpu();
    let m = 70;
    let base = spd(3, m);
    let b = rhs(4, m);
    let x_ref = reference_solve(&base, &b);
    for scale in [1e-300f64, 1e-30, 1.0, 1e40, 1e300] {
        let c = base.map(|v| v * scale);
        let s = gpu.spd_solve(&c, &b, double()).unwrap();
        let x: Vec<f64> = s.x.iter().map(|v| v * scale).collect();
        let e = relative_error_vec(&x, &x_ref);
        assert!(s.converged && e < 1e-13, "scale {scale:e}: error {e:.2e}");
        assert!(
            relative_error_vec(&s.x0.iter().map(|v| v * scale).collect::<Vec<_>>(), &x_ref) < 1e-12
        );
    }
    // κ ≈ 1e10: x to κ·u, and κ₁ estimated near the f32 factor's solve's (which checks past
    // 2/u₃₂ with an f64 factor on the CPU, as this one does).
    let q = reference::cholesky(&base.lower_triangle()).unwrap();
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-10.0 * i as f64 / (m - 1) as f64))
        .collect();
    let c = Matrix::from_fn(m, m, |i, j| {
        (0..m).map(|k| q[(i, k)] * d[k] * q[(j, k)]).sum::<f64>()
    });
    let x_ref = reference_solve(&c, &b);
    let s = gpu.spd_solve(&c, &b, double()).unwrap();
    let e = relative_error_vec(&s.x, &x_ref);
    assert!(s.converged && s.fallback.is_none(), "{s:?}");
    assert!(
        e < 1e-16 * s.condition * 100.0,
        "error {e:.2e}, κ {:.1e}",
        s.condition
    );
    let single = gpu.spd_solve(&c, &b, single()).unwrap();
    let ratio = s.condition / single.condition;
    assert!(
        (0.3..3.0).contains(&ratio),
        "κ {:.2e} against {:.2e}",
        s.condition,
        single.condition
    );
}

#[test]
fn the_f64_factor_names_the_failed_pivot_in_c_units() {
    let gpu = common::gpu();
    let m = 130;
    let base = spd(11, m);
    let b = rhs(12, m);
    for column in [0, 31, 32, 100, 129] {
        for scale in [1.0, 1e-200, 1e200] {
            let mut c = base.clone();
            c[(column, column)] = -1.0;
            let c = c.map(|v| v * scale);
            // The pivot on the host: C(j, j) − Σ L(j, k)² over the columns before j.
            let l = reference::cholesky(&base.lower_triangle()).unwrap();
            let want = (-1.0 - (0..column).map(|k| l[(column, k)].powi(2)).sum::<f64>()) * scale;
            match gpu.spd_solve(&c, &b, double()) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: j, pivot })) => {
                    assert_eq!(j, column, "scale {scale:e}");
                    assert!(
                        (pivot - want).abs() <= 1e-12 * want.abs(),
                        "column {column} scale {scale:e}: pivot {pivot:e}, want {want:e}"
                    );
                }
                other => panic!("column {column} scale {scale:e}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_c_with_exact_zeros_solves_on_both_factors() {
    // Tridiagonal: every entry off the three diagonals an exact zero, which C's copy to factor
    // must keep zero at every scale (ldexp of a double zero is not zero on every driver).
    let gpu = common::gpu();
    for m in [2, 33, 65] {
        for scale in [1.0, 2f64.powi(-40), 2f64.powi(60)] {
            let c = Matrix::from_fn(m, m, |i, j| match i.abs_diff(j) {
                0 => 4.0 * scale,
                1 => -scale,
                _ => 0.0,
            });
            let b = rhs(m as u64, m);
            let x_ref: Vec<f64> = reference_solve(&c.map(|v| v / scale), &b)
                .iter()
                .map(|x| x / scale)
                .collect();
            for options in [double(), single()] {
                let s = gpu.spd_solve(&c, &b, options).unwrap();
                let what = format!("m {m} scale {scale:e} {:?}", options.spd_factor);
                assert!(s.converged && s.fallback.is_none(), "{what}: {s:?}");
                assert!(relative_error_vec(&s.x, &x_ref) < 1e-14, "{what}");
                assert!(s.iterations <= 3, "{what}: {} steps", s.iterations);
            }
            let d = gpu.spd_solve(&c, &b, double()).unwrap();
            assert!(
                relative_error_vec(&d.x0, &x_ref) < 1e-14,
                "m {m} scale {scale:e}"
            );
        }
        // An f32 C, its entries exact in f32 and small (its zeros widened on the GPU, where
        // they must stay zero): x as for its f64 widening, bit for bit.
        let tiny = 2f64.powi(-120);
        let c = Matrix::from_fn(m, m, |i, j| match i.abs_diff(j) {
            0 => 4.0 * tiny,
            1 => -tiny,
            _ => 0.0,
        });
        let c32 = c.map(|v| v as f32);
        let b32: Vec<f32> = rhs(m as u64, m).iter().map(|&v| v as f32).collect();
        let b: Vec<f64> = b32.iter().map(|&v| f64::from(v)).collect();
        for options in [double(), single()] {
            let x = gpu.spd_solve(&c, &b, options).unwrap().x;
            let x32 = gpu.spd_solve(&c32, &b32, options).unwrap().x;
            assert_eq!(x32, x, "m {m} f32 C {:?}", options.spd_factor);
        }
    }
}
