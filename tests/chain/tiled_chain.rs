//! The tiled Cholesky as one chained launch (glsl/tiled/potrf_chain.comp): its factor against
//! the f64 reference (relative backward error) and against the blocked factor, with 1e30 in
//! the upper triangle it must not read and the inverse slots poisoned with NaN; the failing
//! column of a matrix that is not positive definite, as the blocked path names it; the
//! given-up path (forced) launched again to the same factor; the chained panels with their
//! trailing products. llvmpipe runs on one thread here so that
//! no work group waits long enough to give up (the blocked fallback would run, and the tests
//! check that the chain itself ran).

use crate::common::chain::{backward_error, factor, failure, gpu, tolerance, tuned, upload};

use symraster::internal::GpuInternals;
use symraster::tiled::DiagonalFactor;
use symraster::tiled::schedule::{ChainPoll, CholeskySchedule};
use symraster::tiled::{TiledKernels, cholesky};
use symraster::tuning::Tuning;
use symraster::{Error, NumericalError, problems};

/// The tuning of tiles of `diag` and the Cholesky scheduled as `schedule` with outer blocks
/// (chained panels) of `outer` columns, every other choice its default.
fn shaped((diag, schedule, outer): (usize, CholeskySchedule, usize)) -> Tuning {
    Tuning {
        diagonal_block: Some(diag),
        outer_block: Some(outer),
        cholesky_schedule: Some(schedule),
        ..Tuning::default()
    }
}

/// The kernels with diagonal tiles of `diag` and the Cholesky scheduled as `schedule`.
fn kernels(gpu: &symraster::Gpu, diag: usize, schedule: CholeskySchedule) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_block: Some(diag),
            cholesky_schedule: Some(schedule),
            ..Tuning::default()
        },
    )
}

/// The kernels with diagonal tiles of `diag`, chained panels of `outer` columns.
fn panel_kernels(gpu: &symraster::Gpu, diag: usize, outer: usize) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_block: Some(diag),
            outer_block: Some(outer),
            cholesky_schedule: Some(CholeskySchedule::Panels),
            ..Tuning::default()
        },
    )
}

