//! The Cholesky split in halves (`CholeskySchedule::Split`, src/tiled/cholesky_split.rs) with
//! small chain orders forced through the tuning, so that both halves and the recursion run at
//! small m: L against the f64 reference (relative backward error) and against the blocked
//! factor, 1e30 in the upper triangle it must not read and the inverse slots poisoned with
//! NaN; the failing column in either half as the blocked path names it, the earliest of two;
//! the chain's given-up path to the same factor; RFP's halves in one buffer and over several.
//! llvmpipe runs on one thread (work groups in ticket order, no waits: the chained leaves
//! run as chains, which the tests count).

use crate::common::chain::{
    MAX, backward_error, factor, failure, gpu, tolerance, tuned, upload_in as upload,
};

use symraster::tiled::cholesky::split::{factor_split_after_chain_gives_up, left_width};
use symraster::tiled::schedule::{CholeskySchedule, SplitSolve};
use symraster::tiled::{Storage, TiledKernels, cholesky};
use symraster::tuning::Tuning;
use symraster::{Error, NumericalError, problems};

/// Kernels with diagonal tiles of 32 and the Cholesky split down to halves of `chain_order`.
fn split_kernels(gpu: &symraster::Gpu, chain_order: usize) -> TiledKernels {
    split_kernels_solving(gpu, chain_order, None)
}

/// [`split_kernels`] solving L21 below the chained halves by `solve`.
fn split_kernels_solving(
    gpu: &symraster::Gpu,
    chain_order: usize,
    solve: Option<SplitSolve>,
) -> TiledKernels {
    let t = Tuning {
        diagonal_block: Some(32),
        cholesky_schedule: Some(CholeskySchedule::Split),
        split_chain_order: Some(chain_order),
        split_solve: solve,
        ..Tuning::default()
    };
    let k = tuned(gpu, &t);
    assert_eq!(k.split_chain_order(), chain_order);
    k
}

/// Kernels with diagonal tiles of 32 and the blocked Cholesky.
fn blocked_kernels(gpu: &symraster::Gpu) -> TiledKernels {
    let t = Tuning {
        diagonal_block: Some(32),
        cholesky_schedule: Some(CholeskySchedule::Blocked),
        ..Tuning::default()
    };
    tuned(gpu, &t)
}

/// The chained leaves of a split of order m: halves split while wider than the chain order.
fn leaves(n: usize, chain_order: usize) -> u64 {
    match n {
        0 => 0,
        n if n <= chain_order.max(32) => 1,
        n => {
            let n1 = left_width(n, 32);
            leaves(n1, chain_order) + leaves(n - n1, chain_order)
        }
    }
}

/// `c` factored by `split`: `leaves` chained factorizations, no NaN, against the reference
/// (relative backward error) and the blocked factor within the size's tolerance; L.
fn assert_split_factor(
    gpu: &symraster::Gpu,
    (split, blocked): (&TiledKernels, &TiledKernels),
    c: &symraster::Matrix<f32>,
    leaves: u64,
    what: &str,
) -> symraster::Matrix<f32> {
    let m = c.rows();
    let before = split.chained_factors();
    let l = factor(gpu, split, c);
    assert_eq!(
        split.chained_factors() - before,
        leaves,
        "{what}: not every half chained"
    );
    assert!(
        l.as_slice().iter().all(|v| v.is_finite()),
        "{what}: NaN left"
    );
    let e = backward_error(&l.to_f64(), c);
    assert!(e < tolerance(m), "{what}: backward error {e:.2e}");
    let d = symraster::relative_error(&l, &factor(gpu, blocked, c));
    assert!(d < tolerance(m), "{what}: {d:.2e} from the blocked factor");
    l
}

#[test]
fn the_split_factor_matches_the_reference_and_the_blocked_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let blocked = blocked_kernels(&gpu);
    for (chain_order, sizes) in [
        (
            64,
            &[
                1, 2, 3, 63, 64, 65, 127, 128, 129, 200, 511, 512, 513, 1000, 1025,
            ][..],
        ),
        (256, &[255, 256, 257, 513, 1025][..]),
    ] {
        let split = split_kernels(&gpu, chain_order);
        for &m in sizes {
            let what = format!("chain order {chain_order} m {m}");
            assert_eq!(
                split.chains_factor(m),
                Some(CholeskySchedule::Split),
                "{what}"
            );
            let c = problems::well_conditioned_spd(&mut problems::rng(40 + m as u64), m);
            let kernels = (&split, &blocked);
            assert_split_factor(&gpu, kernels, &c, leaves(m, chain_order), &what);
        }
    }
}

