//! The general inverses with look-ahead (src/inverse/gje.rs and lu.rs,
//! [`PanelSettings::look_ahead`]: each panel factored beside the previous block's update of
//! the other columns in bands of rows; its interchanges on those columns after it, glsl/inverse/interchange.comp) against f64 references and against
//! the sweeps without it: orders around the leaf (32), block (64) and tile (64) widths, blocks
//! of 32, 40 and 64, first rounds of 16 rows (merge rounds: more launches per panel, so more
//! slots beside them); NaN-poisoned workspaces; singular matrices refused with their column;
//! the same pivots.

use crate::common;

use symraster::inverse::kernels::panel::{LookAhead, PanelSettings};
use symraster::inverse::{self, InverseMethod as Method, Inverter, Kind};
use symraster::{Error, NumericalError};

fn inverter(gpu: &symraster::Gpu, look_ahead: LookAhead, chunk: usize) -> Inverter {
    Inverter::new(gpu).unwrap().with_panel(PanelSettings {
        chunk_rows: chunk,
        look_ahead,
        ..PanelSettings::default()
    })
}

#[test]
fn residuals_and_forward_errors_across_orders_and_blocks() {
    let gpu = common::gpu();
    for (mode, chunk) in MODES.into_iter().flat_map(|m| [(m, 16), (m, 256)]) {
        let inv = inverter(&gpu, mode, chunk);
        for (n, block) in [
            (33, 32),
            (65, 32),
            (97, 32),
            (129, 64),
            (130, 40),
            (191, 64),
            (257, 64),
            (300, 32),
        ] {
            let a = common::pivoting_general(n, 31 + n as u64);
            let what = format!("{mode:?} chunk {chunk} n {n} b {block}");
            let (x, _) = common::gje_with_poisoned_work_and_pivots(&inv, &a, block);
            common::check_inverse(&a, &x, &what);
            // Both methods (LU too) through the public entry at its default blocks.
            common::check_general_inverses(&inv, &a, &what);
        }
    }
}

/// The look-ahead at every order (`Auto` takes it from 4096 on only).
const MODES: [LookAhead; 1] = [LookAhead::Always];

/// The public entry at its default blocks (32 up to order 1024) with and without look-ahead.
#[test]
fn the_public_inverse_with_and_without_look_ahead() {
    let gpu = common::gpu();
    for look_ahead in LookAhead::ALL {
        let inv = inverter(&gpu, look_ahead, 256);
        for n in [1, 2, 31, 32, 33, 64, 65, 100, 161] {
            let a = common::pivoting_general(n, 5 + n as u64);
            common::check_general_inverses(&inv, &a, &format!("{look_ahead:?} n {n}"));
        }
    }
}

/// Each column's largest entry well apart from the rest (no near-ties): the same pivots as
/// without look-ahead, and the same inverse to rounding.
#[test]
fn same_pivots_and_inverse_as_without_look_ahead() {
    let gpu = common::gpu();
    for (chunk, n, block) in [(16, 150, 64), (256, 130, 32), (256, 200, 64), (16, 97, 40)] {
        let mut a = common::random_square(n, 9 + n as u64);
        for j in 0..n {
            a[((j * 37 + 11) % n, j)] = 4.0 + (j % 5) as f64;
        }
        let plain = inverter(&gpu, LookAhead::Off, chunk);
        let (x0, piv0) = common::gje_with_poisoned_work_and_pivots(&plain, &a, block);
        let scale = x0.as_slice().iter().fold(1.0f32, |m, v| m.max(v.abs()));
        for mode in MODES {
            let what = format!("{mode:?} chunk {chunk} n {n} b {block}");
            let inv = inverter(&gpu, mode, chunk);
            let (x1, piv1) = common::gje_with_poisoned_work_and_pivots(&inv, &a, block);
            assert_eq!(piv1, piv0, "{what}");
            let diff = x1
                .as_slice()
                .iter()
                .zip(x0.as_slice())
                .fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
            assert!(diff <= 1e-4 * scale, "{what}: inverses differ by {diff}");
        }
    }
}

/// The LU factorization with and without look-ahead (poisoned workspaces): the same pivots
/// and factors to rounding, P·A = L·U.
#[test]
fn lu_same_pivots_and_factors_as_without_look_ahead() {
    let gpu = common::gpu();
    for (chunk, n, block) in [(16, 150, 64), (256, 130, 32), (256, 200, 64), (16, 97, 40)] {
        let mut a = common::random_square(n, 13 + n as u64);
        for j in 0..n {
            a[((j * 41 + 7) % n, j)] = 4.0 + (j % 3) as f64;
        }
        let factor = |mode| common::lu_factor(&inverter(&gpu, mode, chunk), &a, block, true);
        let plain = factor(LookAhead::Off);
        for mode in MODES {
            let what = format!("{mode:?} chunk {chunk} n {n} b {block}");
            common::assert_same_lu(&a, &plain, &factor(mode), &what);
        }
    }
}

#[test]
fn singular_matrices_are_refused_with_their_column() {
    let gpu = common::gpu();
    for (mode, chunk) in MODES.into_iter().flat_map(|m| [(m, 16), (m, 256)]) {
        let inv = inverter(&gpu, mode, chunk);
        // Column 45 (a second leaf, or a second block of 32) repeats column 2; column 100
        // (a later block) repeats column 70.
        for (n, copy, of) in [(130, 45, 2), (160, 100, 70)] {
            let mut a = common::pivoting_general(n, 3);
            for i in 0..n {
                a[(i, copy)] = a[(i, of)];
            }
            for method in [Method::Gje, Method::Lu] {
                match inverse::invert(&inv, &a.to_f32(), Kind::General, method) {
                    Err(Error::Numerical(NumericalError::SingularMatrix { column, .. })) => {
                        assert_eq!(column, copy, "{mode:?} {method:?} chunk {chunk} n {n}")
                    }
                    other => panic!("{mode:?} {method:?} chunk {chunk} n {n}: {other:?}"),
                }
            }
        }
    }
}

/// `Auto` looks ahead from order 4096 on, Gauss-Jordan only up to 8192; `Always` and `Off`
/// at every order.
#[test]
fn auto_looks_ahead_where_it_gains() {
    use symraster::inverse::kernels::panel::{GJE_LOOK_AHEAD_MAX_ORDER, LOOK_AHEAD_MIN_ORDER};
    let (lo, hi) = (LOOK_AHEAD_MIN_ORDER, GJE_LOOK_AHEAD_MAX_ORDER);
    assert_eq!((lo, hi), (4096, 8192));
    for (n, gje, auto) in [
        (lo - 1, true, false),
        (lo - 1, false, false),
        (lo, true, true),
        (hi, true, true),
        (hi + 1, true, false),
        (4 * hi, false, true),
    ] {
        assert_eq!(LookAhead::Auto.at(n, gje), auto, "n {n} gje {gje}");
        assert!(LookAhead::Always.at(n, gje) && !LookAhead::Off.at(n, gje));
    }
    assert_eq!(PanelSettings::default().look_ahead, LookAhead::Auto);
}