#[test]
fn the_chained_factor_matches_the_reference_and_the_blocked_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let chain = kernels(&gpu, 32, CholeskySchedule::Chain);
    let blocked = kernels(&gpu, 32, CholeskySchedule::Blocked);
    for m in [1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 513] {
        assert_eq!(
            chain.chains_factor(m),
            Some(CholeskySchedule::Chain),
            "m {m}"
        );
        assert_eq!(blocked.chains_factor(m), None);
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let before = chain.chained_factors();
        let l = factor(&gpu, &chain, &c);
        assert_eq!(chain.chained_factors(), before + 1, "m {m}: not chained");
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "m {m}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(e < tolerance(m), "m {m}: backward error {e:.2e}");
        let lb = factor(&gpu, &blocked, &c);
        assert_eq!(blocked.chained_factors(), 0);
        let d = symraster::relative_error(&l, &lb);
        assert!(d < tolerance(m), "m {m}: {d:.2e} from the blocked factor");
        // The inverses of the diagonal tiles are the blocked path's too (slot j = tile j).
        for slot in 0..m.div_ceil(32) {
            let (a, b) = (
                chain.inverse_block(slot).unwrap(),
                blocked.inverse_block(slot).unwrap(),
            );
            let n = 32.min(m - slot * 32);
            for r in 0..n {
                for s in 0..n {
                    let (x, y) = (a[r * 32 + s], b[r * 32 + s]);
                    assert!(
                        (x - y).abs() <= 1e-3 * (1.0 + y.abs()),
                        "m {m} slot {slot} ({r}, {s}): {x} against {y}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_chain_with_tiles_of_64_and_128_matches_the_reference() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    // Two padded 64 x 32 slices and the factor's own fit llvmpipe's 32 KiB of shared memory.
    let chain = kernels(&gpu, 64, CholeskySchedule::Chain);
    assert!(chain.chains_factor(64).is_some());
    let cases = [
        (63, &chain),
        (64, &chain),
        (65, &chain),
        (129, &chain),
        (200, &chain),
    ];
    // Tiles of 128 where they fit (not in 32 KiB: GPUs' 48 KiB).
    let wide = kernels(&gpu, 128, CholeskySchedule::Chain);
    let wide_cases = [(127, &wide), (128, &wide), (129, &wide), (300, &wide)];
    let wide_cases = if wide.chains_factor(128).is_some() {
        &wide_cases[..]
    } else {
        &[]
    };
    for &(m, chain) in cases.iter().chain(wide_cases) {
        let c = problems::well_conditioned_spd(&mut problems::rng(70 + m as u64), m);
        let before = chain.chained_factors();
        let l = factor(&gpu, chain, &c);
        assert_eq!(chain.chained_factors(), before + 1, "m {m}: not chained");
        let e = backward_error(&l.to_f64(), &c);
        assert!(
            e < tolerance(m),
            "m {m} tiles {}: backward error {e:.2e}",
            chain.diag()
        );
    }
}

#[test]
fn a_matrix_that_is_not_positive_definite_names_the_blocked_paths_column() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let chain = kernels(&gpu, 32, CholeskySchedule::Chain);
    let blocked = kernels(&gpu, 32, CholeskySchedule::Blocked);
    let m = 129;
    for column in [0, 1, 31, 32, 40, 63, 64, 100, 128] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= 500.0;
        let before = chain.chained_factors();
        let (got, pivot) = failure(&gpu, &chain, &c);
        assert_eq!(
            chain.chained_factors(),
            before + 1,
            "column {column}: not chained"
        );
        let (want, want_pivot) = failure(&gpu, &blocked, &c);
        assert_eq!((got, want), (column, column));
        assert!(
            (pivot - want_pivot).abs() <= 1e-3 * want_pivot.abs(),
            "column {column}: pivot {pivot} against the blocked {want_pivot}"
        );
    }
    // NaN on the diagonal: the chain still finishes and names its column.
    let mut c = problems::well_conditioned_spd(&mut problems::rng(6), m);
    c[(70, 70)] = f32::NAN;
    assert_eq!(failure(&gpu, &chain, &c).0, 70);
}

#[test]
fn chained_panels_match_the_reference_and_the_blocked_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    // Panels of 64 columns (two tile columns of 32), then a trailing product each.
    let panels = panel_kernels(&gpu, 32, 64);
    let blocked = kernels(&gpu, 32, CholeskySchedule::Blocked);
    for m in [1, 2, 31, 33, 64, 65, 127, 129, 200, 513] {
        assert_eq!(panels.chains_factor(m), Some(CholeskySchedule::Panels));
        let c = problems::well_conditioned_spd(&mut problems::rng(20 + m as u64), m);
        let before = panels.chained_factors();
        let l = factor(&gpu, &panels, &c);
        assert_eq!(panels.chained_factors(), before + 1, "m {m}: not chained");
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "m {m}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(e < tolerance(m), "m {m}: backward error {e:.2e}");
        let d = symraster::relative_error(&l, &factor(&gpu, &blocked, &c));
        assert!(d < tolerance(m), "m {m}: {d:.2e} from the blocked factor");
    }
    // A first panel that gave up (forced): C restored, the panels again, the same factor.
    for m in [65, 200] {
        let c = problems::well_conditioned_spd(&mut problems::rng(20 + m as u64), m);
        let mut t = upload(&gpu, &c);
        cholesky::factor_panels_after_chain_gives_up(&panels, &mut t).unwrap();
        let l = t.download_lower().unwrap();
        assert_eq!(l.as_slice(), factor(&gpu, &panels, &c).as_slice(), "m {m}");
    }
    // The failing column past the first panel, as the blocked path names it.
    let m = 200;
    for column in [5, 64, 100, 199] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(7), m);
        c[(column, column)] -= 500.0;
        let (got, pivot) = failure(&gpu, &panels, &c);
        let (want, want_pivot) = failure(&gpu, &blocked, &c);
        assert_eq!((got, want), (column, column));
        assert!((pivot - want_pivot).abs() <= 1e-3 * want_pivot.abs());
    }
}

/// A chain whose work groups gave up (forced here before its first launch; on llvmpipe with
/// several threads their polls run out) is launched again on the tiles already published:
/// the same factor, bit for bit, as the chain that never gave up.
#[test]
fn a_chain_that_gave_up_is_launched_again_to_the_same_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let chain = kernels(&gpu, 32, CholeskySchedule::Chain);
    let blocked = kernels(&gpu, 32, CholeskySchedule::Blocked);
    for m in [1, 65, 200] {
        let c = problems::well_conditioned_spd(&mut problems::rng(90 + m as u64), m);
        let mut t = upload(&gpu, &c);
        let (before, launches) = (chain.chained_factors(), chain.launches());
        cholesky::factor_after_chain_gives_up(&chain, &mut t).unwrap();
        assert_eq!(chain.chained_factors(), before + 1, "m {m}: not chained");
        // One launch after the forced give-up (llvmpipe on one thread waits for nothing).
        assert_eq!(chain.launches(), launches + 1, "m {m}");
        let l = t.download_lower().unwrap();
        assert_eq!(l.as_slice(), factor(&gpu, &chain, &c).as_slice(), "m {m}");
        let d = symraster::relative_error(&l, &factor(&gpu, &blocked, &c));
        assert!(d < tolerance(m), "m {m}: {d:.2e} from the blocked factor");
        // A failure found after the give-up is the blocked path's.
        let mut bad = c.clone();
        let column = m / 2;
        bad[(column, column)] -= 500.0;
        let mut t = upload(&gpu, &bad);
        match cholesky::factor_after_chain_gives_up(&chain, &mut t) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, .. })) => {
                assert_eq!(got, column)
            }
            other => panic!("m {m}: expected NotPositiveDefinite, got {other:?}"),
        }
    }
}

