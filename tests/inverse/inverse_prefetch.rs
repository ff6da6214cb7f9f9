//! Issue 26's second latency option of the general inverses' panel (src/inverse/panel.rs:
//! [`PanelSettings::prefetch`], the leaf kernels' loads issued together before their serial
//! sums) against f64 references: residual and forward error at orders around the leaf (32), block
//! (64) and tournament group widths, with first rounds of 16 rows too (merge rounds, the
//! pending product in every round); NaN-poisoned workspaces; singular matrices refused with
//! their column; the same pivots and (to rounding) the same factors as the plain kernels.

use crate::common;

use symraster::inverse::kernels::panel::{ColumnStep, PanelSettings};
use symraster::inverse::{self, InverseMethod as Method, Inverter, Kind};
use symraster::{Error, NumericalError};

/// (prefetch, column step, fused merge): the prefetch off and on, on both column-step paths
/// (their pending products differ) and with the merge unfused.
const OPTIONS: [(bool, ColumnStep, bool); 4] = [
    (true, ColumnStep::Shared, true),
    (false, ColumnStep::Shared, true),
    (true, ColumnStep::Registers, true),
    (true, ColumnStep::Shared, false),
];

fn inverter(
    gpu: &symraster::Gpu,
    (prefetch, step, fused_merge): (bool, ColumnStep, bool),
    chunk: usize,
) -> Inverter {
    Inverter::new(gpu).unwrap().with_panel(PanelSettings {
        chunk_rows: chunk,
        step,
        fused_merge,
        prefetch,
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
            common::check_general_inverses(&inv, &a, &format!("{option:?} n {n}"));
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

/// Every workspace poisoned first: a read of anything the sweep did not write shows.
#[test]
fn poisoned_workspaces_do_not_show_for_every_option() {
    let gpu = common::gpu();
    for option in OPTIONS {
        for chunk in [16, 256] {
            let inv = inverter(&gpu, option, chunk);
            for (n, block) in [(257, 64), (150, 40), (100, 100), (63, 64), (130, 48)] {
                let a = common::pivoting_general(n, 21 + n as u64);
                let what = format!("{option:?} chunk {chunk} n {n} b {block}");
                let x = common::gje_with_poisoned_work(&inv, &a, block);
                common::check_inverse(&a, &x, &what);
            }
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
            // Column 45 (second leaf: its rows read with the first leaf's product pending)
            // repeats column 2.
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
        }
    }
}

/// Each column's largest entry well apart from the rest (no near-ties): the new options
/// choose the plain kernels' pivots and give their factors to rounding (the pending product
/// is summed in another order), with P·A = L·U.
#[test]
fn same_pivots_and_factors_as_the_plain_kernels() {
    let gpu = common::gpu();
    for (chunk, n, block) in [(16, 100, 64), (256, 130, 64), (32, 300, 64), (16, 70, 40)] {
        let mut a = common::random_square(n, 5 + n as u64);
        for j in 0..n {
            a[((j * 37 + 11) % n, j)] = 4.0 + (j % 5) as f64;
        }
        let factor = |option| common::lu_factor(&inverter(&gpu, option, chunk), &a, block, false);
        for step in [ColumnStep::Shared, ColumnStep::Registers] {
            let plain = (false, step, true);
            let want = factor(plain);
            for option in OPTIONS.into_iter().filter(|&o| o.1 == step && o != plain) {
                let what = format!("{option:?} chunk {chunk} n {n} b {block}");
                common::assert_same_lu(&a, &want, &factor(option), &what);
            }
        }
    }
}
