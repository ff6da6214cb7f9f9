//! The tiled compute path against the f64 CPU reference: assembly, Cholesky and solves, full
//! and RFP, at sizes around the tile and block sizes of both kernel configurations; outputs
//! poisoned with NaN before runs, NaN in the upper triangle that must never be read.

use crate::common;

use crate::common::{assembly_bound, factor_and_solve_bounds, widen};
use symraster::internal::GpuInternals;
use symraster::tiled::{
    CholeskySchedule, DeviceProduct, DeviceRhs, KernelConfig, LaunchCounts, LaunchKind, Storage,
    TiledKernels, TiledMatrix, TiledTuning, assembly, cholesky, solve,
};
use symraster::{
    Error, Format, Gpu, Matrix, Method, NumericalError, Options, problems, reference,
    relative_error, rfp,
};

const MAX: u64 = i32::MAX as u64;

fn tiled(format: Format) -> Options {
    Options::new(format).method(Method::Tiled)
}

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

/// B·X with B = L·Lᵀ in f64, for residuals.
fn apply(llt: &Matrix<f64>, x: &Matrix<f32>) -> Matrix<f64> {
    let (m, r) = x.shape();
    Matrix::from_fn(m, r, |i, j| {
        (0..m).map(|t| llt[(i, t)] * f64::from(x[(t, j)])).sum()
    })
}

/// The orders that straddle a configuration's tile and leaf-block sizes and the inverted
/// diagonal blocks' order `d` (several block columns; RFP halves of several blocks) and the
/// outer block columns' width.
fn orders(config: KernelConfig, d: usize, outer: usize) -> Vec<usize> {
    let (t, nb) = (config.bm(), config.nb);
    let mut v = vec![
        1,
        2,
        3,
        t - 1,
        t,
        t + 1,
        nb - 1,
        nb,
        nb + 1,
        2 * nb + 5,
        d - 1,
        d,
        d + 1,
        3 * d + 7,
        outer + d + 3,
    ];
    v.sort();
    v.dedup();
    v
}

/// Runs every kernel of one configuration on poisoned buffers against the reference: both
/// configurations on whatever device runs the tests, so CI checks the GPU's kernels too.
fn check_config(gpu: &Gpu, config: KernelConfig, max_order: usize) {
    let k = TiledKernels::new(gpu.context(), config).unwrap();
    for storage in [Storage::Full, Storage::Rfp] {
        for m in orders(config, k.diag(), k.outer())
            .into_iter()
            .filter(|&m| m <= max_order)
        {
            let n = if m % 2 == 0 { m + 3 } else { 2 * m };
            let (a, d) = product(m, n, m as u64);
            let p = DeviceProduct::upload(&k, &a, &d, MAX).unwrap();
            let mut c = TiledMatrix::uninitialized(gpu.context(), m, storage, MAX).unwrap();
            c.fill(f32::NAN).unwrap();
            assembly::assemble(&k, &p, &mut c).unwrap();
            let want = reference::assemble(&a.to_f64(), &widen(&d));
            let got = c.download_lower().unwrap();
            let e = relative_error(&got.to_f64(), &want.lower_triangle());
            assert!(
                e < 1e-5,
                "{config:?} {storage:?} m {m} n {n}: assembly error {e}"
            );
            if storage == Storage::Full {
                // The strict upper triangle was never written: still NaN.
                let raw = c.download_raw().unwrap();
                assert!((0..m).all(|i| (i + 1..m).all(|j| raw[i * m + j].is_nan())));
            }
            cholesky::factor(&k, &mut c).unwrap();
            let l = c.download_lower().unwrap();
            let l_ref = reference::cholesky(&want).unwrap();
            let e = relative_error(&l.to_f64(), &l_ref);
            assert!(e < 1e-3, "{config:?} {storage:?} m {m}: Cholesky error {e}");
            let b = problems::uniform_matrix(&mut problems::rng(9), m, 3);
            let mut x = DeviceRhs::upload(&k, &b, MAX).unwrap();
            solve::solve_in_place(&k, &c, &mut x).unwrap();
            let x = x.download().unwrap();
            let llt = reference::multiply_lower_by_transpose(&l_ref);
            let e = relative_error(&apply(&llt, &x), &b.to_f64());
            assert!(e < 1e-2, "{config:?} {storage:?} m {m}: solve residual {e}");
        }
    }
}