/// The kernels with diagonal tiles of `diag`, the Cholesky scheduled as `schedule` (chained
/// panels of `outer` columns) and the diagonal tiles factored by `factor`.
fn factor_kernels(
    gpu: &symraster::Gpu,
    diag: usize,
    schedule: CholeskySchedule,
    outer: usize,
    factor: DiagonalFactor,
) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_factor: Some(factor),
            ..shaped((diag, schedule, outer))
        },
    )
}

/// `k`'s chain against `columns` (the same chain with the column-by-column diagonal factor,
/// other arithmetic): over `sizes` (C seeded from `seed`) the factor chained, finite, against
/// the reference and within the tolerance of the columns' factor, and in one launch the
/// diagonal tiles' inverses (slots poisoned first) within 1e-3.
fn assert_close_to_columns(
    gpu: &symraster::Gpu,
    (k, columns): (&TiledKernels, &TiledKernels),
    (diag, schedule): (usize, CholeskySchedule),
    (sizes, seed): (&[usize], u64),
    what: &str,
) {
    for &m in sizes {
        let what = format!("{what} m {m}");
        assert_eq!(k.chains_factor(m), Some(schedule), "{what}");
        let c = problems::well_conditioned_spd(&mut problems::rng(seed + m as u64), m);
        let before = k.chained_factors();
        let l = factor(gpu, k, &c);
        assert_eq!(k.chained_factors(), before + 1, "{what}: not chained");
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "{what}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(e < tolerance(m), "{what}: backward error {e:.2e}");
        let lc = factor(gpu, columns, &c);
        let d = symraster::relative_error(&l, &lc);
        assert!(d < tolerance(m), "{what}: {d:.2e} from the columns' factor");
        if schedule != CholeskySchedule::Chain {
            continue;
        }
        for slot in 0..m.div_ceil(diag) {
            let (a, b) = (
                k.inverse_block(slot).unwrap(),
                columns.inverse_block(slot).unwrap(),
            );
            let n = diag.min(m - slot * diag);
            for r in 0..n {
                for s in 0..n {
                    let (x, y) = (a[r * diag + s], b[r * diag + s]);
                    assert!(
                        (x - y).abs() <= 1e-3 * (1.0 + y.abs()),
                        "{what} slot {slot} ({r}, {s}): {x} against {y}"
                    );
                }
            }
        }
    }
}

/// The failing column of an order-129 C lowered at each of `at`, as `columns` names it, its
/// pivot within 1e-3, and a NaN pivot named.
fn assert_failures_as_columns(
    gpu: &symraster::Gpu,
    (k, columns): (&TiledKernels, &TiledKernels),
    at: &[usize],
    what: &str,
) {
    let m = 129;
    for &column in at {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= 500.0;
        let (got, pivot) = failure(gpu, k, &c);
        let (want, want_pivot) = failure(gpu, columns, &c);
        assert_eq!((got, want), (column, column), "{what}");
        assert!(
            (pivot - want_pivot).abs() <= 1e-3 * want_pivot.abs(),
            "{what} column {column}: pivot {pivot} against {want_pivot}"
        );
    }
    let mut c = problems::well_conditioned_spd(&mut problems::rng(6), m);
    c[(70, 70)] = f32::NAN;
    assert_eq!(failure(gpu, k, &c).0, 70, "{what}");
}

/// The diagonal tiles factored by the lanes of one subgroup (potrf_inv_lanes.glsl; llvmpipe
/// has no shuffles and runs the same steps through shared memory) in the chain and in the
/// chained panels: the factor against the reference and against the column-by-column factor,
/// the inverses of the diagonal tiles alike (their slots poisoned with NaN first), and the
/// failing column and its pivot the same.
#[test]
fn the_lanes_diagonal_factor_matches_the_columns_factor_in_the_chain() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    for (diag, schedule, outer) in [
        (32, CholeskySchedule::Chain, 512),
        (64, CholeskySchedule::Chain, 512),
        (32, CholeskySchedule::Panels, 64),
    ] {
        let lanes = factor_kernels(&gpu, diag, schedule, outer, DiagonalFactor::Lanes);
        let columns = factor_kernels(&gpu, diag, schedule, outer, DiagonalFactor::Columns);
        assert_eq!(lanes.diagonal_factor(), DiagonalFactor::Lanes);
        let sizes: &[usize] = match diag {
            32 => &[1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 513],
            _ => &[1, 3, 63, 64, 65, 129, 200],
        };
        let what = format!("tiles {diag} {}", schedule.name());
        let pair = (&lanes, &columns);
        assert_close_to_columns(&gpu, pair, (diag, schedule), (sizes, 300), &what);
        // The failing column, as the columns' factor names it, with its pivot.
        let at = [0, 1, 31, 32, 40, 63, 64, 100, 128];
        assert_failures_as_columns(&gpu, pair, &at, &format!("tiles {diag}"));
    }
}

