//! The tiled Cholesky with the block sizes the benchmark sweeps (diagonal blocks of 64 and 128
//! factored by 32 x 32 invocations, inner updates of their depth unpacked and fused with the
//! next diagonal block, or not fused) against the f64 reference, with the shared-memory
//! kernels the GPUs run: orders around the block widths (nb − 1, nb, nb + 1, 2nb + 1) and tiny
//! ones, full and RFP, the upper triangle NaN (never read) and staying NaN, the factor's
//! launches counted per kind, the storage split over several buffers, and a matrix that is not
//! positive definite failing at LAPACK's column.

use crate::common;

use symraster::internal::GpuInternals;
use symraster::tiled::{
    CholeskySchedule, DiagonalFactor, KernelConfig, LaunchKind, Storage, TiledKernels, TiledMatrix,
    cholesky,
};
use symraster::{Error, Matrix, NumericalError, Tuning, problems, reference, relative_error};

const MAX: u64 = i32::MAX as u64;

/// The tuning of diagonal blocks of `diag`, outer blocks of `outer`, fused or not.
fn blocks(diag: usize, outer: usize, fused: bool) -> Tuning {
    Tuning {
        diagonal_block: Some(diag),
        outer_block: Some(outer),
        fused_diagonal: Some(fused),
        ..Tuning::default()
    }
}

/// The GPUs' kernels with diagonal blocks of `diag`, outer blocks of `outer`, fused or not.
fn kernels(gpu: &symraster::Gpu, diag: usize, outer: usize, fused: bool) -> TiledKernels {
    TiledKernels::tuned(
        gpu.context(),
        KernelConfig::GPU,
        &blocks(diag, outer, fused),
    )
    .unwrap()
}

/// [`kernels`] with the Cholesky's schedule pinned to the blocked one, whose launches these
/// block sizes shape (on GPUs full storage is chained by default: one launch of no kind below).
fn blocked_kernels(gpu: &symraster::Gpu, diag: usize, outer: usize, fused: bool) -> TiledKernels {
    let tuning = Tuning {
        cholesky_schedule: Some(CholeskySchedule::Blocked),
        ..blocks(diag, outer, fused)
    };
    TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &tuning).unwrap()
}

/// `config`'s kernels with diagonal blocks of `diag` factored by `factor`, outer blocks of
/// `outer`, fused or not.
fn factor_kernels(
    gpu: &symraster::Gpu,
    config: KernelConfig,
    factor: DiagonalFactor,
    (diag, outer, fused): (usize, usize, bool),
) -> TiledKernels {
    let tuning = Tuning {
        diagonal_block: Some(diag),
        outer_block: Some(outer),
        fused_diagonal: Some(fused),
        diagonal_factor: Some(factor),
        ..Tuning::default()
    };
    let k = TiledKernels::tuned(gpu.context(), config, &tuning).unwrap();
    assert_eq!(k.diagonal_factor(), factor);
    k
}

/// The orders every diagonal factor is checked at: tiny, around the panels (16), the blocks
/// (32, 64, 128) and their multiples, and larger.
const ORDERS: [usize; 14] = [1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 513];

/// The f64 reference factor's inverse (forward substitution, column by column).
fn lower_inverse(l: &Matrix<f64>) -> Matrix<f64> {
    let n = l.rows();
    let mut x = Matrix::from_fn(n, n, |_, _| 0.0);
    for c in 0..n {
        for r in c..n {
            let mut v = if r == c { 1.0 } else { 0.0 };
            for k in c..r {
                v -= l[(r, k)] * x[(k, c)];
            }
            x[(r, c)] = v / l[(r, r)];
        }
    }
    x
}

/// Both diagonal factors (column by column and in panels), with the GPUs' kernels (work groups
/// of 16 x 16 or 32 x 32, the fused updates' 16 x 16) and the texel kernels (8 x 4), at every
/// order of [`ORDERS`], full (NaN above the diagonal, staying NaN) and RFP, against the f64
/// reference by relative error (a tolerance growing with the order).
#[test]
fn both_diagonal_factors_match_the_reference_at_every_order() {
    let gpu = common::gpu();
    let variants = [
        (KernelConfig::GPU, (32, 64, true)),
        (KernelConfig::GPU, (64, 128, false)),
        (KernelConfig::GPU, (64, 128, true)),
        (KernelConfig::GPU, (128, 256, false)),
        (KernelConfig::TEXEL, (32, 64, false)),
        (KernelConfig::TEXEL, (64, 128, false)),
    ];
    for factor in DiagonalFactor::ALL {
        for (config, blocks) in variants {
            let k = factor_kernels(&gpu, config, factor, blocks);
            for m in ORDERS {
                let c = spd(m);
                let l_ref = reference::cholesky(&c.to_f64()).unwrap();
                let tolerance = 1e-5 + 2e-7 * m as f64;
                for storage in [Storage::Full, Storage::Rfp] {
                    let mut l = TiledMatrix::from_lower(gpu.context(), &c, storage, MAX).unwrap();
                    cholesky::factor(&k, &mut l).unwrap();
                    let e = relative_error(&l.download_lower().unwrap().to_f64(), &l_ref);
                    assert!(
                        e < tolerance,
                        "{factor:?} {blocks:?} texel {} {storage:?} m {m}: error {e}",
                        config.texel
                    );
                    if storage == Storage::Full {
                        let raw = l.download_raw().unwrap();
                        let ld = raw.len() / m;
                        assert!(
                            (0..m).all(|i| (i + 1..m).all(|j| raw[i * ld + j].is_nan())),
                            "{factor:?} {blocks:?} m {m}: the upper triangle was written"
                        );
                    }
                }
            }
        }
    }
}

