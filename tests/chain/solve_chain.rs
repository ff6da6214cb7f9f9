//! The solves of one-column right sides (glsl/tiled/trsv_chain.comp) and of right sides of up
//! to 32 columns (glsl/tiled/trsv_chain_cols.comp) as one chained launch each way:
//! against the f64 solve with the same factor, full and RFP storage, orders around the
//! inverted blocks' 128 and RFP's halves, NaN in the upper triangle the solve must not read.
//! llvmpipe runs here on one thread so that no work group waits long enough to give up (the
//! fallback to the blocked solve is what runs otherwise, and the solve is right either way).

use crate::common;

use crate::common::widen;
use symraster::internal::GpuInternals;
use symraster::tiled::{
    DeviceProduct, DeviceRhs, KernelConfig, Storage, TiledKernels, TiledMatrix, assembly, cholesky,
    solve,
};
use symraster::{Matrix, least_squares, problems, reference, relative_error};

const MAX: u64 = i32::MAX as u64;

/// A factored test problem of order m in `storage`: C = A·diag(d)·Aᵀ assembled into a
/// NaN-filled matrix (the upper triangle stays NaN) and factored, L read back in f64, and a
/// right-hand side b.
fn factored(
    gpu: &symraster::Gpu,
    k: &TiledKernels,
    rng: &mut impl rand::Rng,
    m: usize,
    storage: Storage,
) -> (TiledMatrix, Matrix<f64>, Matrix<f32>) {
    let a = problems::uniform_matrix(rng, m, m + 64);
    let d: Vec<f32> = (0..m + 64).map(|j| 0.5 + (j % 3) as f32).collect();
    let p = DeviceProduct::upload(k, &a, &d, MAX).unwrap();
    let mut c = TiledMatrix::uninitialized(gpu.context(), m, storage, MAX).unwrap();
    c.fill(f32::NAN).unwrap();
    assembly::assemble(k, &p, &mut c).unwrap();
    cholesky::factor(k, &mut c).unwrap();
    let l = c.download_lower().unwrap().to_f64();
    let b = problems::uniform_matrix(rng, m, 1);
    (c, l, b)
}

/// The GPU and its tiled kernels, or `None` where it has no compute shaders.
fn gpu_and_kernels() -> Option<(symraster::Gpu, TiledKernels)> {
    let gpu = common::chain::gpu();
    if !gpu.info().has_compute() {
        return None;
    }
    let k = TiledKernels::new(gpu.context(), KernelConfig::GPU).unwrap();
    Some((gpu, k))
}

