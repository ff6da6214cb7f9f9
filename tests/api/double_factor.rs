//! The f64 Cholesky factor and SPD inverse on the GPU against the host's f64 reference: sizes
//! around every block width, both stored triangles with NaN in the other, conditions to 1e12,
//! graded matrices, and the failures named as the host's factor names them.

use crate::common;

use symraster::{
    DoubleCholeskyOptions, DoubleSchedule, Error, Matrix, NumericalError, SymmetricView, Triangle,
    host,
};

/// Q·diag(λ)·Qᵀ with λ spread geometrically from 1 to 1/`condition`.
fn spd(m: usize, condition: f64, seed: u64) -> Matrix<f64> {
    let lambda: Vec<f64> = (0..m)
        .map(|k| condition.powf(-(k as f64) / (m.max(2) - 1) as f64))
        .collect();
    common::spd_with_eigenvalues(&lambda, seed)
}

/// `c`'s `triangle` in row-major storage of stride m + 3, NaN everywhere else.
fn stored(c: &Matrix<f64>, triangle: Triangle) -> (Vec<f64>, usize) {
    common::stored(c, triangle, f64::NAN)
}

fn norm(m: &Matrix<f64>) -> f64 {
    m.as_slice().iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// L zero above its diagonal, within 1e-13 of the host's `reference` (relatively) and
/// backward stable for C.
fn assert_factor(l: &Matrix<f64>, c: &Matrix<f64>, reference: &Matrix<f64>, what: &str) {
    let m = c.rows();
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(l[(i, j)], 0.0, "{what}: L({i}, {j}) above the diagonal");
        }
    }
    let e = symraster::relative_error(l, reference);
    assert!(e < 1e-13, "{what}: L off the host's by {e:e}");
    let b = backward_error(l, c);
    assert!(
        b < 1e-15 * (m as f64).max(4.0),
        "{what}: ‖LLᵀ − C‖/‖C‖ = {b:e}"
    );
}

/// ‖I − C·X‖_F.
fn inverse_residual(c: &Matrix<f64>, x: &Matrix<f64>) -> f64 {
    let m = c.rows();
    let r = Matrix::from_fn(m, m, |i, j| {
        f64::from(u8::from(i == j)) - (0..m).map(|k| c[(i, k)] * x[(k, j)]).sum::<f64>()
    });
    norm(&r)
}

/// ‖L·Lᵀ − C‖_F / ‖C‖_F.
fn backward_error(l: &Matrix<f64>, c: &Matrix<f64>) -> f64 {
    let m = c.rows();
    let r = Matrix::from_fn(m, m, |i, j| {
        (0..=i.min(j)).map(|k| l[(i, k)] * l[(j, k)]).sum::<f64>() - c[(i, j)]
    });
    norm(&r) / norm(c)
}

#[test]
fn factors_around_every_block_width() {
    let gpu = common::gpu();
    for (m, block) in [
        (1, 64),
        (2, 64),
        (5, 3),
        (31, 16),
        (63, 64),
        (64, 64),
        (65, 64),
        (97, 7),
        (130, 64),
        (130, 32),
    ] {
        let c = spd(m, 1e3, m as u64);
        let reference = host::cholesky(&c).unwrap();
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let l = gpu
                .cholesky_double(view, DoubleCholeskyOptions::block(block))
                .unwrap();
            assert_factor(
                &l,
                &c,
                &reference,
                &format!("m {m}, block {block}, {triangle:?}"),
            );
        }
    }
}

/// The default block (and blocks of 16, whose panels span several work groups) at orders
/// around it: L against the host's from either stored triangle (NaN in the other), U its
/// transpose bit for bit, and the SPD inverse's residual.
#[test]
fn factors_around_the_default_block() {
    let gpu = common::gpu();
    for m in [31, 32, 33, 63, 64, 65, 100, 129, 200] {
        let c = spd(m, 1e4, 200 + m as u64);
        let reference = host::cholesky(&c).unwrap();
        for options in [
            DoubleCholeskyOptions::default(),
            DoubleCholeskyOptions::block(16),
        ] {
            for triangle in [Triangle::Lower, Triangle::Upper] {
                let (data, stride) = stored(&c, triangle);
                let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
                let l = gpu.cholesky_double(view, options).unwrap();
                let e = symraster::relative_error(&l, &reference);
                assert!(
                    e < 1e-13,
                    "m {m}, {options:?}, {triangle:?}: L off by {e:e}"
                );
                assert!(
                    (0..m).all(|i| (i + 1..m).all(|j| l[(i, j)] == 0.0)),
                    "m {m}: L not zero above its diagonal"
                );
                let u = gpu.cholesky_double_upper(view, options).unwrap();
                let lt = Matrix::from_fn(m, m, |i, j| l[(j, i)]);
                assert_eq!(
                    u.as_slice(),
                    lt.as_slice(),
                    "m {m}, {options:?}, {triangle:?}"
                );
                let (x, residual) = gpu.spd_inverse_double(view, options).unwrap();
                let r = inverse_residual(&c, &x);
                assert!(
                    r < 1e-10 && residual < 1e-10,
                    "m {m}, {options:?}: ‖I − CX‖ = {r:e}, reported {residual:e}"
                );
            }
        }
    }
}