/// Under Auto the chained panels are at least PANELS_AUTO_OUTER wide where the tuning sets no
/// outer block (narrower panels lost to the blocked factor at 8192 on the H200); a tuned
/// outer block, or another schedule, keeps its width.
#[test]
fn auto_widens_the_chained_panels_unless_the_outer_block_is_tuned() {
    use symraster::tiled::schedule::PANELS_AUTO_OUTER;
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let with = |schedule, outer| {
        let t = Tuning {
            diagonal_block: Some(32),
            outer_block: outer,
            cholesky_schedule: Some(schedule),
            ..Tuning::default()
        };
        tuned(&gpu, &t)
    };
    let auto = with(CholeskySchedule::Auto, None);
    assert_eq!(auto.panel_outer(), PANELS_AUTO_OUTER.max(auto.outer()));
    let tuned = with(CholeskySchedule::Auto, Some(512));
    assert_eq!((tuned.outer(), tuned.panel_outer()), (512, 512));
    let panels = with(CholeskySchedule::Panels, None);
    assert_eq!(panels.panel_outer(), panels.outer());
    // Auto: the chain to 4096, split in chained halves above (the panels were no faster at
    // 8192; RFP stays blocked: `cholesky::factor_unchecked`).
    assert_eq!(auto.chains_factor(4096), Some(CholeskySchedule::Chain));
    assert_eq!(auto.chains_factor(4097), Some(CholeskySchedule::Split));
    assert_eq!(auto.chains_factor(8192), Some(CholeskySchedule::Split));
}

/// The kernels of [`factor_kernels`] (the columns' diagonal factor) with the chain folding
/// each sub-diagonal tile's last product into the next diagonal tile's group or not.
fn fold_kernels(
    gpu: &symraster::Gpu,
    diag: usize,
    schedule: CholeskySchedule,
    outer: usize,
    fold: bool,
) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            chain_fold: Some(fold),
            ..shaped((diag, schedule, outer))
        },
    )
}