/// The tiled kernels with both ways of solving several columns by chains: a chain per column
/// side by side (the default up to order 8192), and one chain for all of them (order 0).
fn column_kernels(gpu: &symraster::Gpu) -> [(TiledKernels, &'static str); 2] {
    let tuned = |order| {
        let tuning = symraster::tiled::TiledTuning {
            column_chains_order: Some(order),
            ..Default::default()
        };
        TiledKernels::tuned(gpu.context(), KernelConfig::GPU, tuning).unwrap()
    };
    [
        (tuned(usize::MAX), "a chain per column"),
        (tuned(0), "one chain"),
    ]
}

/// `b` solved with its chains told they gave up (so the blocked way), read back; asserts that
/// no chained solve was counted.
fn solved_after_giving_up(
    k: &TiledKernels,
    c: &TiledMatrix,
    b: &Matrix<f32>,
    case: &str,
) -> Matrix<f32> {
    let mut x = DeviceRhs::upload(k, b, MAX).unwrap();
    let chained = k.chained_solves();
    solve::solve_after_chain_gives_up(k, c, std::slice::from_mut(&mut x)).unwrap();
    assert_eq!(k.chained_solves(), chained, "{case}: counted as chained");
    x.download().unwrap()
}

#[test]
fn chained_solves_match_the_double_solve_with_the_same_factor() {
    let Some((gpu, k)) = gpu_and_kernels() else {
        return;
    };
    assert!(k.solves_by_chain());
    for m in [1, 2, 3, 127, 128, 129, 257, 600] {
        let mut rng = problems::rng(m as u64);
        for storage in [Storage::Full, Storage::Rfp] {
            let (c, l, b) = factored(&gpu, &k, &mut rng, m, storage);
            let mut x = DeviceRhs::upload(&k, &b, MAX).unwrap();
            let chained = k.chained_solves();
            solve::solve_in_place(&k, &c, &mut x).unwrap();
            assert_eq!(
                k.chained_solves(),
                chained + 1,
                "{storage:?} m {m}: not chained"
            );
            let x = x.download().unwrap().to_f64();
            let want = least_squares::solve_with_factor(&l, &widen(b.as_slice()));
            let want = Matrix::from_row_major(m, 1, want).unwrap();
            let e = relative_error(&x, &want);
            assert!(e < 1e-4, "{storage:?} m {m}: relative error {e:.2e}");
            let llt = reference::multiply_lower_by_transpose(&l);
            let r: Vec<f64> = (0..m)
                .map(|i| {
                    (0..m).map(|t| llt[(i, t)] * x[(t, 0)]).sum::<f64>() - f64::from(b[(i, 0)])
                })
                .collect();
            let rn = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            let bn = b
                .as_slice()
                .iter()
                .map(|&v| f64::from(v).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(rn <= 1e-3 * bn, "{storage:?} m {m}: residual {rn:.2e}");
        }
    }
}

/// A chain that gave up (forced here; on llvmpipe a long wait does it) leaves b as it was and
/// the solve runs the blocked way: the same answer, and no chained solve counted.
#[test]
fn a_chain_that_gave_up_is_solved_the_blocked_way() {
    let Some((gpu, k)) = gpu_and_kernels() else {
        return;
    };
    for m in [129, 300] {
        let mut rng = problems::rng(40 + m as u64);
        for storage in [Storage::Full, Storage::Rfp] {
            let (c, l, b) = factored(&gpu, &k, &mut rng, m, storage);
            let x = solved_after_giving_up(&k, &c, &b, &format!("{storage:?} m {m}")).to_f64();
            let want = least_squares::solve_with_factor(&l, &widen(b.as_slice()));
            let want = Matrix::from_row_major(m, 1, want).unwrap();
            let e = relative_error(&x, &want);
            assert!(e < 1e-4, "{storage:?} m {m}: relative error {e:.2e}");
        }
    }
}

/// Chains launched together that gave up (forced) are each restored and solved the blocked
/// way: bit for bit what each gets alone on that path.
#[test]
fn chains_launched_together_that_gave_up_are_each_solved_the_blocked_way() {
    let Some((gpu, k)) = gpu_and_kernels() else {
        return;
    };
    let m = 129;
    let mut rng = problems::rng(60);
    for storage in [Storage::Full, Storage::Rfp] {
        let (c, _, b) = factored(&gpu, &k, &mut rng, m, storage);
        let sides = [
            b,
            Matrix::from_fn(m, 1, |i, _| (i % 5) as f32 - 2.0),
            Matrix::from_fn(m, 1, |_, _| 1.0),
        ];
        let upload = |b: &Matrix<f32>| DeviceRhs::upload(&k, b, MAX).unwrap();
        let alone: Vec<Vec<u32>> = sides
            .iter()
            .map(|b| {
                let mut x = upload(b);
                solve::solve_after_chain_gives_up(&k, &c, std::slice::from_mut(&mut x)).unwrap();
                x.download()
                    .unwrap()
                    .as_slice()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            })
            .collect();
        let chained = k.chained_solves();
        let mut xs: Vec<DeviceRhs> = sides.iter().map(upload).collect();
        solve::solve_after_chain_gives_up(&k, &c, &mut xs).unwrap();
        assert_eq!(
            k.chained_solves(),
            chained,
            "{storage:?}: counted as chained"
        );
        for (j, (x, want)) in xs.iter().zip(&alone).enumerate() {
            let got: Vec<u32> = x
                .download()
                .unwrap()
                .as_slice()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(&got, want, "{storage:?} side {j}");
        }
    }
}

/// Several right sides solved each as alone and read back together (`solve_each_read_back`;
/// their chains side by side in one launch each way, up to eight a launch): bit for bit the
/// single solves' values, in one read from the GPU (the solutions and the chains' gave-up
/// words) where each single solve takes two of its own.
#[test]
fn right_sides_solved_each_are_the_single_solves() {
    let Some((gpu, k)) = gpu_and_kernels() else {
        return;
    };
    for (m, count) in [
        (1, 3),
        (7, 3),
        (31, 3),
        (32, 3),
        (33, 10),
        (100, 3),
        (129, 3),
    ] {
        let mut rng = problems::rng(80 + m as u64);
        for storage in [Storage::Full, Storage::Rfp] {
            let (c, _, b) = factored(&gpu, &k, &mut rng, m, storage);
            let mut sides = vec![b];
            for s in 1..count {
                sides.push(Matrix::from_fn(m, 1, |i, _| match (i + s) % 3 {
                    0 => 1.0 / m as f32,
                    1 => 1.5 * s as f32,
                    _ => -2.0,
                }));
            }
            let cache = solve::SolveCache::default();
            let alone: Vec<Matrix<f32>> = sides
                .iter()
                .map(|b| {
                    let mut x = DeviceRhs::upload(&k, b, MAX).unwrap();
                    solve::solve_in_place_cached(&k, &c, &cache, &mut x).unwrap();
                    x.download().unwrap()
                })
                .collect();
            let (reads, chained) = (symraster::gl::read_backs(), k.chained_solves());
            let mut xs: Vec<DeviceRhs> = sides
                .iter()
                .map(|b| DeviceRhs::upload(&k, b, MAX).unwrap())
                .collect();
            let each = solve::solve_each_read_back(&k, &c, &cache, &mut xs).unwrap();
            assert_eq!(
                k.chained_solves(),
                chained + count as u64,
                "{storage:?} m {m}"
            );
            assert_eq!(symraster::gl::read_backs(), reads + 1, "{storage:?} m {m}");
            for (j, (got, want)) in each.iter().zip(&alone).enumerate() {
                let bits =
                    |x: &Matrix<f32>| x.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(got), bits(want), "{storage:?} m {m}, side {j}");
            }
        }
    }
}

/// A right side of several columns (up to the chains' limit of 32) is solved by chains in one
/// launch each way, a chain per column side by side (glsl/tiled/trsv_chain.comp) or one chain
/// for all of them (glsl/tiled/trsv_chain_cols.comp, every variant of columns an invocation
/// keeps), counted as one chained solve; past the limit the blocked solve runs (not counted).
/// Each column within rounding of the f64 solve with the same factor, and each computed from
/// its own column alone: a NaN column leaves the others bit for bit as they were. Full and
/// RFP, orders around the blocks of 128.
#[test]
fn columns_of_one_right_side_are_solved_by_chains() {
    let Some((gpu, _)) = gpu_and_kernels() else {
        return;
    };
    for ((m, cols), (k, way)) in [
        (1, 2),
        (5, 3),
        (127, 16),
        (128, 4),
        (129, 32),
        (257, 5),
        (600, 9),
        (300, 17),
        (129, 33),
    ]
    .into_iter()
    .flat_map(|case| column_kernels(&gpu).map(|k| (case, k)))
    {
        let mut rng = problems::rng(120 + (m * cols) as u64);
        for storage in [Storage::Full, Storage::Rfp] {
            let case = format!("{way}: {storage:?} m {m}, {cols} columns");
            let (c, l, _) = factored(&gpu, &k, &mut rng, m, storage);
            let b = problems::uniform_matrix(&mut rng, m, cols);
            let cache = solve::SolveCache::default();
            let solved = |b: &Matrix<f32>| {
                let mut x = DeviceRhs::upload(&k, b, MAX).unwrap();
                let chained = k.chained_solves();
                solve::solve_in_place_cached(&k, &c, &cache, &mut x).unwrap();
                let by_chain = cols <= 32;
                assert_eq!(k.chained_solves(), chained + u64::from(by_chain), "{case}");
                x.download().unwrap()
            };
            let x = solved(&b);
            for j in 0..cols {
                let column: Vec<f32> = (0..m).map(|i| b[(i, j)]).collect();
                let want = least_squares::solve_with_factor(&l, &widen(&column));
                let got: Vec<f64> = (0..m).map(|i| f64::from(x[(i, j)])).collect();
                let e = relative_error(
                    &Matrix::from_row_major(m, 1, got).unwrap(),
                    &Matrix::from_row_major(m, 1, want).unwrap(),
                );
                assert!(e < 1e-4, "{case}, column {j}: relative error {e:.2e}");
            }
            let poisoned = Matrix::from_fn(m, cols, |i, j| match j {
                0 => f32::NAN,
                _ => b[(i, j)],
            });
            let y = solved(&poisoned);
            for i in 0..m {
                assert!(y[(i, 0)].is_nan(), "{case}, row {i}: the NaN column solved");
                for j in 1..cols {
                    assert_eq!(
                        y[(i, j)].to_bits(),
                        x[(i, j)].to_bits(),
                        "{case}, row {i}, column {j}: changed by the NaN column"
                    );
                }
            }
        }
    }
}

/// A several-column right side whose chains gave up (forced) is restored whole and solved the
/// blocked way: bit for bit the blocked solve of the same right side, not counted as chained.
#[test]
fn a_several_column_chain_that_gave_up_is_solved_the_blocked_way() {
    let Some((gpu, _)) = gpu_and_kernels() else {
        return;
    };
    let (m, cols) = (200, 7);
    for (k, way) in column_kernels(&gpu) {
        let mut rng = problems::rng(140);
        for storage in [Storage::Full, Storage::Rfp] {
            let (c, _, _) = factored(&gpu, &k, &mut rng, m, storage);
            let b = problems::uniform_matrix(&mut rng, m, cols);
            let blocked = {
                // 33 columns: past the chains' limit, so the blocked solve, column by column
                // the same operations as for these 7.
                let wide = Matrix::from_fn(m, 33, |i, j| b[(i, j % cols)]);
                let mut x = DeviceRhs::upload(&k, &wide, MAX).unwrap();
                solve::solve_in_place(&k, &c, &mut x).unwrap();
                x.download().unwrap()
            };
            let x = solved_after_giving_up(&k, &c, &b, &format!("{way}: {storage:?}"));
            for i in 0..m {
                for j in 0..cols {
                    assert_eq!(
                        x[(i, j)].to_bits(),
                        blocked[(i, j)].to_bits(),
                        "{way}: {storage:?} row {i}, column {j}"
                    );
                }
            }
        }
    }
}