/// A pivot that fails in the first block, in a block whose panel spans several work groups
/// (every later launch then returns at once) or in the last one is named at its column by the
/// lower and upper factors and the inverse, from either stored triangle.
#[test]
fn a_failed_pivot_is_named_at_its_column_in_any_block() {
    let gpu = common::gpu();
    let column = |e: Error| match e {
        Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot }) => {
            assert!(pivot <= 0.0, "pivot {pivot}");
            column
        }
        other => panic!("{other:?}"),
    };
    // Block 0: the chained schedule, whose tiles are 32: a pivot at a tile's first and last
    // column, inside one, and in the last, short, tile.
    for (m, block, bad) in [
        (200, 32, 3),
        (200, 32, 40),
        (200, 16, 150),
        (100, 0, 99),
        (200, 0, 0),
        (200, 0, 31),
        (200, 0, 32),
        (200, 0, 150),
        (200, 0, 199),
    ] {
        let mut c = spd(m, 10.0, 300 + bad as u64);
        c[(bad, bad)] = -1.0;
        assert_eq!(column(host::cholesky(&c).unwrap_err()), bad);
        let options = match block {
            0 => DoubleCholeskyOptions::schedule(DoubleSchedule::Chained),
            b => DoubleCholeskyOptions::block(b),
        };
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let got = [
                column(gpu.cholesky_double(view, options).unwrap_err()),
                column(gpu.cholesky_double_upper(view, options).unwrap_err()),
                column(gpu.spd_inverse_double(view, options).unwrap_err()),
            ];
            assert_eq!(got, [bad; 3], "m {m}, block {block}, {triangle:?}");
        }
    }
}

/// The chained schedule (one launch, tiles of 32 waiting for the tiles they read) and the
/// blocked one at orders around the tile and its multiples: L against the host's from either
/// stored triangle (NaN in the other), zeros above the diagonal, backward stable, and the SPD
/// inverse built on the chained factor's kept inverses.
#[test]
fn the_chained_and_blocked_schedules_agree_around_the_tile() {
    let gpu = common::gpu();
    for m in [1, 2, 16, 31, 32, 33, 63, 64, 65, 96, 97, 161, 257] {
        let c = spd(m, 1e4, 500 + m as u64);
        let reference = host::cholesky(&c).unwrap();
        for schedule in [DoubleSchedule::Chained, DoubleSchedule::Blocked] {
            let options = DoubleCholeskyOptions::schedule(schedule);
            for triangle in [Triangle::Lower, Triangle::Upper] {
                let (data, stride) = stored(&c, triangle);
                let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
                let l = gpu.cholesky_double(view, options).unwrap();
                assert_factor(
                    &l,
                    &c,
                    &reference,
                    &format!("m {m}, {schedule:?}, {triangle:?}"),
                );
                let (x, residual) = gpu.spd_inverse_double(view, options).unwrap();
                let r = inverse_residual(&c, &x);
                assert!(
                    r < 1e-10 && residual < 1e-10,
                    "m {m}, {schedule:?}: ‖I − CX‖ = {r:e}, reported {residual:e}"
                );
            }
        }
    }
}