/// The folded chain (Tuning::chain_fold: the group of (j + 1, j + 1) forms L_{j+1,j} itself)
/// in one launch and in chained panels (whose last tile column has no diagonal tile to fold
/// into): the factor against the reference and the unfolded chain's, the inverses of the
/// diagonal tiles alike (slots poisoned with NaN first), the failing column and its pivot as
/// the unfolded chain names them, and the given-up path to the same factor bit for bit.
#[test]
fn the_folded_chain_matches_the_reference_and_the_unfolded_chain() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    // Folded by default with tiles of 32 (Tuning::chain_fold_for), not with 64.
    assert!(kernels(&gpu, 32, CholeskySchedule::Chain).chain_fold());
    assert!(!kernels(&gpu, 64, CholeskySchedule::Chain).chain_fold());
    for (diag, schedule, outer) in [
        (32, CholeskySchedule::Chain, 512),
        (64, CholeskySchedule::Chain, 512),
        (32, CholeskySchedule::Panels, 64),
    ] {
        let folded = fold_kernels(&gpu, diag, schedule, outer, true);
        let plain = fold_kernels(&gpu, diag, schedule, outer, false);
        assert!(folded.chain_fold() && !plain.chain_fold());
        let sizes: &[usize] = match diag {
            32 => &[1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 513],
            _ => &[1, 3, 63, 64, 65, 127, 128, 129, 200],
        };
        for &m in sizes {
            let what = format!("tiles {diag} {} m {m}", schedule.name());
            assert_eq!(folded.chains_factor(m), Some(schedule), "{what}");
            let c = problems::well_conditioned_spd(&mut problems::rng(500 + m as u64), m);
            let before = folded.chained_factors();
            let l = factor(&gpu, &folded, &c);
            assert_eq!(folded.chained_factors(), before + 1, "{what}: not chained");
            assert!(
                l.as_slice().iter().all(|v| v.is_finite()),
                "{what}: NaN left"
            );
            let e = backward_error(&l.to_f64(), &c);
            assert!(e < tolerance(m), "{what}: backward error {e:.2e}");
            let d = symraster::relative_error(&l, &factor(&gpu, &plain, &c));
            assert!(d < tolerance(m), "{what}: {d:.2e} from the unfolded chain");
            if schedule != CholeskySchedule::Chain {
                continue;
            }
            // `factor` above poisoned `plain`'s slots; refill `folded`'s after poisoning them.
            let l2 = factor(&gpu, &folded, &c);
            assert_eq!(l2.as_slice(), l.as_slice(), "{what}: not deterministic");
            for slot in 0..m.div_ceil(diag) {
                let (a, b) = (
                    folded.inverse_block(slot).unwrap(),
                    plain.inverse_block(slot).unwrap(),
                );
                let n = diag.min(m - slot * diag);
                for r in 0..n {
                    for s in 0..n {
                        let (x, y) = (a[r * diag + s], b[r * diag + s]);
                        assert!(
                            (x - y).abs() <= 1e-3 * (1.0 + y.abs()),
                            "{what} slot {slot} ({r}, {s}): {x} against {y}"
                        );
                    }
                }
            }
        }
        // The failing column and its pivot, as the unfolded chain names them.
        let m = 129;
        for column in [0, 1, 31, 32, 40, 63, 64, 65, 100, 128] {
            let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
            c[(column, column)] -= 500.0;
            let (got, pivot) = failure(&gpu, &folded, &c);
            let (want, want_pivot) = failure(&gpu, &plain, &c);
            assert_eq!((got, want), (column, column), "tiles {diag}");
            assert!(
                (pivot - want_pivot).abs() <= 1e-3 * want_pivot.abs(),
                "tiles {diag} column {column}: pivot {pivot} against {want_pivot}"
            );
        }
        let mut c = problems::well_conditioned_spd(&mut problems::rng(6), m);
        c[(70, 70)] = f32::NAN;
        assert_eq!(failure(&gpu, &folded, &c).0, 70, "tiles {diag}");
    }
    // Given up before the first launch: launched again to the same factor, bit for bit.
    let folded = fold_kernels(&gpu, 32, CholeskySchedule::Chain, 512, true);
    for m in [1, 65, 200] {
        let c = problems::well_conditioned_spd(&mut problems::rng(90 + m as u64), m);
        let mut t = upload(&gpu, &c);
        let before = folded.chained_factors();
        cholesky::factor_after_chain_gives_up(&folded, &mut t).unwrap();
        assert_eq!(folded.chained_factors(), before + 1, "m {m}: not chained");
        let l = t.download_lower().unwrap();
        assert_eq!(l.as_slice(), factor(&gpu, &folded, &c).as_slice(), "m {m}");
    }
}

/// The kernels of [`factor_kernels`] with the chain folded or not.
fn steps_kernels(
    gpu: &symraster::Gpu,
    (diag, schedule, outer): (usize, CholeskySchedule, usize),
    factor: DiagonalFactor,
    fold: bool,
) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_factor: Some(factor),
            chain_fold: Some(fold),
            ..shaped((diag, schedule, outer))
        },
    )
}

/// The diagonal tiles factored two (potrf_inv_pairs.glsl) or four (potrf_inv_steps.glsl)
/// columns per barrier, alone and with the folded chain, in the chain and the chained panels:
/// the factor against the reference and the columns' factor, the inverses of the diagonal
/// tiles alike (slots poisoned first), the failing column (any column of a step, and a short
/// last step) and its pivot.
#[test]
fn the_pairs_and_quads_diagonal_factors_match_the_columns_factor_in_the_chain() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let cases = [
        ((32, CholeskySchedule::Chain, 512), false),
        ((32, CholeskySchedule::Chain, 512), true),
        ((64, CholeskySchedule::Chain, 512), true),
        ((32, CholeskySchedule::Panels, 64), true),
    ];
    for (way, (shape, fold)) in [DiagonalFactor::Pairs, DiagonalFactor::Quads]
        .into_iter()
        .flat_map(|f| cases.map(|c| (f, c)))
    {
        let (diag, schedule, outer) = shape;
        let pairs = steps_kernels(&gpu, shape, way, fold);
        let columns = factor_kernels(&gpu, diag, schedule, outer, DiagonalFactor::Columns);
        assert_eq!(pairs.diagonal_factor(), way);
        assert_eq!(pairs.chain_fold(), fold);
        let sizes: &[usize] = match diag {
            32 => &[1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 513],
            _ => &[1, 2, 3, 63, 64, 65, 129, 200],
        };
        let what = format!(
            "{} tiles {diag} {} fold {fold}",
            way.name(),
            schedule.name()
        );
        let pair = (&pairs, &columns);
        assert_close_to_columns(&gpu, pair, (diag, schedule), (sizes, 700), &what);
        // The failing column (each place in a step; 128 a short last step) and its pivot.
        let at = [0, 1, 2, 3, 31, 32, 40, 41, 42, 63, 64, 100, 101, 128];
        assert_failures_as_columns(&gpu, pair, &at, &format!("{way:?} tiles {diag}"));
    }
}

