//! `Gpu::least_squares` through the f64 factor on the GPU (`SpdFactor::Double`, C = A·D²·Aᵀ
//! assembled in f64 there): against the f32 factor's solve and an f64 reference around the
//! chained launches' tile of 32, at any scale of A, d and b, ill-conditioned, from A by
//! columns, and where C is singular.

use crate::common;
use crate::numerics::graded_problem;
use crate::spd_double::{double, factors_agree, single};

use symraster::least_squares::{
    Fallback, relative_error_vec, solve_normal_equations_faer, solve_normal_equations_reference,
};
use symraster::matrix::MatrixView;
use symraster::problems::{ill_conditioned_least_squares, random_least_squares};
use symraster::{Error, Matrix, NumericalError};

#[test]
fn the_f64_factor_solves_as_the_f32_one_around_the_tile() {
    let gpu = common::gpu();
    for m in [1, 2, 31, 32, 33, 64, 65, 97, 130, 257] {
        let p = random_least_squares(m as u64 + 3, m);
        let x_ref = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
        let d = gpu.least_squares(&p.a, &p.d, &p.b, double()).unwrap();
        let s = gpu.least_squares(&p.a, &p.d, &p.b, single()).unwrap();
        factors_agree(&d, &s, &x_ref, &format!("m {m}"));
        assert!(d.backward_error <= d.tolerance, "m {m}");
    }
}

/// A by 2^k or 10^k, d by 2^j (odd j: C's scaling exponent odd) or 10^j, b by 10^i: x scales
/// as 1/A and with b, and d's scale cancels. (Past C ≈ 10^±300, where 2^e leaves f64's normal
/// range, the f32 factor's path takes over.)
#[test]
fn the_f64_factor_takes_any_scale() {
    let gpu = common::gpu();
    let p = random_least_squares(11, 45);
    let base = gpu.least_squares(&p.a, &p.d, &p.b, double()).unwrap();
    let x_ref = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    assert!(relative_error_vec(&base.x, &x_ref) < 1e-12);
    for (a_scale, d_scale, b_scale) in [
        (1e-150, 1.0, 1.0),
        (2f64.powi(-41), 2.0, 1.0),
        (1.0, 2f64.powi(-77), 1e-200),
        (1e30, 1e-30, 1e250),
        (1e140, 8.0, 1.0),
        (3.0, 1e100, 1e-10),
    ] {
        let a = p.a.map(|v| v * a_scale);
        let d: Vec<f64> = p.d.iter().map(|v| v * d_scale).collect();
        let b: Vec<f64> = p.b.iter().map(|v| v * b_scale).collect();
        let s = gpu.least_squares(&a, &d, &b, double()).unwrap();
        let what = format!("A x {a_scale:e}, d x {d_scale:e}, b x {b_scale:e}");
        assert!(s.converged && s.fallback.is_none(), "{what}: {s:?}");
        let x: Vec<f64> = s.x.iter().map(|v| v * a_scale / b_scale).collect();
        assert!(relative_error_vec(&x, &x_ref) < 1e-12, "{what}");
        let e0: Vec<f64> = s.x0.iter().map(|v| v * a_scale / b_scale).collect();
        assert!(relative_error_vec(&e0, &x_ref) < 1e-10, "{what}: x⁰");
        let ratio = s.condition / base.condition;
        assert!((0.5..2.0).contains(&ratio), "{what}: κ {ratio}");
    }
}

