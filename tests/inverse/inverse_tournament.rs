//! The general inverses with tournament pivoting (CALU; src/inverse/panel.rs, the default)
//! against f64 references: the residual ‖A·X − I‖_F relative to ‖A‖_F·‖X‖_F, with a
//! tolerance growing with the order, at orders around the leaf (32) and tournament-group
//! widths and one of several hundred; first rounds of few rows, so that the tournaments run
//! several merge rounds at these orders; matrices where the pivot choice matters (a zero
//! diagonal, each column's largest entry in another group's rows, ties everywhere); singular
//! matrices refused with their column; workspaces poisoned before the sweep; and the pivots
//! themselves: LAPACK's where one group holds every row, P·A = L·U always.

use crate::common;

use symraster::inverse::kernels::panel::{PanelSettings, PivotWork, Pivoting};
use symraster::inverse::{self, DeviceSquare, InverseMethod as Method, Inverter, Kind, gje, lu};
use symraster::{Error, Matrix, NumericalError, relative_error};

/// The kernels with tournament pivoting whose first round takes `chunk_rows` rows a group.
fn tournament(gpu: &symraster::Gpu, chunk_rows: usize) -> Inverter {
    Inverter::new(gpu).unwrap().with_panel(PanelSettings {
        pivoting: Pivoting::Tournament,
        chunk_rows,
        ..PanelSettings::default()
    })
}

#[test]
fn residuals_across_orders_and_first_rounds() {
    let gpu = common::gpu();
    for chunk in [16, 256] {
        let inv = tournament(&gpu, chunk);
        for n in [1, 2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 700] {
            common::check_general_inverses(
                &inv,
                &common::pivoting_general(n, 11 + n as u64),
                &format!("chunk {chunk} n {n}"),
            );
        }
    }
}

#[test]
fn partial_pivoting_stays_selectable() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap().with_panel(PanelSettings {
        pivoting: Pivoting::Partial,
        ..PanelSettings::default()
    });
    for n in [3, 65, 257] {
        common::check_general_inverses(
            &inv,
            &common::pivoting_general(n, 5 + n as u64),
            &format!("partial n {n}"),
        );
    }
}

/// Matrices whose pivots matter: a zero diagonal, each column's largest entry many groups
/// below its diagonal, and ±1 everywhere (Sylvester's Hadamard matrix: every column ties).
#[test]
fn matrices_where_the_pivots_matter() {
    let gpu = common::gpu();
    let inv = tournament(&gpu, 16);
    for n in [33, 130, 300] {
        let mut zero_diagonal = common::random_square(n, 3 + n as u64);
        for i in 0..n {
            zero_diagonal[(i, i)] = 0.0;
            zero_diagonal[(i, (i + 1) % n)] += 1.0;
        }
        common::check_general_inverses(&inv, &zero_diagonal, &format!("zero diagonal n {n}"));
        // Column j's largest entry in row (j + 5·16 + 3) mod n: another group's rows.
        let mut far = common::random_square(n, 9 + n as u64);
        for j in 0..n {
            far[((j + 83) % n, j)] = 4.0 + (j % 3) as f64;
        }
        common::check_general_inverses(&inv, &far, &format!("far pivots n {n}"));
    }
    for n in [64, 256] {
        let h = Matrix::from_fn(n, n, |i, j| {
            if (i & j).count_ones() % 2 == 0 {
                1.0
            } else {
                -1.0
            }
        });
        common::check_general_inverses(&inv, &h, &format!("Hadamard n {n}"));
        // H⁻¹ = Hᵀ/n exactly.
        let x = inverse::invert(&inv, &h.to_f32(), Kind::General, Method::Gje).unwrap();
        let want = Matrix::from_fn(n, n, |i, j| h[(j, i)] / n as f64);
        let e = relative_error(&x.to_f64(), &want);
        assert!(e < 1e-5, "Hadamard n {n}: error {e}");
    }
}