#[test]
fn a_failing_column_in_either_half_is_the_blocked_paths_and_the_earliest_wins() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let split = split_kernels(&gpu, 64);
    let blocked = blocked_kernels(&gpu);
    // m = 200: halves of 128 (two chained leaves of 64) and 72 (64 and 8).
    let m = 200;
    for column in [0, 5, 63, 64, 100, 127, 128, 150, 191, 192, 199] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(8), m);
        c[(column, column)] -= 500.0;
        let (got, pivot) = failure(&gpu, &split, &c);
        let (want, want_pivot) = failure(&gpu, &blocked, &c);
        assert_eq!((got, want), (column, column));
        assert!(
            (pivot - want_pivot).abs() <= 1e-3 * want_pivot.abs(),
            "column {column}: pivot {pivot} against the blocked {want_pivot}"
        );
    }
    // Failures in both halves (and a NaN pivot in the first): the first half's column, its
    // NaN carried through the solve and the products into the second half.
    for (first, second) in [(30, 150), (100, 128), (0, 199)] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(9), m);
        c[(first, first)] -= 500.0;
        c[(second, second)] -= 500.0;
        assert_eq!(failure(&gpu, &split, &c).0, first, "{first} and {second}");
        c[(first, first)] = f32::NAN;
        assert_eq!(failure(&gpu, &split, &c).0, first, "NaN at {first}");
    }
}

/// The first chained leaf told it gave up before it runs is launched again on the tiles it
/// published: the same factor, bit for bit, and the same failing column.
#[test]
fn a_split_whose_first_chain_gave_up_gives_the_same_factor() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let split = split_kernels(&gpu, 64);
    for m in [1, 65, 200] {
        let c = problems::well_conditioned_spd(&mut problems::rng(90 + m as u64), m);
        let mut t = upload(&gpu, &c, Storage::Full, MAX);
        let before = split.chained_factors();
        factor_split_after_chain_gives_up(&split, &mut t).unwrap();
        assert_eq!(split.chained_factors() - before, leaves(m, 64), "m {m}");
        let l = t.download_lower().unwrap();
        assert_eq!(l.as_slice(), factor(&gpu, &split, &c).as_slice(), "m {m}");
        let mut bad = c.clone();
        let column = m / 2;
        bad[(column, column)] -= 500.0;
        let mut t = upload(&gpu, &bad, Storage::Full, MAX);
        match factor_split_after_chain_gives_up(&split, &mut t) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, .. })) => {
                assert_eq!(got, column, "m {m}")
            }
            other => panic!("m {m}: expected NotPositiveDefinite, got {other:?}"),
        }
    }
}

/// RFP's two halves factored by the split (chained where the half lies in one buffer, blocked
/// where it spans two), against the reference and with a failing column in the second half.
#[test]
fn rfp_halves_are_split_too() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let split = split_kernels(&gpu, 64);
    for (m, part_bytes) in [(3, MAX), (65, MAX), (200, MAX), (257, MAX), (257, 64 << 10)] {
        let c = problems::well_conditioned_spd(&mut problems::rng(500 + m as u64), m);
        let mut t = upload(&gpu, &c, Storage::Rfp, part_bytes);
        split.poison_inverses(m.div_ceil(32)).unwrap();
        let before = split.chained_factors();
        cholesky::factor(&split, &mut t).unwrap();
        if part_bytes == MAX && m > 3 {
            assert!(split.chained_factors() > before, "m {m}: no half chained");
        }
        let l = t.download_lower().unwrap();
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "m {m}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(
            e < tolerance(m),
            "m {m} parts {part_bytes}: backward error {e:.2e}"
        );
        let column = m - 1 - m / 5;
        let mut bad = c.clone();
        bad[(column, column)] -= 500.0;
        let mut t = upload(&gpu, &bad, Storage::Rfp, part_bytes);
        match cholesky::factor(&split, &mut t) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, .. })) => {
                assert_eq!(got, column, "m {m}")
            }
            other => panic!("m {m}: expected NotPositiveDefinite, got {other:?}"),
        }
    }
}