/// One diagonal block (the whole matrix, of order n ≤ the block's) factored and inverted by
/// each factor: the factor and the inverse left in the (NaN-poisoned) slot match the f64
/// reference, zeros above the inverse's diagonal, every entry of the order written.
#[test]
fn one_diagonal_block_and_its_inverse_match_the_reference() {
    let gpu = common::gpu();
    for factor in DiagonalFactor::ALL {
        for (config, diag) in [
            (KernelConfig::GPU, 16),
            (KernelConfig::GPU, 32),
            (KernelConfig::GPU, 64),
            (KernelConfig::GPU, 128),
            (KernelConfig::TEXEL, 32),
        ] {
            let k = factor_kernels(&gpu, config, factor, (diag, diag, false));
            for n in [1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128] {
                if n > diag {
                    continue;
                }
                let c = spd(n);
                let l_ref = reference::cholesky(&c.to_f64()).unwrap();
                let x_ref = lower_inverse(&l_ref);
                let mut l = TiledMatrix::from_lower(gpu.context(), &c, Storage::Full, MAX).unwrap();
                k.poison_inverses(1).unwrap();
                let before = k.launch_counts();
                cholesky::factor(&k, &mut l).unwrap();
                let launches = k.launch_counts().since(&before);
                assert_eq!(launches.total(), 1, "{launches}");
                let what = format!("{factor:?} diag {diag} texel {} n {n}", config.texel);
                let e = relative_error(&l.download_lower().unwrap().to_f64(), &l_ref);
                assert!(e < 1e-5 + 1e-7 * n as f64, "{what}: factor error {e}");
                let inv = k.inverse_block(0).unwrap();
                let x = Matrix::from_fn(n, n, |r, c| inv[r * diag + c] as f64);
                assert!(
                    (0..n).all(|r| (r + 1..n).all(|c| x[(r, c)] == 0.0)),
                    "{what}: the inverse is not lower triangular"
                );
                let e = relative_error(&x, &x_ref);
                assert!(e < 1e-5 + 1e-7 * n as f64, "{what}: inverse error {e}");
            }
        }
    }
}

/// A well-conditioned SPD matrix of order m (seeded by m).
fn spd(m: usize) -> Matrix<f32> {
    problems::well_conditioned_spd(&mut problems::rng(m as u64 + 11), m)
}

/// The blocked Cholesky (pinned: [`blocked_kernels`]) with larger diagonal blocks, fused with
/// the inner updates or not, at orders around their widths, full and RFP: the f64 reference's
/// factor within 1e-4, the full format's upper triangle still NaN, and its launches by kind
/// (diagonal blocks, fused inner updates, packing copies) as the blocking sets them.
#[test]
fn larger_diagonal_blocks_match_the_reference_around_their_widths() {
    let gpu = common::gpu();
    // Blocks of 32 in outer blocks of 64: trailing updates deep enough to pack, fused with the
    // next diagonal block (m = 193: all but the last, of one column).
    for (diag, outer, fused) in [
        (32, 64, true),
        (64, 128, true),
        (64, 128, false),
        (128, 256, true),
    ] {
        let k = blocked_kernels(&gpu, diag, outer, fused);
        let mut orders = vec![1, 2, 3, diag - 1, diag, diag + 1, 2 * diag + 1];
        if diag == 32 {
            orders.push(193);
        }
        for m in orders {
            let c = spd(m);
            let l_ref = reference::cholesky(&c.to_f64()).unwrap();
            for storage in [Storage::Full, Storage::Rfp] {
                // Full storage goes up with NaN above the diagonal.
                let mut l = TiledMatrix::from_lower(gpu.context(), &c, storage, MAX).unwrap();
                let before = k.launch_counts();
                cholesky::factor(&k, &mut l).unwrap();
                let launches = k.launch_counts().since(&before);
                assert_eq!(k.chained_factors(), 0, "m {m}: the factor was chained");
                let e = relative_error(&l.download_lower().unwrap().to_f64(), &l_ref);
                assert!(
                    e < 1e-4,
                    "diag {diag} fused {fused} {storage:?} m {m}: error {e}"
                );
                if storage == Storage::Full {
                    let raw = l.download_raw().unwrap();
                    let ld = raw.len() / m;
                    assert!(
                        (0..m).all(|i| (i + 1..m).all(|j| raw[i * ld + j].is_nan())),
                        "diag {diag} m {m}: the upper triangle was written"
                    );
                }
                // One diagonal block per block column of diag (RFP: per half), fewer where the
                // inner updates factor the next one.
                let blocks = m.div_ceil(diag) as u64 + u64::from(storage == Storage::Rfp);
                let diagonal = launches.of(LaunchKind::DiagonalBlock);
                assert!(diagonal >= 1 && diagonal <= blocks, "m {m}: {launches}");
                // (The fused kernel's quarter-size tiles hold blocks of up to 64.)
                if fused && diag <= 64 && storage == Storage::Full && m > diag {
                    assert!(
                        launches.of(LaunchKind::InnerUpdate) >= 1 && diagonal < blocks,
                        "diag {diag} m {m}: no fused update ({launches})"
                    );
                }
                if (diag, m, storage) == (32, 193, Storage::Full) {
                    assert_eq!(diagonal, 2, "{launches}");
                    assert_eq!(launches.of(LaunchKind::Copy), 2, "{launches}");
                }
                // No product of the diagonal blocks' depth is packed.
                if m <= 2 * diag {
                    assert_eq!(launches.of(LaunchKind::Copy), 0, "m {m}: {launches}");
                }
            }
        }
    }
}