#[test]
fn ill_conditioned_and_graded_factors_keep_backward_stability() {
    let gpu = common::gpu();
    let chained = DoubleCholeskyOptions::schedule(DoubleSchedule::Chained);
    for (m, condition) in [(100, 1e9), (150, 1e12)] {
        let c = spd(m, condition, 7);
        for options in [DoubleCholeskyOptions::block(16), chained] {
            let l = gpu
                .cholesky_double(SymmetricView::lower(&c), options)
                .unwrap();
            let b = backward_error(&l, &c);
            assert!(
                b < 1e-15 * m as f64,
                "κ {condition:e}, {options:?}: ‖LLᵀ − C‖/‖C‖ = {b:e}"
            );
        }
    }
    // D·C·D with D from 1e-100 to 1e100: the scaling makes it a well-conditioned factor.
    let m = 90;
    let c = spd(m, 1e2, 3);
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-100.0 + 200.0 * i as f64 / (m - 1) as f64))
        .collect();
    let graded = Matrix::from_fn(m, m, |i, j| d[i] * c[(i, j)] * d[j]);
    let reference = host::cholesky(&graded).unwrap();
    for options in [DoubleCholeskyOptions::block(32), chained] {
        let l = gpu
            .cholesky_double(SymmetricView::lower(&graded), options)
            .unwrap();
        // Row by row (row i of L carries d_i's scale): each within rounding of the host's.
        for i in 0..m {
            let row: f64 = (0..=i)
                .map(|j| reference[(i, j)].powi(2))
                .sum::<f64>()
                .sqrt();
            let diff: f64 = (0..=i)
                .map(|j| (l[(i, j)] - reference[(i, j)]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                diff <= 1e-13 * row,
                "{options:?}, graded row {i}: ‖ΔL‖ = {diff:e} of {row:e}"
            );
        }
    }
}

#[test]
fn a_matrix_that_is_not_positive_definite_is_named_at_the_hosts_column() {
    let gpu = common::gpu();
    // Block 0: the chained schedule.
    for (m, block) in [(40, 64), (150, 16), (40, 0), (150, 0)] {
        let mut c = spd(m, 10.0, 11);
        // A negative eigenvalue in the trailing part: the pivot fails past the first blocks.
        let k = m - 7;
        for i in 0..m {
            for j in 0..m {
                if i >= k && j >= k {
                    c[(i, j)] -= if i == j { 2.0 } else { 0.0 };
                }
            }
        }
        let host = host::cholesky(&c).unwrap_err();
        let options = match block {
            0 => DoubleCholeskyOptions::schedule(DoubleSchedule::Chained),
            b => DoubleCholeskyOptions::block(b),
        };
        let ours = gpu
            .cholesky_double(SymmetricView::lower(&c), options)
            .unwrap_err();
        match (host, ours) {
            (
                Error::Numerical(NumericalError::NotPositiveDefinite {
                    column: a,
                    pivot: p,
                }),
                Error::Numerical(NumericalError::NotPositiveDefinite {
                    column: b,
                    pivot: q,
                }),
            ) => {
                assert_eq!(a, b, "m {m}: the failing column");
                assert!(
                    q <= 0.0 && (p - q).abs() <= 1e-10 * p.abs().max(1.0),
                    "pivots {p} and {q}"
                );
            }
            (h, o) => panic!("m {m}: host {h}, ours {o}"),
        }
    }
}

#[test]
fn bad_input_and_options_are_errors() {
    let gpu = common::gpu();
    let c = spd(4, 2.0, 1);
    let err = gpu
        .cholesky_double(SymmetricView::lower(&c), DoubleCholeskyOptions::block(65))
        .unwrap_err();
    assert!(err.to_string().contains("block"), "{err}");
    let mut bad = c.clone();
    bad[(2, 1)] = f64::INFINITY;
    let err = gpu
        .cholesky_double(SymmetricView::lower(&bad), Default::default())
        .unwrap_err();
    assert!(err.to_string().contains("row 2, column 1"), "{err}");
}

#[test]
fn spd_inverse_matches_the_hosts_to_its_condition() {
    let gpu = common::gpu();
    for (m, block, condition) in [
        (1, 64, 1.0),
        (33, 8, 1e3),
        (64, 64, 1e6),
        (129, 64, 1e10),
        (70, 16, 1e12),
        (150, 8, 1e4),
    ] {
        let c = spd(m, condition, 5 + m as u64);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let (x, residual) = gpu
                .spd_inverse_double(view, DoubleCholeskyOptions::block(block))
                .unwrap();
            // I − C·X measured here in f64.
            let r = Matrix::from_fn(m, m, |i, j| {
                f64::from(u8::from(i == j)) - (0..m).map(|k| c[(i, k)] * x[(k, j)]).sum::<f64>()
            });
            let bound = 1e-14 * condition * m as f64;
            assert!(
                norm(&r) < bound.max(1e-13),
                "m {m}, κ {condition:e}: ‖I − CX‖ = {:e}",
                norm(&r)
            );
            assert!(
                residual < bound.max(1e-13),
                "m {m}: reported residual {residual:e}"
            );
            for i in 0..m {
                for j in 0..i {
                    assert_eq!(x[(i, j)], x[(j, i)], "m {m}: X not symmetric at ({i}, {j})");
                }
            }
        }
    }
}