/// The split with L21 solved by blocks of 128 inverted in one launch and wide products
/// (left- and right-looking, outer blocks of one and several inner blocks): the reference,
/// the blocked factor, failing columns in either half, RFP over one buffer and several.
#[test]
fn the_split_with_the_wide_solve_matches_the_reference_and_the_blocked_factor() {
    let wide = |block, width, left| SplitSolve::Blocks { block, width, left };
    check_split_solves(
        &[
            (64, wide(128, 128, true), &[65, 129, 200][..]),
            (256, wide(128, 128, true), &[257, 300, 513][..]),
            (256, wide(128, 128, false), &[300, 513][..]),
            (256, wide(64, 128, true), &[300][..]),
            (512, wide(128, 256, false), &[513, 1025][..]),
            (512, wide(128, 384, true), &[1025][..]),
        ],
        wide(128, 128, false),
    );
}

/// The split with L21 solved by rows (glsl/tiled/trsm_rows.comp: one launch per outer block,
/// outer blocks of one and several diagonal blocks, 4 to 64 rows per work group), checked as
/// the wide solve is.
#[test]
fn the_split_with_the_row_solve_matches_the_reference_and_the_blocked_factor() {
    let rows = |width, rows, leaf, block| SplitSolve::Rows {
        width,
        rows,
        leaf,
        block,
    };
    // The leaves' tiles are 32: blocks of 32 and of 64.
    check_split_solves(
        &[
            (64, rows(32, 4, 1 << 20, 32), &[65, 129, 200][..]),
            (256, rows(128, 32, 1 << 20, 64), &[257, 300, 513][..]),
            (256, rows(100, 8, 1 << 20, 32), &[300][..]),
            (512, rows(512, 64, 1 << 20, 32), &[513, 1025][..]),
            (128, rows(32, 32, 64, 64), &[300, 513][..]),
        ],
        rows(64, 16, 96, 64),
    );
}

/// Each (chain order, solve, orders) of `solves` against the reference and the blocked factor,
/// then `failing`'s failing columns and RFP.
fn check_split_solves(solves: &[(usize, SplitSolve, &[usize])], failing: SplitSolve) {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let blocked = blocked_kernels(&gpu);
    for &(chain_order, solve, sizes) in solves {
        let split = split_kernels_solving(&gpu, chain_order, Some(solve));
        match solve {
            SplitSolve::Blocks { block, .. } => assert!(split.solves_by_wide_blocks(block)),
            SplitSolve::Rows { rows, block, .. } => assert!(split.solves_by_rows(rows, block)),
            SplitSolve::Tiles => {}
        }
        for &m in sizes {
            let what = format!("chain order {chain_order} solve {} m {m}", solve.name());
            let c = problems::well_conditioned_spd(&mut problems::rng(70 + m as u64), m);
            let kernels = (&split, &blocked);
            assert_split_factor(&gpu, kernels, &c, leaves(m, chain_order), &what);
        }
    }
    let split = split_kernels_solving(&gpu, 64, Some(failing));
    // m = 200: halves of 128 (two chained leaves of 64) and 72 (64 and 8).
    let m = 200;
    for column in [0, 63, 64, 127, 128, 191, 199] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(8), m);
        c[(column, column)] -= 500.0;
        let (got, _) = failure(&gpu, &split, &c);
        let (want, _) = failure(&gpu, &blocked, &c);
        assert_eq!((got, want), (column, column));
    }
    for (first, second) in [(30, 150), (100, 128)] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(9), m);
        c[(first, first)] -= 500.0;
        c[(second, second)] -= 500.0;
        assert_eq!(failure(&gpu, &split, &c).0, first, "{first} and {second}");
    }
    for (m, part_bytes) in [(200, MAX), (257, MAX), (257, 64 << 10)] {
        let c = problems::well_conditioned_spd(&mut problems::rng(600 + m as u64), m);
        let mut t = upload(&gpu, &c, Storage::Rfp, part_bytes);
        split.poison_inverses(m.div_ceil(32)).unwrap();
        cholesky::factor(&split, &mut t).unwrap();
        let l = t.download_lower().unwrap();
        assert!(
            l.as_slice().iter().all(|v| v.is_finite()),
            "RFP m {m}: NaN left"
        );
        let e = backward_error(&l.to_f64(), &c);
        assert!(
            e < tolerance(m),
            "RFP m {m} parts {part_bytes}: backward error {e:.2e}"
        );
    }
}