#[test]
fn a_matrix_not_positive_definite_fails_at_lapacks_column_with_larger_blocks() {
    let gpu = common::gpu();
    // Columns that start blocks factored by fused inner and trailing updates, and others.
    let m = 3 * 64 + 1;
    for (factor, (diag, outer, fused)) in DiagonalFactor::ALL.into_iter().flat_map(|f| {
        [
            (32, 64, true),
            (64, 128, true),
            (128, 256, true),
            (64, 128, false),
        ]
        .map(|b| (f, b))
    }) {
        let k = factor_kernels(&gpu, KernelConfig::GPU, factor, (diag, outer, fused));
        for column in [0, 1, 63, 64, 65, 127, 128, 160, 192] {
            let mut c = spd(m);
            c[(column, column)] -= 1000.0;
            let Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: want, .. })) =
                reference::cholesky(&c.to_f64())
            else {
                panic!("the reference factored column {column}'s matrix");
            };
            for storage in [Storage::Full, Storage::Rfp] {
                let mut l = TiledMatrix::from_lower(gpu.context(), &c, storage, MAX).unwrap();
                match cholesky::factor(&k, &mut l) {
                    Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                        column: got,
                        ..
                    })) => assert_eq!(got, want, "{factor:?} diag {diag} {storage:?}"),
                    other => {
                        panic!("{factor:?} diag {diag} {storage:?} column {column}: got {other:?}")
                    }
                }
            }
        }
    }
}

/// The dry run counts what a real factorization launches, and runs nothing.
#[test]
fn a_dry_run_counts_the_launches_of_a_real_factorization() {
    let gpu = common::gpu();
    let k = kernels(&gpu, 32, 64, true);
    let m = 3 * 64 + 5;
    let c = spd(m);
    let mut l = TiledMatrix::from_lower(gpu.context(), &c, Storage::Full, MAX).unwrap();
    let counted = symraster::tiled::bench::count_cholesky(&k, m, Storage::Full, None).unwrap();
    let before = k.launch_counts();
    cholesky::factor(&k, &mut l).unwrap();
    assert_eq!(k.launch_counts().since(&before), counted);
    assert!(counted.total() > 0);
    // The dry run left nothing behind: the next factorization is right.
    let e = relative_error(
        &l.download_lower().unwrap().to_f64(),
        &reference::cholesky(&c.to_f64()).unwrap(),
    );
    assert!(e < 1e-4, "{e}");
}

/// Split over several storage buffers (about a third of the matrix each), the fused updates
/// run where their operands lie in one buffer and the plain products elsewhere: the factor
/// still matches the reference, full and RFP.
#[test]
fn larger_blocks_over_several_buffers_match_the_reference() {
    let gpu = common::gpu();
    for (diag, outer) in [(32, 64), (64, 128)] {
        let k = kernels(&gpu, diag, outer, true);
        for m in [193, 261] {
            let c = spd(m);
            let l_ref = reference::cholesky(&c.to_f64()).unwrap();
            for storage in [Storage::Full, Storage::Rfp] {
                let part = (storage.len(m) as u64 * 4).div_ceil(3);
                let mut l = TiledMatrix::from_lower(gpu.context(), &c, storage, part).unwrap();
                assert!(l.part_count() > 1, "{storage:?} m {m}: one buffer");
                cholesky::factor(&k, &mut l).unwrap();
                let e = relative_error(&l.download_lower().unwrap().to_f64(), &l_ref);
                assert!(e < 1e-4, "diag {diag} {storage:?} m {m}: error {e}");
            }
        }
    }
}
