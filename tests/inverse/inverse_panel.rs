//! The general inverses' pivoted panel (src/inverse/panel.rs: leaves of 32 columns, tournament
//! pivoting by default) against f64 CPU references: the inverse of matrices whose order and
//! block size fall around the leaf width, LAPACK's pivot sequence (row q swapped with piv\[q\]
//! at step q) from `Pivoting::Partial` (one dispatch per column) against a plain
//! partial-pivoting LU in f64, and the singular column found inside a later leaf. Tournament
//! pivoting's own tests: tests/inverse_tournament.rs.

use crate::common;

use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use symraster::inverse::kernels::panel::{LEAF, PivotWork, Pivoting};
use symraster::inverse::{self, DeviceSquare, InverseMethod as Method, Inverter, Kind, lu};
use symraster::{Error, Matrix, NumericalError, relative_error};

fn cpu_inverse(a: &Matrix<f64>) -> Matrix<f64> {
    let m = Mat::from_fn(a.rows(), a.cols(), |i, j| a[(i, j)]);
    let x = m.partial_piv_lu().inverse();
    Matrix::from_fn(a.rows(), a.cols(), |i, j| x[(i, j)])
}

#[test]
fn inverses_around_the_leaf_width_match_the_cpu() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    assert_eq!(LEAF, 32);
    for n in [31, 32, 33, 63, 65, 96, 130] {
        let a = common::pivoting_general(n, 7 + n as u64);
        let want = cpu_inverse(&a);
        let kappa = a.frobenius_norm() * want.frobenius_norm();
        for method in [Method::Gje, Method::Lu] {
            for block in [1, 16, 32, 33, 40, 64, 100] {
                let x = inverse::invert_with_block(&inv, &a.to_f32(), Kind::General, method, block)
                    .unwrap();
                let e = relative_error(&x.to_f64(), &want);
                let bound = (50.0 * kappa * common::U32).max(1e-5);
                assert!(
                    e < bound,
                    "{method:?} n {n} b {block}: error {e}, bound {bound}"
                );
            }
        }
    }
}

#[test]
fn pivots_are_lapacks_partial_pivoting() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for (n, block) in [(70, 64), (70, 40), (45, 7)] {
        let a = common::random_square(n, 99 + n as u64);
        let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
        let mut w = PivotWork::new(&inv, n, block).unwrap();
        w.pivots = Pivoting::Partial;
        inv.reset_status().unwrap();
        lu::factor_in_place(&inv, &d, &w, 0.0).unwrap();
        inv.check_status(0.0).unwrap();
        let got = w.piv.download_range(0, n).unwrap();
        assert_eq!(got, common::cpu_pivots(&a), "n {n} b {block}");
        // The factors: P·A = L·U to single precision.
        let f = d.download().unwrap().to_f64();
        let e = common::lu_error(&a, &f, &got);
        assert!(e < 1e-5, "n {n} b {block}: ‖PA − LU‖ {e}");
    }
}

#[test]
fn a_singular_column_inside_a_later_leaf_is_named() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // Column 45 (in the second leaf) repeats column 2.
    let n = 70;
    let mut a = common::pivoting_general(n, 3);
    for i in 0..n {
        a[(i, 45)] = a[(i, 2)];
    }
    for method in [Method::Gje, Method::Lu] {
        for block in [64, 16] {
            match inverse::invert_with_block(&inv, &a.to_f32(), Kind::General, method, block) {
                Err(Error::Numerical(NumericalError::SingularMatrix { column, .. })) => {
                    assert_eq!(column, 45, "{method:?} b {block}")
                }
                other => panic!("{method:?} b {block}: {other:?}"),
            }
        }
    }
}

#[test]
fn double_products_match_the_cpu_across_tiles_and_depth_launches() {
    use symraster::inverse::kernels::double::{DoubleProduct, DoubleSquare};
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // 600: ten 64 x 64 tiles a side (the depth cut into launches: tests/dgemm.rs).
    for n in [1, 5, 64, 65, 600] {
        let (a, b, d) = (
            common::random_square(n, 1),
            common::random_square(n, 2),
            common::random_square(n, 3),
        );
        let up = |m: &Matrix<f64>| DoubleSquare::upload(&inv, "a test matrix", m).unwrap();
        let (ga, gb, gd) = (up(&a), up(&b), up(&d));
        let c = DoubleSquare::new(&inv, "the product", n).unwrap();
        c.write(&Matrix::filled(n, n, f64::NAN)).unwrap();
        // C = −2·A·Bᵀ + 0.5·D + 3·I, and ‖C‖_F².
        let p = DoubleProduct::new(c.op(false), ga.op(false), gb.op(true))
            .alpha(-2.0)
            .plus(0.5, gd.op(false))
            .plus_identity(3.0);
        let sum = inv.dgemm(p, true).unwrap();
        let want = Matrix::from_fn(n, n, |i, j| {
            let dot: f64 = (0..n).map(|k| a[(i, k)] * b[(j, k)]).sum();
            -2.0 * dot + 0.5 * d[(i, j)] + if i == j { 3.0 } else { 0.0 }
        });
        let got = c.download().unwrap();
        let e = relative_error(&got, &want);
        assert!(e < 1e-14, "n {n}: error {e}");
        let norm2 = want.frobenius_norm().powi(2);
        assert!(
            (sum - norm2).abs() <= 1e-12 * norm2,
            "n {n}: Σ C² {sum} against {norm2}"
        );
    }
}