#[test]
fn this_devices_kernels_match_the_reference_around_tile_sizes() {
    let gpu = common::gpu();
    check_config(&gpu, KernelConfig::for_device(gpu.info()), usize::MAX);
}

#[test]
fn the_other_devices_kernels_match_the_reference() {
    let gpu = common::gpu();
    let this = KernelConfig::for_device(gpu.info());
    for other in [KernelConfig::GPU, KernelConfig::TEXEL, KernelConfig::CPU] {
        if other != this {
            check_config(&gpu, other, 140);
        }
    }
}

/// The products on packed panels (k-major, zero-padded, d folded in; double-buffered k-slices)
/// in both tile sizes: a configuration with 32 x 32 tiles of 8 x 8 per invocation (its
/// assembly at m = 600 has enough tiles for the full-size kernel, the Cholesky's outer-rank
/// update few enough for the small one), full and RFP (RFP's C21 packs A and B·d apart).
#[test]
fn products_on_packed_panels_match_the_reference() {
    let gpu = common::gpu();
    let config = KernelConfig {
        wg_x: 4,
        wg_y: 4,
        tm: 8,
        tn: 8,
        bk: 8,
        ..KernelConfig::GPU
    };
    let k = TiledKernels::new(gpu.context(), config).unwrap();
    for m in [40, 130, 600] {
        let (a, d) = product(m, m + 64, m as u64);
        let want = reference::assemble(&a.to_f64(), &widen(&d));
        let l_ref = reference::cholesky(&want).unwrap();
        let p = DeviceProduct::upload(&k, &a, &d, MAX).unwrap();
        for storage in [Storage::Full, Storage::Rfp] {
            let mut c = TiledMatrix::uninitialized(gpu.context(), m, storage, MAX).unwrap();
            c.fill(f32::NAN).unwrap();
            let packs = k.packs();
            assembly::assemble(&k, &p, &mut c).unwrap();
            assert!(k.packs() > packs, "{storage:?} m {m}: no panel packed");
            let e = relative_error(
                &c.download_lower().unwrap().to_f64(),
                &want.lower_triangle(),
            );
            assert!(e < 1e-5, "{storage:?} m {m}: assembly error {e}");
            if storage == Storage::Full {
                let raw = c.download_raw().unwrap();
                assert!((0..m).all(|i| (i + 1..m).all(|j| raw[i * m + j].is_nan())));
            }
            cholesky::factor(&k, &mut c).unwrap();
            let e = relative_error(&c.download_lower().unwrap().to_f64(), &l_ref);
            assert!(e < 1e-3, "{storage:?} m {m}: Cholesky error {e}");
            // The solves as products with inverted diagonal blocks (blocks of 128, RFP's
            // halves apart), one and several right-hand sides.
            assert!(k.solves_by_inverses());
            let llt = reference::multiply_lower_by_transpose(&l_ref);
            for r in [1, 5] {
                let b = problems::uniform_matrix(&mut problems::rng(r as u64), m, r);
                let mut x = DeviceRhs::upload(&k, &b, MAX).unwrap();
                solve::solve_in_place(&k, &c, &mut x).unwrap();
                let e = relative_error(&apply(&llt, &x.download().unwrap()), &b.to_f64());
                assert!(e < 1e-2, "{storage:?} m {m} rhs {r}: solve residual {e}");
            }
        }
    }
}