/// A pivot that is exactly zero (the factors' reciprocal divides there, outside float's
/// range): rows `bad − 1` and `bad` a decoupled block [[4, 4], [4, 4]], whose second pivot
/// 4 − 2·2 is 0 in any arithmetic; both schedules name its column with the pivot 0.
#[test]
fn an_exactly_zero_pivot_is_named_in_both_schedules() {
    let gpu = common::gpu();
    for (m, bad) in [(40, 1), (100, 33), (200, 150)] {
        let mut c = spd(m, 10.0, 700 + bad as u64);
        for k in 0..m {
            for r in [bad - 1, bad] {
                c[(r, k)] = 0.0;
                c[(k, r)] = 0.0;
            }
        }
        for (i, j) in [
            (bad - 1, bad - 1),
            (bad, bad),
            (bad, bad - 1),
            (bad - 1, bad),
        ] {
            c[(i, j)] = 4.0;
        }
        for schedule in [DoubleSchedule::Chained, DoubleSchedule::Blocked] {
            let options = DoubleCholeskyOptions::schedule(schedule);
            match gpu.cholesky_double(SymmetricView::lower(&c), options) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                    assert_eq!((column, pivot), (bad, 0.0), "m {m}, {schedule:?}");
                }
                other => panic!("m {m}, {schedule:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_singular_matrix_has_no_inverse() {
    let gpu = common::gpu();
    let m = 50;
    let c = spd(m, 1e25, 9);
    match gpu.spd_inverse_double(SymmetricView::lower(&c), Default::default()) {
        Err(Error::Numerical(
            NumericalError::NotPositiveDefinite { .. } | NumericalError::IllConditioned { .. },
        )) => {}
        other => panic!("κ 1e25 gave {other:?}"),
    }
}

/// Every transfer staged (from 1 KiB on, in chunks of 256 KiB: the staging buffers, their
/// pieces and chunks cutting rows at any column) gives the same bits as the default, for both stored triangles and a graded C
/// whose scaling powers are applied entry by entry.
#[test]
fn staged_transfers_give_the_same_bits() {
    use symraster::{Gpu, SolveOptions, Tuning};
    let staged = Gpu::builder()
        .tuning(Tuning {
            staged_from_bytes: Some(1024),
            staging_chunk_bytes: Some(256 << 10),
            ..Tuning::default()
        })
        .build()
        .unwrap();
    if !staged.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", staged.info().renderer);
        return;
    }
    let gpu = common::gpu();
    for (m, graded) in [(1, false), (37, false), (200, false), (201, true)] {
        let mut c = spd(m, 1e6, 40 + m as u64);
        if graded {
            // Diagonal scales 2^±1020: the exponents pass 500, the per-entry path.
            let s: Vec<f64> = (0..m)
                .map(|i| 2f64.powi(if i % 2 == 0 { 510 } else { -510 }))
                .collect();
            c = Matrix::from_fn(m, m, |i, j| c[(i, j)] * s[i] * s[j]);
        }
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let l = staged.cholesky_double(view, Default::default()).unwrap();
            let l1 = gpu.cholesky_double(view, Default::default()).unwrap();
            assert_eq!(l.as_slice(), l1.as_slice(), "m = {m}, {triangle:?}");
            if !graded {
                assert!(backward_error(&l, &c) < 1e-14 * m as f64, "m = {m}");
                let (x, _) = staged.spd_inverse_double(view, Default::default()).unwrap();
                let (x1, _) = gpu.spd_inverse_double(view, Default::default()).unwrap();
                assert_eq!(
                    x.as_slice(),
                    x1.as_slice(),
                    "inverse, m = {m}, {triangle:?}"
                );
                let b: Vec<f64> = (0..m).map(|i| 1.0 + i as f64 / 7.0).collect();
                let s = staged
                    .spd_solve_view(view, &b, SolveOptions::new())
                    .unwrap();
                let s1 = gpu.spd_solve_view(view, &b, SolveOptions::new()).unwrap();
                assert_eq!(s.x, s1.x, "solve, m = {m}, {triangle:?}");
            }
        }
    }
    // The tiled f32 factor's upload cut into pieces mid-row.
    let c = spd(300, 1e3, 7).map(|v| v as f32);
    let l = staged
        .cholesky(&c, symraster::Options::default())
        .unwrap()
        .into_l()
        .unwrap();
    let l1 = gpu
        .cholesky(&c, symraster::Options::default())
        .unwrap()
        .into_l()
        .unwrap();
    assert_eq!(l.as_slice(), l1.as_slice(), "f32, m = 300");
}