#[test]
fn singular_matrices_are_refused_with_their_column() {
    let gpu = common::gpu();
    for chunk in [16, 256] {
        let inv = tournament(&gpu, chunk);
        // Column 45 (second leaf) repeats column 2; order 300 spans many groups.
        for n in [70, 300] {
            let mut a = common::pivoting_general(n, 3);
            for i in 0..n {
                a[(i, 45)] = a[(i, 2)];
            }
            for method in [Method::Gje, Method::Lu] {
                match inverse::invert(&inv, &a.to_f32(), Kind::General, method) {
                    Err(Error::Numerical(NumericalError::SingularMatrix { column, .. })) => {
                        assert_eq!(column, 45, "chunk {chunk} n {n} {method:?}")
                    }
                    other => panic!("chunk {chunk} n {n} {method:?}: {other:?}"),
                }
            }
            // A zero row: the last pivot vanishes.
            let mut z = common::pivoting_general(n, 4);
            for j in 0..n {
                z[(n / 2, j)] = 0.0;
            }
            match inverse::invert(&inv, &z.to_f32(), Kind::General, Method::Gje) {
                Err(Error::Numerical(NumericalError::SingularMatrix { column, .. })) => {
                    assert_eq!(column, n - 1, "zero row, chunk {chunk} n {n}")
                }
                other => panic!("zero row, chunk {chunk} n {n}: {other:?}"),
            }
        }
        let zero = Matrix::filled(40, 40, 0.0f32);
        assert!(matches!(
            inverse::invert(&inv, &zero, Kind::General, Method::Gje),
            Err(Error::Numerical(NumericalError::SingularMatrix {
                column: 0,
                ..
            }))
        ));
    }
}

/// The sweep with every workspace poisoned first (NaN values, candidate rows all naming row
/// 0): a read of anything the sweep did not write shows in the inverse.
#[test]
fn poisoned_workspaces_do_not_show() {
    let gpu = common::gpu();
    let inv = tournament(&gpu, 16);
    for (n, block) in [(257, 64), (150, 40), (100, 100)] {
        let a = common::pivoting_general(n, 21 + n as u64);
        let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
        let mut w = PivotWork::new(&inv, n, block).unwrap();
        common::poison_pivot_work(&mut w);
        let tol = inverse::pivot_tolerance(&a.to_f32());
        inv.reset_status().unwrap();
        gje::invert_in_place(&inv, &d, &w, tol).unwrap();
        inv.check_status(tol).unwrap();
        let mut x = d.download().unwrap();
        gje::unscramble_columns(&mut x, &w.piv.download_range(0, n).unwrap());
        assert!(
            x.as_slice().iter().all(|v| v.is_finite()),
            "n {n} b {block}"
        );
        let r = common::inverse_residual(&a, &x);
        assert!(
            r < common::inverse_residual_bound(n),
            "n {n} b {block}: residual {r}"
        );
    }
}

/// One group over all the leaf's rows is partial pivoting: LAPACK's pivots; with groups of 16
/// rows the pivots differ but P·A = L·U holds to single precision.
#[test]
fn tournament_pivots_factor_the_matrix() {
    let gpu = common::gpu();
    for (chunk, n, block) in [(256, 70, 64), (256, 45, 7), (16, 70, 64), (16, 200, 40)] {
        let inv = tournament(&gpu, chunk);
        let a = common::random_square(n, 99 + n as u64);
        let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
        let w = PivotWork::new(&inv, n, block).unwrap();
        inv.reset_status().unwrap();
        lu::factor_in_place(&inv, &d, &w, 0.0).unwrap();
        inv.check_status(0.0).unwrap();
        let got = w.piv.download_range(0, n).unwrap();
        let one_group = n <= inv.tournament_rows().min(chunk);
        if one_group {
            assert_eq!(got, common::cpu_pivots(&a), "chunk {chunk} n {n} b {block}");
        }
        assert!(
            got.iter()
                .enumerate()
                .all(|(q, &r)| r as usize >= q && (r as usize) < n),
            "chunk {chunk} n {n}: {got:?}"
        );
        let f = d.download().unwrap().to_f64();
        let e = common::lu_error(&a, &f, &got);
        assert!(e < 1e-5, "chunk {chunk} n {n} b {block}: ‖PA − LU‖ {e}");
        // Tournament multipliers stay small (|l| ≤ a few; partial pivoting's are ≤ 1).
        let lmax = (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .fold(0.0f64, |m, (i, j)| m.max(f[(i, j)].abs()));
        assert!(lmax < 8.0, "chunk {chunk} n {n}: largest multiplier {lmax}");
    }
}