/// The split's products cut into launches of blocks (`PanelVariant::cut` of 256, the GPUs'
/// default 4096 scaled down): at m = 1100 with halves of 512 the trailing SYRKs (524 rows,
/// depth 576) and the solves' products are cut, the masks shifted per block; the factor must
/// be the uncut one's bits, full storage and RFP.
#[test]
fn the_split_with_its_products_cut_gives_the_uncut_bits() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let kernels = |panel: &str| {
        let t = Tuning {
            diagonal_block: Some(32),
            cholesky_schedule: Some(CholeskySchedule::Split),
            split_chain_order: Some(512),
            panel: symraster::tiled::PanelVariant::parse(panel),
            ..Tuning::default()
        };
        tuned(&gpu, &t)
    };
    let (whole, cut) = (kernels("4,1,0,0,1,1"), kernels("4,1,0,0,1,1,256"));
    let m = 1100;
    let c = problems::well_conditioned_spd(&mut problems::rng(1100), m);
    for s in [Storage::Full, Storage::Rfp] {
        let run = |k: &TiledKernels| {
            let mut t = upload(&gpu, &c, s, MAX);
            let packs = k.packs();
            cholesky::factor(k, &mut t).unwrap();
            (t.download_raw().unwrap(), k.packs() - packs)
        };
        let ((want, packs_whole), (got, packs_cut)) = (run(&whole), run(&cut));
        assert!(packs_cut > packs_whole, "{s:?}: nothing was cut");
        let same = want
            .iter()
            .zip(&got)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
        assert!(
            same && want.len() == got.len(),
            "{s:?}: the cut factor's bits differ"
        );
    }
}

/// The chain on tiles of 32 apart from the blocked factor's 64 (`Tuning::chain_tile`, the GPUs'
/// default pairing): the split gives the bits of the split whose blocked factor is on tiles of
/// 32 too, with the row solve (which inverts its own blocks) and with `SplitSolve::Tiles` (whose
/// products read the chain's inverted tiles in the chain's order, not the blocked factor's);
/// the failing column either way; RFP keeps the blocked factor on tiles of 64.
#[test]
fn the_chain_on_its_own_tiles_gives_the_split_of_one_order() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let blocked = blocked_kernels(&gpu);
    for solve in [None, Some(SplitSolve::Tiles)] {
        let t = Tuning {
            diagonal_block: Some(64),
            chain_tile: Some(32),
            cholesky_schedule: Some(CholeskySchedule::Split),
            split_chain_order: Some(64),
            split_solve: solve,
            ..Tuning::default()
        };
        let apart = tuned(&gpu, &t);
        assert_eq!((apart.diag(), apart.chain_tile()), (64, 32));
        let one = split_kernels_solving(&gpu, 64, solve);
        for m in [1, 2, 33, 64, 65, 129, 200, 513] {
            let what = format!("solve {solve:?} m {m}");
            let c = problems::well_conditioned_spd(&mut problems::rng(300 + m as u64), m);
            let l = assert_split_factor(&gpu, (&apart, &blocked), &c, leaves(m, 64), &what);
            let lo = factor(&gpu, &one, &c);
            assert_eq!(l.as_slice(), lo.as_slice(), "{what}: not one order's bits");
        }
        for column in [0, 63, 64, 150, 199] {
            let mut c = problems::well_conditioned_spd(&mut problems::rng(8), 200);
            c[(column, column)] -= 500.0;
            assert_eq!(failure(&gpu, &apart, &c).0, column, "solve {solve:?}");
        }
        let m = 257;
        let c = problems::well_conditioned_spd(&mut problems::rng(700), m);
        let mut r = upload(&gpu, &c, Storage::Rfp, MAX);
        cholesky::factor(&apart, &mut r).unwrap();
        let e = backward_error(&r.download_lower().unwrap().to_f64(), &c);
        assert!(e < tolerance(m), "RFP: backward error {e:.2e}");
    }
}

/// Whether the split chains depends on its leaves, not on the whole order: at 16384 on tiles
/// of 32 the whole triangle is 131,328 tiles, past the 65,535 work groups many devices launch
/// at most (llvmpipe's among them), where each leaf of 4096 takes 8,256; a chain of the whole
/// order runs only where the device launches that many.
#[test]
fn the_split_chains_any_order_whose_leaves_fit_one_launch() {
    let gpu = gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let split = split_kernels(&gpu, 4096);
    assert_eq!(split.chain_tile(), 32);
    for m in [4097, 8192, 16384, 1 << 20] {
        assert_eq!(
            split.chains_factor(m),
            Some(CholeskySchedule::Split),
            "m {m}"
        );
    }
    let t = Tuning {
        diagonal_block: Some(32),
        cholesky_schedule: Some(CholeskySchedule::Chain),
        ..Tuning::default()
    };
    let chain = tuned(&gpu, &t);
    let fits = 512 * 513 / 2 <= chain.limits().max_groups_x as usize;
    assert_eq!(
        chain.chains_factor(16384),
        fits.then_some(CholeskySchedule::Chain)
    );
}