/// The kernels of [`steps_kernels`] with the folded tile published early or not and the
/// chain's flags polled as `poll` says.
fn poll_kernels(
    gpu: &symraster::Gpu,
    (diag, schedule, outer): (usize, CholeskySchedule, usize),
    factor: DiagonalFactor,
    (fold, early): (bool, bool),
    poll: ChainPoll,
) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_factor: Some(factor),
            chain_fold: Some(fold),
            chain_fold_early: Some(early),
            chain_poll: Some(poll),
            ..shaped((diag, schedule, outer))
        },
    )
}

/// `k` against `base`, a chain with the same arithmetic (only its waits differ): over sizes
/// around the tiles the factor (upper triangle of garbage left alone, no NaN left, against the
/// reference) and, in one launch, the diagonal tiles' inverses (slots poisoned first) are
/// `base`'s bit for bit; so are the failing column and its pivot, and a NaN pivot is named.
fn assert_same_chain(
    gpu: &symraster::Gpu,
    k: &TiledKernels,
    base: &TiledKernels,
    (diag, schedule): (usize, CholeskySchedule),
    what: &str,
) {
    let sizes: &[usize] = match diag {
        32 => &[1, 2, 3, 31, 32, 33, 64, 65, 127, 129, 200, 513],
        _ => &[1, 3, 63, 64, 65, 129, 200],
    };
    for &m in sizes {
        let what = format!("{what} tiles {diag} {} m {m}", schedule.name());
        assert_eq!(k.chains_factor(m), Some(schedule), "{what}");
        let c = problems::well_conditioned_spd(&mut problems::rng(900 + m as u64), m);
        let before = k.chained_factors();
        let l = factor(gpu, k, &c);
        assert_eq!(k.chained_factors(), before + 1, "{what}: not chained");
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "{what}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(e < tolerance(m), "{what}: backward error {e:.2e}");
        let lb = factor(gpu, base, &c);
        assert_eq!(
            l.as_slice(),
            lb.as_slice(),
            "{what}: not the base chain's factor"
        );
        if schedule != CholeskySchedule::Chain {
            continue;
        }
        // `factor` above poisoned `base`'s slots after `k`'s were filled; refill.
        factor(gpu, k, &c);
        for slot in 0..m.div_ceil(diag) {
            let (a, b) = (
                k.inverse_block(slot).unwrap(),
                base.inverse_block(slot).unwrap(),
            );
            let n = diag.min(m - slot * diag);
            for r in 0..n {
                for s in 0..n {
                    let (x, y) = (a[r * diag + s], b[r * diag + s]);
                    assert_eq!(x.to_bits(), y.to_bits(), "{what} slot {slot} ({r}, {s})");
                }
            }
        }
    }
    let m = 129;
    for column in [0, 1, 31, 32, 63, 64, 65, 100, 128] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= 500.0;
        let (got, pivot) = failure(gpu, k, &c);
        let (want, want_pivot) = failure(gpu, base, &c);
        assert_eq!((got, want), (column, column), "{what} tiles {diag}");
        assert_eq!(pivot, want_pivot, "{what} tiles {diag} column {column}");
    }
    let mut c = problems::well_conditioned_spd(&mut problems::rng(6), m);
    c[(70, 70)] = f32::NAN;
    assert_eq!(failure(gpu, k, &c).0, 70, "{what} tiles {diag}");
}

/// A chain whose forced give-up (before its first launch) is launched again to its own
/// factor, bit for bit.
fn assert_given_up_chain_refactors(gpu: &symraster::Gpu, k: &TiledKernels, what: &str) {
    for m in [1, 65, 200] {
        let c = problems::well_conditioned_spd(&mut problems::rng(90 + m as u64), m);
        let mut t = upload(gpu, &c);
        let before = k.chained_factors();
        cholesky::factor_after_chain_gives_up(k, &mut t).unwrap();
        assert_eq!(k.chained_factors(), before + 1, "{what} m {m}: not chained");
        let l = t.download_lower().unwrap();
        assert_eq!(l.as_slice(), factor(gpu, k, &c).as_slice(), "{what} m {m}");
    }
}