#[test]
fn auto_is_tiled_on_gpus_with_compute_shaders() {
    let gpu = common::gpu();
    let expected = if gpu.info().has_compute() {
        Method::Tiled
    } else {
        Method::Faithful
    };
    assert_eq!(gpu.resolve(Method::Auto).unwrap(), expected);
    assert!(gpu.methods().contains(&Method::Faithful));
}

#[test]
fn api_assembly_cholesky_and_solve_match_the_reference_full_and_packed() {
    let gpu = common::gpu();
    for (m, n) in [(1, 1), (5, 3), (40, 90), (97, 60)] {
        let (a, d) = product(m, n, 3 + m as u64);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        let l_ref = reference::cholesky(&c_ref);
        for format in [Format::Full, Format::Packed] {
            let c = gpu.assemble(&a, &d, tiled(format)).unwrap();
            let e = relative_error(&c.to_f64(), &c_ref.lower_triangle());
            assert!(e < 1e-5, "{format} m {m} n {n}: assembly error {e}");
            assert!((0..m).all(|i| (i + 1..m).all(|j| c[(i, j)] == 0.0)));
            match &l_ref {
                Ok(l_ref) => {
                    let l = gpu.factor_product(&a, &d, tiled(format)).unwrap();
                    let e = relative_error(&l.l().unwrap().to_f64(), l_ref);
                    assert!(e < 1e-3, "{format} m {m} n {n}: factor error {e}");
                    let f = gpu
                        .factor_product(
                            &a,
                            &d,
                            symraster::Options::new(format).method(symraster::Method::Tiled),
                        )
                        .unwrap();
                    let b = problems::uniform_matrix(&mut problems::rng(4), m, 2);
                    let x = f.solve_many(&b).unwrap();
                    let llt = reference::multiply_lower_by_transpose(l_ref);
                    let e = relative_error(&apply(&llt, &x), &b.to_f64());
                    assert!(e < 1e-2, "{format} m {m}: solve residual {e}");
                    let x1 = f.solve(b.transpose().row(0)).unwrap();
                    let b0: Vec<f64> = b.transpose().row(0).iter().map(|&v| f64::from(v)).collect();
                    let x1_host =
                        symraster::least_squares::solve_with_factor(&f.l().unwrap().to_f64(), &b0);
                    for (g, h) in x1.iter().zip(&x1_host) {
                        assert!(
                            (f64::from(*g) - h).abs() <= 1e-3 * (1.0 + h.abs()),
                            "{g} vs {h}"
                        );
                    }
                }
                Err(_) => assert!(gpu.factor_product(&a, &d, tiled(format)).is_err()),
            }
        }
    }
}

/// ‖L·Lᵀ − C‖_F / ‖C‖_F for the factor `l` (lower triangle) of the symmetric f64 `c`: the
/// factor's backward error.
fn backward_error(l: &Matrix<f64>, c: &Matrix<f64>) -> f64 {
    relative_error(&reference::multiply_lower_by_transpose(l), c)
}