/// U from `cholesky_double_upper` is L from `cholesky_double` transposed, bit for bit, zeros
/// below its diagonal, from either stored triangle, around the block widths and for a graded
/// C; a failure names the same column.
#[test]
fn the_upper_factor_is_l_turned_over() {
    let gpu = common::gpu();
    for (m, graded) in [
        (1, false),
        (2, false),
        (31, false),
        (33, false),
        (65, false),
        (130, true),
    ] {
        let mut c = spd(m, 1e8, 90 + m as u64);
        if graded {
            let s: Vec<f64> = (0..m)
                .map(|i| 2f64.powi((i % 7) as i32 * 40 - 120))
                .collect();
            c = Matrix::from_fn(m, m, |i, j| c[(i, j)] * s[i] * s[j]);
        }
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let l = gpu.cholesky_double(view, Default::default()).unwrap();
            let u = gpu.cholesky_double_upper(view, Default::default()).unwrap();
            let lt = Matrix::from_fn(m, m, |i, j| l[(j, i)]);
            assert_eq!(u.as_slice(), lt.as_slice(), "m = {m}, {triangle:?}");
        }
    }
    let mut c = spd(40, 10.0, 5);
    c[(17, 17)] = -1.0;
    let (data, stride) = stored(&c, Triangle::Upper);
    let view = SymmetricView::new(&data, 40, stride, Triangle::Upper).unwrap();
    let column = |e: Error| match e {
        Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }) => column,
        other => panic!("{other:?}"),
    };
    let a = column(gpu.cholesky_double(view, Default::default()).unwrap_err());
    let b = column(
        gpu.cholesky_double_upper(view, Default::default())
            .unwrap_err(),
    );
    assert_eq!((a, b), (17, 17));
}

/// `cholesky_double_into` writes `cholesky_double`'s (or `_upper`'s) factor bit for bit into
/// its triangle of a NaN-poisoned square and leaves the rest to the caller's rows, which
/// cover exactly the strict other triangle, each entry once; a square of the wrong size and a
/// C that is not positive definite are errors.
#[test]
fn factors_into_a_square_beside_the_callers_writer() {
    let gpu = common::gpu();
    for (m, block) in [(1, 64), (2, 64), (31, 16), (64, 64), (65, 64), (130, 32)] {
        let c = spd(m, 1e3, 40 + m as u64);
        let options = DoubleCholeskyOptions::block(block);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            for upper in [false, true] {
                let whole = match upper {
                    true => gpu.cholesky_double_upper(view, options),
                    false => gpu.cholesky_double(view, options),
                }
                .unwrap();
                let in_factor = |i: usize, j: usize| if upper { j >= i } else { j <= i };
                for fill in [false, true] {
                    let mut square = vec![f64::NAN; m * m];
                    let seen = std::sync::Mutex::new(Vec::new());
                    gpu.cholesky_double_into(view, options, upper, &mut square, |i, j0, row| {
                        seen.lock()
                            .unwrap()
                            .extend((0..row.len()).map(|k| (i, j0 + k)));
                        if fill {
                            for (k, v) in row.iter_mut().enumerate() {
                                *v = (i * m + j0 + k) as f64 + 0.5;
                            }
                        }
                    })
                    .unwrap();
                    let mut seen = seen.into_inner().unwrap();
                    seen.sort_unstable();
                    let expected: Vec<_> = (0..m)
                        .flat_map(|i| (0..m).map(move |j| (i, j)))
                        .filter(|&(i, j)| !in_factor(i, j))
                        .collect();
                    assert_eq!(seen, expected, "m {m} upper {upper}: the writer's entries");
                    for i in 0..m {
                        for j in 0..m {
                            let v = square[i * m + j];
                            let want = match (in_factor(i, j), fill) {
                                (true, _) => whole[(i, j)],
                                (false, true) => (i * m + j) as f64 + 0.5,
                                (false, false) => f64::NAN,
                            };
                            assert_eq!(
                                v.to_bits(),
                                want.to_bits(),
                                "m {m} {triangle:?} upper {upper} fill {fill}: ({i}, {j})"
                            );
                        }
                    }
                }
            }
        }
    }
    let c = spd(5, 10.0, 9);
    let view = SymmetricView::lower(&c);
    let e = gpu
        .cholesky_double_into(
            view,
            Default::default(),
            false,
            &mut [0.0; 24],
            |_, _, _| {},
        )
        .unwrap_err();
    assert!(matches!(e, Error::Input(_)), "{e}");
    let mut bad = c.clone();
    bad[(3, 3)] = -1.0;
    let e = gpu
        .cholesky_double_into(
            SymmetricView::lower(&bad),
            Default::default(),
            false,
            &mut [0.0; 25],
            |_, _, _| {},
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Numerical(NumericalError::NotPositiveDefinite { column: 3, .. })
        ),
        "{e}"
    );
}
