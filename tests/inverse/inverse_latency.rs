//! Issue 26's latency options of the general inverses' panel (src/inverse/panel.rs:
//! [`ColumnStep`] for the tournament leaves' column steps, [`SplitInverse`] for the
//! Gauss-Jordan panel's inverses, the fused merge of [`PanelSettings::fused_merge`]) against
//! f64 references: the residual ‖A·X − I‖_F relative to ‖A‖_F·‖X‖_F and the forward error, at
//! orders around the leaf (32), block (64) and tournament group widths, with first rounds of
//! 16 rows too (several merge rounds); LAPACK's pivots where one group holds every row;
//! singular matrices refused with their column; workspaces poisoned. llvmpipe has no
//! subgroups, so [`ColumnStep::Combined`] and [`ColumnStep::Broadcast`] run their fallback
//! here (scripts/h200_inverse_latency.sh checks their residuals on the H200).

use crate::common;

use symraster::inverse::kernels::panel::{ColumnStep, PanelSettings, PivotWork, SplitInverse};
use symraster::inverse::{self, DeviceSquare, InverseMethod as Method, Inverter, Kind, lu};
use symraster::{Error, Matrix, NumericalError};

/// Every new choice, each alone and all together (the old ones are the defaults): the column
/// step, the panel's inverses, the fused merge.
const OPTIONS: [(ColumnStep, SplitInverse, bool); 8] = [
    (ColumnStep::Registers, SplitInverse::Columns, false),
    (ColumnStep::Combined, SplitInverse::Columns, false),
    (ColumnStep::Broadcast, SplitInverse::Columns, false),
    (ColumnStep::Shared, SplitInverse::Steps, false),
    (ColumnStep::Shared, SplitInverse::Registers, false),
    (ColumnStep::Shared, SplitInverse::Columns, true),
    (ColumnStep::Broadcast, SplitInverse::Steps, true),
    (ColumnStep::Broadcast, SplitInverse::Registers, true),
];

fn inverter(
    gpu: &symraster::Gpu,
    (step, split, fused_merge): (ColumnStep, SplitInverse, bool),
    chunk: usize,
) -> Inverter {
    Inverter::new(gpu).unwrap().with_panel(PanelSettings {
        chunk_rows: chunk,
        step,
        split,
        fused_merge,
        ..PanelSettings::default()
    })
}

#[test]
fn residuals_for_every_option_across_orders() {
    let gpu = common::gpu();
    for option in OPTIONS {
        let inv = inverter(&gpu, option, 256);
        for n in [1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 129, 200, 513] {
            let a = common::pivoting_general(n, 11 + n as u64);
            let what = format!("{option:?} n {n}");
            common::check_general_inverses(&inv, &a, &what);
            let x = common::gje_with_poisoned_work(&inv, &a, inv.block());
            common::check_inverse(&a, &x, &format!("{what} poisoned"));
        }
    }
}

#[test]
fn several_merge_rounds_for_every_option() {
    let gpu = common::gpu();
    for option in OPTIONS {
        let inv = inverter(&gpu, option, 16);
        for n in [33, 65, 129, 300] {
            common::check_general_inverses(
                &inv,
                &common::pivoting_general(n, 7 + n as u64),
                &format!("{option:?} chunk 16 n {n}"),
            );
        }
    }
}

/// One group over all the leaf's rows is partial pivoting: LAPACK's pivots with the rows in
/// registers too, and P·A = L·U.
#[test]
fn one_group_gives_lapacks_pivots_for_every_option() {
    let gpu = common::gpu();
    for option in OPTIONS {
        let inv = inverter(&gpu, option, 256);
        for (n, block) in [(70, 64), (45, 7), (200, 64)] {
            let a = common::random_square(n, 99 + n as u64);
            let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
            let w = PivotWork::new(&inv, n, block).unwrap();
            inv.reset_status().unwrap();
            lu::factor_in_place(&inv, &d, &w, 0.0).unwrap();
            inv.check_status(0.0).unwrap();
            let got = w.piv.download_range(0, n).unwrap();
            if n <= inv.tournament_rows() {
                assert_eq!(got, common::cpu_pivots(&a), "{option:?} n {n} b {block}");
            }
            let f = d.download().unwrap().to_f64();
            let e = common::lu_error(&a, &f, &got);
            assert!(e < 1e-5, "{option:?} n {n} b {block}: ‖PA − LU‖ {e}");
        }
    }
}