/// RFP's assembly and Cholesky (`assemble_rfp`, `cholesky_rfp`) against the full format's
/// (tiled): each assembly within [`assembly_bound`] of the f64 reference and of each other
/// (twice the bound), bit for bit the same where the kernels have no shared memory (one
/// product kernel then runs every block of both formats, each entry's sum in the same order;
/// with shared-memory tiles each launch's product kernel follows its shape, so RFP's blocks,
/// half the order, may run on the general kernel where full storage's product runs on the
/// packed panels, whose A·√d packed once rounds otherwise); each factor's backward error
/// within the factor's bound of [`factor_and_solve_bounds`], and the two factors within 1e-5 of each other.
#[test]
fn rfp_assembly_and_factor_equal_the_full_formats() {
    let gpu = common::gpu();
    let one_kernel = !gpu.tiled_kernels().unwrap().config().shared;
    for (m, n) in [(1, 2), (2, 2), (33, 70), (64, 100), (75, 150)] {
        let (a, d) = product(m, n, 11 * m as u64);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        let full = gpu.assemble(&a, &d, tiled(Format::Full)).unwrap();
        let arf = gpu.assemble_rfp(&a, &d).unwrap();
        assert_eq!(arf.len(), rfp::len(m));
        let rfp_lower = rfp::to_lower(&arf).unwrap();
        if one_kernel {
            assert_eq!(rfp_lower, full, "m {m}: RFP assembly differs");
        }
        let bound = assembly_bound(n);
        for (c, format) in [(&full, "full"), (&rfp_lower, "RFP")] {
            let e = relative_error(&c.to_f64(), &c_ref);
            assert!(
                e <= bound,
                "m {m} n {n}: {format} assembly error {e:.2e}, bound {bound:.2e}"
            );
        }
        let e = relative_error(&rfp_lower.to_f64(), &full.to_f64());
        assert!(
            e <= 2.0 * bound,
            "m {m} n {n}: RFP assembly differs from the full one by {e:.2e}, bound {:.2e}",
            2.0 * bound
        );
        let f_full = gpu.cholesky(&full, tiled(Format::Full)).unwrap();
        let f_rfp = gpu.cholesky_rfp(m, &arf).unwrap();
        let l_full = f_full.l().unwrap().to_f64();
        let l_rfp = f_rfp.l().unwrap().to_f64();
        let c = c_ref.symmetric_from_lower();
        let (bound, _) = factor_and_solve_bounds(&c, n);
        for (l, format) in [(&l_full, "full"), (&l_rfp, "RFP")] {
            let e = backward_error(l, &c);
            assert!(
                e <= bound,
                "m {m} n {n}: {format} factor's backward error {e:.2e}, bound {bound:.2e}"
            );
        }
        let e = relative_error(&l_rfp, &l_full);
        assert!(
            e < 1e-5,
            "m {m}: RFP factor differs from the full one by {e}"
        );
        assert_eq!(f_rfp.to_rfp().unwrap().len(), rfp::len(m));
    }
}

#[test]
fn the_upper_triangle_is_never_read() {
    let gpu = common::gpu();
    for m in [3, 17, 70] {
        let spd = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let mut garbage = spd.clone();
        for i in 0..m {
            for j in i + 1..m {
                garbage[(i, j)] = f32::NAN;
            }
        }
        for format in [Format::Full, Format::Packed] {
            let l = gpu.cholesky(&garbage, tiled(format)).unwrap();
            let l_ref = reference::cholesky(&spd.to_f64()).unwrap();
            let e = relative_error(&l.l().unwrap().to_f64(), &l_ref);
            assert!(e < 1e-4, "{format} m {m}: {e}");
        }
    }
}

#[test]
fn not_positive_definite_names_lapacks_column() {
    let gpu = common::gpu();
    let m = 75;
    for column in [0, 1, 16, 31, 32, 40, 63, 64, 74] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= 500.0;
        let expected = match reference::cholesky(&c.to_f64()) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                (column, pivot)
            }
            other => panic!("reference: expected NotPositiveDefinite, got {other:?}"),
        };
        for format in [Format::Full, Format::Packed] {
            match gpu.cholesky(&c, tiled(format)) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                    assert_eq!(column, expected.0, "{format}");
                    assert!(
                        (pivot - expected.1).abs() <= 1e-3 * expected.1.abs(),
                        "{format} column {column}: pivot {pivot} against {}",
                        expected.1
                    );
                }
                other => panic!("{format} column {column}: got {other:?}"),
            }
        }
    }
    let zero = Matrix::<f32>::zeros(4, 4);
    assert!(matches!(
        gpu.cholesky(&zero, tiled(Format::Full)),
        Err(Error::Numerical(NumericalError::NotPositiveDefinite {
            column: 0,
            ..
        }))
    ));
}