/// The chain's flags polled with the gave-up word read every few polls only (Sparse) and by
/// plain volatile loads (Load; Tuning::chain_poll): the waits change, the arithmetic does not,
/// so everything [`assert_same_chain`] checks is the atomic polls' bit for bit, in the chain
/// (columns, pairs folded and published early, tiles of 64) and the chained panels; and the
/// given-up path gives the same factor.
#[test]
fn the_chain_polled_sparsely_or_by_loads_gives_the_atomic_polls_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    assert_eq!(
        kernels(&gpu, 32, CholeskySchedule::Chain).chain_poll(),
        ChainPoll::Load
    );
    for name in ["atomic", "sparse", "load"] {
        assert_eq!(ChainPoll::parse(name).map(ChainPoll::name), Some(name));
    }
    assert_eq!(ChainPoll::parse("spin"), None);
    let cases = [
        (
            (32, CholeskySchedule::Chain, 512),
            DiagonalFactor::Columns,
            (false, false),
        ),
        (
            (32, CholeskySchedule::Chain, 512),
            DiagonalFactor::Pairs,
            (true, true),
        ),
        (
            (64, CholeskySchedule::Chain, 512),
            DiagonalFactor::Columns,
            (false, false),
        ),
        (
            (32, CholeskySchedule::Panels, 64),
            DiagonalFactor::Columns,
            (true, false),
        ),
    ];
    for (poll, (shape, way, fold)) in [ChainPoll::Sparse, ChainPoll::Load]
        .into_iter()
        .flat_map(|p| cases.map(|c| (p, c)))
    {
        let polled = poll_kernels(&gpu, shape, way, fold, poll);
        let atomic = poll_kernels(&gpu, shape, way, fold, ChainPoll::Atomic);
        assert_eq!(polled.chain_poll(), poll);
        let what = format!("{} {} fold {fold:?}", poll.name(), way.name());
        assert_same_chain(&gpu, &polled, &atomic, (shape.0, shape.1), &what);
    }
    for poll in [ChainPoll::Sparse, ChainPoll::Load] {
        let shape = (32, CholeskySchedule::Chain, 512);
        let k = poll_kernels(&gpu, shape, DiagonalFactor::Columns, (true, true), poll);
        assert_given_up_chain_refactors(&gpu, &k, poll.name());
    }
}

/// The folded tile published before the diagonal group's update from it
/// (Tuning::chain_fold_early): the same arithmetic as the folded chain, so everything
/// [`assert_same_chain`] checks is its bit for bit, with tiles of 32 and 64, columns and
/// pairs/quads, in the chain and the chained panels; and the given-up path.
#[test]
fn the_folded_chain_published_early_gives_the_folded_chains_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    assert!(!kernels(&gpu, 32, CholeskySchedule::Chain).chain_fold_early());
    for (shape, way) in [
        ((32, CholeskySchedule::Chain, 512), DiagonalFactor::Columns),
        ((32, CholeskySchedule::Chain, 512), DiagonalFactor::Pairs),
        ((64, CholeskySchedule::Chain, 512), DiagonalFactor::Columns),
        ((64, CholeskySchedule::Chain, 512), DiagonalFactor::Quads),
        ((32, CholeskySchedule::Panels, 64), DiagonalFactor::Columns),
    ] {
        let early = poll_kernels(&gpu, shape, way, (true, true), ChainPoll::Atomic);
        let late = poll_kernels(&gpu, shape, way, (true, false), ChainPoll::Atomic);
        assert!(early.chain_fold_early() && !late.chain_fold_early());
        let what = format!("early {}", way.name());
        assert_same_chain(&gpu, &early, &late, (shape.0, shape.1), &what);
    }
    let shape = (64, CholeskySchedule::Chain, 512);
    let k = poll_kernels(
        &gpu,
        shape,
        DiagonalFactor::Columns,
        (true, true),
        ChainPoll::Atomic,
    );
    assert_given_up_chain_refactors(&gpu, &k, "early");
}

/// How the chain waits, beside [`poll_kernels`]'s polls (left at their default): whether it
/// drops the barriers the next wait makes redundant (Tuning::chain_lean) and how many later
/// terms it checks at once after each wait (Tuning::chain_ahead); `None` leaves the default.
#[derive(Clone, Copy, Debug)]
struct Waits {
    lean: Option<bool>,
    ahead: Option<usize>,
}

/// The kernels with tiles, schedule and outer blocks of `shape`, the diagonal factor `factor`,
/// folded or not, waiting as `waits` says.
fn wait_kernels(
    gpu: &symraster::Gpu,
    shape: (usize, CholeskySchedule, usize),
    factor: DiagonalFactor,
    fold: bool,
    waits: Waits,
) -> TiledKernels {
    tuned(
        gpu,
        &Tuning {
            diagonal_factor: Some(factor),
            chain_fold: Some(fold),
            chain_lean: waits.lean,
            chain_ahead: waits.ahead,
            ..shaped(shape)
        },
    )
}