#[test]
fn singular_matrices_are_refused_with_their_column_for_every_option() {
    let gpu = common::gpu();
    for option in OPTIONS {
        for chunk in [16, 256] {
            let inv = inverter(&gpu, option, chunk);
            let n = 130;
            // Column 45 (second leaf) repeats column 2.
            let mut a = common::pivoting_general(n, 3);
            for i in 0..n {
                a[(i, 45)] = a[(i, 2)];
            }
            for method in [Method::Gje, Method::Lu] {
                match inverse::invert(&inv, &a.to_f32(), Kind::General, method) {
                    Err(Error::Numerical(NumericalError::SingularMatrix { column, .. })) => {
                        assert_eq!(column, 45, "{option:?} chunk {chunk} {method:?}")
                    }
                    other => panic!("{option:?} chunk {chunk} {method:?}: {other:?}"),
                }
            }
            let zero = Matrix::filled(40, 40, 0.0f32);
            assert!(
                matches!(
                    inverse::invert(&inv, &zero, Kind::General, Method::Gje),
                    Err(Error::Numerical(NumericalError::SingularMatrix {
                        column: 0,
                        ..
                    }))
                ),
                "{option:?} chunk {chunk}: the zero matrix"
            );
        }
    }
}

/// The sweep with every workspace poisoned first (NaN values, candidate rows all naming row
/// 0): a read of anything the sweep did not write shows in the inverse.
#[test]
fn poisoned_workspaces_do_not_show_for_every_option() {
    let gpu = common::gpu();
    for option in OPTIONS {
        let inv = inverter(&gpu, option, 16);
        for (n, block) in [(257, 64), (150, 40), (100, 100), (63, 64)] {
            let a = common::pivoting_general(n, 21 + n as u64);
            let x = common::gje_with_poisoned_work(&inv, &a, block);
            assert!(
                x.as_slice().iter().all(|v| v.is_finite()),
                "{option:?} n {n} b {block}"
            );
            let r = common::inverse_residual(&a, &x);
            assert!(
                r < common::inverse_residual_bound(n),
                "{option:?} n {n} b {block}: residual {r}"
            );
        }
    }
}

/// The fused merge runs the one-group merge's own steps on the same sets (fused into a first
/// round and into a merge round): the same pivots and the same factors as the merge in its
/// own launch, with each column's largest entry in
/// another group's rows so the winners come from every group.
#[test]
fn fused_merge_chooses_the_merge_launchs_pivots() {
    let gpu = common::gpu();
    for step in [ColumnStep::Shared, ColumnStep::Registers] {
        for (chunk, n, block) in [
            (16, 100, 64),
            (32, 130, 64),
            (128, 300, 64),
            (16, 70, 40),
            (16, 300, 64),
        ] {
            let mut a = common::random_square(n, 5 + n as u64);
            for j in 0..n {
                a[((j * 37 + 11) % n, j)] = 4.0 + (j % 5) as f64;
            }
            let factor = |fused_merge| {
                let inv = inverter(&gpu, (step, SplitInverse::Columns, fused_merge), chunk);
                let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
                let w = PivotWork::new(&inv, n, block).unwrap();
                inv.reset_status().unwrap();
                lu::factor_in_place(&inv, &d, &w, 0.0).unwrap();
                inv.check_status(0.0).unwrap();
                (w.piv.download_range(0, n).unwrap(), d.download().unwrap())
            };
            let (piv, f) = factor(false);
            let (fused_piv, fused_f) = factor(true);
            let what = format!("{step:?} chunk {chunk} n {n} b {block}");
            assert_eq!(fused_piv, piv, "{what}");
            assert_eq!(fused_f.as_slice(), f.as_slice(), "{what}");
            let e = common::lu_error(&a, &fused_f.to_f64(), &fused_piv);
            assert!(e < 1e-5, "{what}: ‖PA − LU‖ {e}");
        }
    }
}