/// The weights over eight decades (section 5.3's ill-conditioned problem) and a C of condition
/// 1e10 (where the f32 factor fails and the CPU takes over): the f64 factor solves both on the
/// GPU, with no fallback.
#[test]
fn the_f64_factor_takes_ill_conditioned_c() {
    let gpu = common::gpu();
    let ill = ill_conditioned_least_squares(21, 64);
    let s = gpu.least_squares(&ill.a, &ill.d, &ill.b, double()).unwrap();
    let x_ref = solve_normal_equations_reference(&ill.a, &ill.d, &ill.b).unwrap();
    assert!(s.converged && s.fallback.is_none(), "{s:?}");
    assert!(relative_error_vec(&s.x, &x_ref) <= 1e-10);

    let (a, d, b, x_true) = graded_problem();
    let s = gpu.least_squares(&a, &d, &b, double()).unwrap();
    assert!(s.converged && s.fallback.is_none(), "{s:?}");
    // κ = 1e10: good to about κ·u ≈ 1e-6.
    assert!(relative_error_vec(&s.x, &x_true) < 1e-4);
    assert!((1e9..1e11).contains(&s.condition), "κ₁ {:.2e}", s.condition);
}

/// A zero tolerance cannot be met: refinement stagnates and the CPU's f64 factor takes over,
/// as from the f32 factor; without the fallback the stop is reported.
#[test]
fn the_f64_factor_stagnates_into_the_fallback() {
    let gpu = common::gpu();
    let p = random_least_squares(81, 40);
    let x_ref = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    let s = gpu
        .least_squares(&p.a, &p.d, &p.b, double().tolerance(0.0))
        .unwrap();
    assert!(
        matches!(s.fallback, Some(Fallback::Stagnated { .. })),
        "{:?}",
        s.fallback
    );
    assert!(relative_error_vec(&s.x, &x_ref) <= 1e-12);
    let s = gpu
        .least_squares(&p.a, &p.d, &p.b, double().tolerance(0.0).fallback(false))
        .unwrap();
    assert!(!s.converged && s.fallback.is_none());
    assert!(relative_error_vec(&s.x, &x_ref) <= 1e-12);
}

/// A row of A repeated (C singular) at the tile's edges: an error that names that row,
/// with the fallback on or off.
#[test]
fn the_f64_factor_reports_a_singular_c() {
    let gpu = common::gpu();
    for (m, row) in [(8, 5), (40, 32), (70, 64)] {
        let mut p = random_least_squares(31, m);
        for k in 0..p.a.cols() {
            p.a[(row, k)] = p.a[(row - 1, k)];
        }
        for fallback in [true, false] {
            match gpu.least_squares(&p.a, &p.d, &p.b, double().fallback(fallback)) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }))
                | Err(Error::Numerical(NumericalError::SingularToDouble { column, .. })) => {
                    assert_eq!(column, row, "m = {m}, fallback {fallback}")
                }
                other => panic!("m = {m}, fallback {fallback}: expected an error, got {other:?}"),
            }
        }
    }
}

/// The caller's X (observations x unknowns, row-major, NaN in the gaps) read as A = Xᵀ, and f32
/// input: the same solution as A row-major in f64.
#[test]
fn the_f64_factor_reads_a_where_it_lies() {
    let gpu = common::gpu();
    let p = random_least_squares(5, 37);
    let (m, n) = p.a.shape();
    let stride = m + 3;
    let mut x = vec![f64::NAN; n * stride];
    for k in 0..n {
        for i in 0..m {
            x[k * stride + i] = p.a[(i, k)];
        }
    }
    let view = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
    let rows = gpu.least_squares(&p.a, &p.d, &p.b, double()).unwrap();
    let columns = gpu.least_squares_view(view, &p.d, &p.b, double()).unwrap();
    assert_eq!(rows.x, columns.x);
    let a32: Matrix<f32> = p.a.map(|v| v as f32);
    let d32: Vec<f32> = p.d.iter().map(|&v| v as f32).collect();
    let b32: Vec<f32> = p.b.iter().map(|&v| v as f32).collect();
    let widened = (a32.map(f64::from), double_vec(&d32), double_vec(&b32));
    let s32 = gpu.least_squares(&a32, &d32, &b32, double()).unwrap();
    let s64 = gpu
        .least_squares(&widened.0, &widened.1, &widened.2, double())
        .unwrap();
    assert_eq!(s32.x, s64.x);
}

fn double_vec(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}