/// A chain compared waiting two ways: its tiles, schedule and outer blocks, diagonal factor,
/// fold, then the waits checked and those of the base.
type WaitCase = (
    (usize, CholeskySchedule, usize),
    DiagonalFactor,
    bool,
    Waits,
    Waits,
);

/// For each case of `cases`: the chain waiting one way gives everything [`assert_same_chain`]
/// checks of the chain waiting the other, bit for bit (the waits change, the arithmetic does
/// not); then the given-up path of the first case's.
fn assert_waits_give_the_same_chain(gpu: &symraster::Gpu, cases: &[WaitCase]) {
    for &(shape, way, fold, waits, base) in cases {
        let k = wait_kernels(gpu, shape, way, fold, waits);
        let b = wait_kernels(gpu, shape, way, fold, base);
        let what = format!("{waits:?} against {base:?}, {} fold {fold}", way.name());
        if let Some(lean) = waits.lean {
            assert_eq!(k.chain_lean(), lean, "{what}");
        }
        if let Some(ahead) = waits.ahead {
            assert_eq!(k.chain_ahead(), ahead, "{what}");
        }
        assert_same_chain(gpu, &k, &b, (shape.0, shape.1), &what);
    }
    let (shape, way, fold, waits, _) = cases[0];
    let k = wait_kernels(gpu, shape, way, fold, waits);
    assert_given_up_chain_refactors(gpu, &k, &format!("{waits:?}"));
}

/// The chain without the barrier after each term's last slice where the next term's wait
/// follows (Tuning::chain_lean): the same arithmetic, so everything [`assert_same_chain`]
/// checks is the full barriers' bit for bit (tiles of 32: one slice per term; of 64: two),
/// folded or not, in the chain and the chained panels; and the given-up path.
#[test]
fn the_lean_chain_gives_the_chains_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    assert!(kernels(&gpu, 32, CholeskySchedule::Chain).chain_lean());
    let (chain, panels) = (CholeskySchedule::Chain, CholeskySchedule::Panels);
    let lean = |lean| Waits {
        lean: Some(lean),
        ahead: None,
    };
    let cases = [
        ((32, chain, 512), DiagonalFactor::Columns, false),
        ((32, chain, 512), DiagonalFactor::Pairs, true),
        ((64, chain, 512), DiagonalFactor::Columns, false),
        ((64, chain, 512), DiagonalFactor::Quads, true),
        ((32, panels, 64), DiagonalFactor::Columns, true),
    ]
    .map(|(shape, way, fold)| (shape, way, fold, lean(true), lean(false)));
    assert_waits_give_the_same_chain(&gpu, &cases);
}

/// The chain checking later terms at once after each wait (Tuning::chain_ahead): the waits
/// change, the arithmetic does not, so everything [`assert_same_chain`] checks is the chain
/// waiting for every term's bit for bit (tiles of 32 and 64, folded or not, looking 1, 5 or
/// 32 terms ahead, lean or not, in the chain and the chained panels); the given-up path; a
/// look-ahead the work group cannot check is refused by name.
#[test]
fn the_chain_looking_ahead_gives_the_chains_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    assert_eq!(
        kernels(&gpu, 32, CholeskySchedule::Chain).chain_ahead(),
        symraster::tiled::schedule::CHAIN_AHEAD
    );
    let (chain, panels) = (CholeskySchedule::Chain, CholeskySchedule::Panels);
    let ahead = |ahead, lean| Waits {
        lean: Some(lean),
        ahead: Some(ahead),
    };
    let cases = [
        ((32, chain, 512), DiagonalFactor::Columns, false, 32, true),
        ((32, chain, 512), DiagonalFactor::Pairs, true, 1, true),
        ((32, chain, 512), DiagonalFactor::Pairs, true, 5, false),
        ((64, chain, 512), DiagonalFactor::Columns, false, 32, true),
        ((32, panels, 64), DiagonalFactor::Columns, true, 32, true),
    ]
    .map(|(shape, way, fold, n, lean)| (shape, way, fold, ahead(n, lean), ahead(0, lean)));
    assert_waits_give_the_same_chain(&gpu, &cases);
    let shape = (32, CholeskySchedule::Chain, 512);
    // Tiles of 32 run 16 x 16 invocations: at most 64 terms (CHAIN_AHEAD_MAX), two flags each.
    let t = Tuning {
        chain_ahead: Some(65),
        ..shaped(shape)
    };
    match TiledKernels::tuned(gpu.context(), symraster::tiled::KernelConfig::GPU, &t) {
        Err(e) => assert!(
            e.to_string().contains("look-ahead of 65 terms"),
            "unexpected error: {e}"
        ),
        Ok(_) => panic!("a look-ahead of 65 terms was taken"),
    }
}