#[test]
fn bad_inputs_are_refused_with_typed_errors() {
    let gpu = common::gpu();
    let a = Matrix::filled(3, 4, 1.0f32);
    assert!(matches!(
        gpu.assemble(&a, &[1.0; 3], tiled(Format::Full)),
        Err(Error::Input(_))
    ));
    assert!(matches!(
        gpu.cholesky(&Matrix::filled(2, 3, 1.0f32), tiled(Format::Full)),
        Err(Error::Input(_))
    ));
    assert!(matches!(
        gpu.cholesky_rfp(3, &[1.0; 5]),
        Err(Error::Input(_))
    ));
    let f = gpu
        .cholesky(
            &Matrix::from_fn(2, 2, |i, j| (i == j) as u8 as f32),
            tiled(Format::Full),
        )
        .unwrap();
    assert!(matches!(f.solve(&[1.0]), Err(Error::Input(_))));
}

/// Under the blocked schedule, RFP's Cholesky issues the launches of the full format's (its L11
/// and L21 one tall block column, as full storage's first half is): the sequential chain that
/// sets the time of both. The same launches where m is a multiple of two outer blocks; else at
/// most one more of each kind, one block step (each half rounds up to whole diagonal blocks:
/// ⌈n1/d⌉ + ⌈n2/d⌉ ≤ ⌈m/d⌉ + 1). The schedule is pinned: GPUs factor full storage by the
/// chained schedules by default, which RFP never takes; neither factor here is chained. The
/// packing launches (RFP's column-major blocks with the texel kernels, the panels with the
/// shared-memory ones) are not counted.
#[test]
fn rfp_cholesky_launches_what_the_full_one_does() {
    let gpu = common::gpu();
    let blocked = TiledTuning {
        cholesky_schedule: Some(CholeskySchedule::Blocked),
        ..TiledTuning::default()
    };
    let config = KernelConfig::for_device(gpu.info());
    let k = TiledKernels::tuned(gpu.context(), config, blocked).unwrap();
    if !k.inverted_blocks() {
        return;
    }
    for m in [1024, 700] {
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let launches = |s: Storage| {
            let mut l = TiledMatrix::from_lower(gpu.context(), &c, s, MAX).unwrap();
            let (before, packs) = (k.launch_counts(), k.packs());
            cholesky::factor(&k, &mut l).unwrap();
            let packs = k.packs() - packs;
            let launches = k.launch_counts().since(&before);
            eprintln!("m {m}, {s:?}: {launches}, {packs} of them packing");
            assert_eq!(
                launches.of(LaunchKind::Copy),
                packs,
                "m {m} {s:?}: {launches}"
            );
            launches
        };
        let (full, rfp) = (launches(Storage::Full), launches(Storage::Rfp));
        assert_eq!(k.chained_factors(), 0, "m {m}: a factor was chained");
        let kinds = LaunchKind::ALL
            .into_iter()
            .filter(|&kind| kind != LaunchKind::Copy);
        let counts = |l: LaunchCounts| kinds.clone().map(|kind| l.of(kind)).collect::<Vec<_>>();
        let (full, rfp) = (counts(full), counts(rfp));
        if m % (2 * k.outer()) == 0 {
            assert_eq!(rfp, full, "m {m}");
        }
        assert!(
            rfp.iter().zip(&full).all(|(r, f)| r <= &(f + 1)),
            "m {m}: {rfp:?} RFP against {full:?} full"
        );
    }
}

/// The tiled kernels compile on first use: opening them compiles none, a Cholesky compiles
/// only some, and every one of them links on this device.
#[test]
fn every_tiled_kernel_links_on_first_use() {
    let gpu = common::gpu();
    let k = TiledKernels::new(gpu.context(), KernelConfig::GPU).unwrap();
    assert_eq!(k.compiled(), 0);
    let held = k.compile_all().unwrap();
    assert!(held >= 4, "{held} kernels");
    assert_eq!(k.compiled(), held);
}
