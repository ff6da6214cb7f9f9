//! The tiled path with its storage split over several buffers (parts of 256 KiB here, as an
//! order past one buffer's limit splits on the GPU): assembly, Cholesky (full and RFP), solves
//! and the not-positive-definite column give what one buffer gives — the same bits where the
//! kernels and the blocking are the same, else results as accurate — and the f64 reference's
//! results; outputs poisoned with NaN.

use crate::common;

use crate::common::{assembly_bound, factor_and_solve_bounds, widen};
use symraster::internal::GpuInternals;
use symraster::tiled::{
    DeviceProduct, DeviceRhs, KernelConfig, Storage, TiledKernels, TiledMatrix, assembly, cholesky,
    solve, storage,
};
use symraster::{Error, Matrix, NumericalError, problems, reference, relative_error};

const ONE: u64 = i32::MAX as u64;

/// Parts of a third of the matrix (rounded to whole aligned rows or RFP columns: 3 to 6 parts).
fn part(m: usize, s: Storage) -> u64 {
    (s.len(m) * 4 / 3) as u64
}

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

/// Assembles, factors and solves in `storage` with parts of `part` bytes: (C, L, X) raw, and
/// how many buffers held C.
fn run(
    k: &TiledKernels,
    p: &DeviceProduct,
    b: &Matrix<f32>,
    storage: Storage,
    part: u64,
) -> (Vec<f32>, Vec<f32>, Matrix<f32>, usize) {
    let m = p.order();
    let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part).unwrap();
    c.fill(f32::NAN).unwrap();
    assembly::assemble(k, p, &mut c).unwrap();
    let c_raw = c.download_raw().unwrap();
    cholesky::factor(k, &mut c).unwrap();
    let l_raw = c.download_raw().unwrap();
    let mut x = DeviceRhs::upload(k, b, ONE).unwrap();
    solve::solve_in_place(k, &c, &mut x).unwrap();
    (c_raw, l_raw, x.download().unwrap(), c.part_count())
}

/// NaN-equal bit patterns (the full format's never-written upper triangle stays NaN).
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// B − C·X in f64 for the solution `x` of C·X = B (`c` symmetric, in f64).
fn residual(c: &Matrix<f64>, x: &Matrix<f32>, b: &Matrix<f32>) -> Matrix<f64> {
    let (m, r) = x.shape();
    Matrix::from_fn(m, r, |i, j| {
        f64::from(b[(i, j)])
            - (0..m)
                .map(|t| c[(i, t)] * f64::from(x[(t, j)]))
                .sum::<f64>()
    })
}

/// One buffer against parts of a third of it, each storage. Where the kernels have no shared
/// memory (the texel and register-only ones run every product on one kernel, cut at the
/// buffers' boundaries or not, and factor by the blocked or recursive schedule in any
/// storage: each entry's sums in the same order), the parts' C is one buffer's bits, and so
/// are L and X where the blocking is the same; elsewhere L within 1e-5 and X within 1e-3 of
/// one buffer's. With shared-memory tiles each launch's product kernel (general, small tiles,
/// packed panels, fused with a diagonal block) follows its shape, which the boundaries cut,
/// and one buffer may be factored by the chained schedules, which a matrix over several
/// buffers never takes: the two round differently, and (C ill-conditioned, of depth m + 5)
/// their L and X differ by far more than their backward errors. Always: C within
/// [`assembly_bound`] of the f64 reference, L·Lᵀ and X within
/// [`factor_and_solve_bounds`]' backward errors of it, each of the three within twice its
/// bound of one buffer's, and L within 1e-3 of the f64 reference's factor.
fn check_config(config: KernelConfig, orders: &[usize]) {
    let gpu = common::gpu();
    let k = TiledKernels::new(gpu.context(), config).unwrap();
    let one_kernel = !config.shared;
    for &m in orders {
        let n = m + 5;
        let (a, d) = product(m, n, 7 + m as u64);
        let p = DeviceProduct::upload(&k, &a, &d, ONE).unwrap();
        let b = problems::uniform_matrix(&mut problems::rng(3), m, 2);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        let l_ref = reference::cholesky(&c_ref).unwrap();
        let c_sym = c_ref.symmetric_from_lower();
        let c_bound = assembly_bound(n);
        let (l_bound, x_bound) = factor_and_solve_bounds(&c_sym, n);
        let (c_norm, b_norm) = (c_sym.frobenius_norm(), b.to_f64().frobenius_norm());
        for s in [Storage::Full, Storage::Rfp] {
            let (c1, l1, x1, n1) = run(&k, &p, &b, s, ONE);
            let (cs, ls, xs, ns) = run(&k, &p, &b, s, part(m, s));
            assert_eq!(n1, 1);
            assert!(ns >= 3, "{config:?} {s:?} m {m}: {ns} part(s)");
            let what = format!("{config:?} {s:?} m {m} in {ns} parts");
            // RFP of odd order: L22's rows sit one array column off L11's columns, so one
            // diagonal block per boundary is cut short; elsewhere the blocking is the same.
            let same_blocking = s == Storage::Full || m % 2 == 0;
            if one_kernel {
                assert!(same_bits(&c1, &cs), "{what}: assembly differs");
                if same_blocking {
                    assert!(same_bits(&l1, &ls), "{what}: factor differs");
                    assert_eq!(x1, xs, "{what}: solve differs");
                }
            }
            let lower = |raw: &[f32]| match s {
                Storage::Full => Matrix::from_row_major(m, m, raw.to_vec())
                    .unwrap()
                    .lower_triangle()
                    .to_f64(),
                Storage::Rfp => symraster::rfp::to_lower_of_order(m, raw).unwrap().to_f64(),
            };
            let (c1, cs, l1, ls) = (lower(&c1), lower(&cs), lower(&l1), lower(&ls));
            let (llt1, llts) = (
                reference::multiply_lower_by_transpose(&l1),
                reference::multiply_lower_by_transpose(&ls),
            );
            let (r1, rs) = (residual(&c_sym, &x1, &b), residual(&c_sym, &xs, &b));
            // ‖C‖_F·‖X‖_F + ‖B‖_F, the solve's backward error's denominator.
            let scale = |x: &Matrix<f32>| c_norm * x.to_f64().frobenius_norm() + b_norm;
            let one = [(&c1, &llt1, &r1, scale(&x1), "one buffer")];
            for (c, llt, r, scale, buffers) in
                one.into_iter()
                    .chain([(&cs, &llts, &rs, scale(&xs), "parts")])
            {
                let e = relative_error(c, &c_ref);
                assert!(
                    e <= c_bound,
                    "{what}, {buffers}: assembly error {e:.2e}, bound {c_bound:.2e}"
                );
                let e = relative_error(llt, &c_sym);
                assert!(
                    e <= l_bound,
                    "{what}, {buffers}: factor's backward error {e:.2e}, bound {l_bound:.2e}"
                );
                let e = r.frobenius_norm() / scale;
                assert!(
                    e <= x_bound,
                    "{what}, {buffers}: solve's backward error {e:.2e}, bound {x_bound:.2e}"
                );
            }
            let e = relative_error(&cs, &c1);
            assert!(
                e <= 2.0 * c_bound,
                "{what}: assembly differs from one buffer's by {e:.2e}"
            );
            let e = relative_error(&llts, &llt1);
            assert!(
                e <= 2.0 * l_bound,
                "{what}: L·Lᵀ differs from one buffer's by {e:.2e}"
            );
            // C·(X_parts − X_one) = R_one − R_parts.
            let r_diff = Matrix::from_fn(m, b.cols(), |i, j| r1[(i, j)] - rs[(i, j)]);
            let e = r_diff.frobenius_norm() / scale(&x1).max(scale(&xs));
            assert!(
                e <= 2.0 * x_bound,
                "{what}: C·X differs from one buffer's by {e:.2e}"
            );
            let e = relative_error(&ls, &l_ref);
            assert!(e < 1e-3, "{what}: Cholesky error {e}");
            if one_kernel {
                let e = relative_error(&ls, &l1);
                assert!(e < 1e-5, "{what}: factor differs from one buffer's by {e}");
                let e = relative_error(&xs.to_f64(), &x1.to_f64());
                assert!(e < 1e-3, "{what}: solve differs from one buffer's by {e}");
            }
        }
    }
}

/// This device's kernels ([`check_config`]).
#[test]
fn split_storage_computes_what_one_buffer_does() {
    let gpu = common::gpu();
    check_config(KernelConfig::for_device(gpu.info()), &[300, 301, 517, 700]);
}

/// The register-only kernels: the recursive factorization and solves, leaves cut at buffer
/// boundaries.
#[test]
fn split_storage_with_the_register_only_kernels() {
    check_config(KernelConfig::CPU, &[300, 341]);
}

#[test]
fn not_positive_definite_names_lapacks_column_across_buffers() {
    let gpu = common::gpu();
    let k = TiledKernels::new(gpu.context(), KernelConfig::for_device(gpu.info())).unwrap();
    let m = 300;
    for column in [0, 127, 128, 150, 255, 256, 299] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= 500.0;
        let Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: want, .. })) =
            reference::cholesky(&c.to_f64())
        else {
            panic!("the reference factored it")
        };
        for s in [Storage::Full, Storage::Rfp] {
            let mut l = TiledMatrix::from_lower(gpu.context(), &c, s, part(m, s)).unwrap();
            assert!(l.part_count() >= 2);
            match cholesky::factor(&k, &mut l) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                    assert_eq!(column, want, "{s:?} column {column}")
                }
                other => panic!("{s:?} column {column}: got {other:?}"),
            }
        }
    }
}

#[test]
fn a_diagonal_shift_reaches_every_buffer() {
    let gpu = common::gpu();
    let k = TiledKernels::new(gpu.context(), KernelConfig::for_device(gpu.info())).unwrap();
    for (m, s) in [
        (300, Storage::Full),
        (301, Storage::Rfp),
        (300, Storage::Rfp),
    ] {
        let (a, d) = product(m, 20, m as u64);
        let p = DeviceProduct::upload(&k, &a, &d, ONE).unwrap();
        let mut c = assembly::assemble_new(&k, &p, s, part(m, s)).unwrap();
        assert!(c.part_count() >= 2);
        assembly::add_to_diagonal(&k, &mut c, 3.5).unwrap();
        let mut want = reference::assemble(&a.to_f64(), &widen(&d)).lower_triangle();
        for i in 0..m {
            want[(i, i)] += 3.5;
        }
        let e = relative_error(&c.download_lower().unwrap().to_f64(), &want);
        assert!(e < 1e-6, "{s:?} m {m}: {e}");
    }
}

#[test]
fn orders_beyond_the_gpu_are_refused_before_allocation() {
    let gpu = common::gpu();
    let k = gpu.tiled_kernels().unwrap();
    let limits = k.limits();
    let (memory, _) = storage::device_memory(&limits);
    let m = storage::max_order(Storage::Full, memory) + 1;
    match TiledMatrix::uninitialized(gpu.context(), m, Storage::Full, ONE) {
        Err(Error::Device(e)) => {
            let text = e.to_string();
            assert!(text.contains(&format!("m = {m} ")), "{text}");
            assert!(
                text.contains("GL_NVX_gpu_memory_info") || text.contains("storage buffers"),
                "{text}"
            );
        }
        other => panic!("m = {m}: {:?}", other.map(|c| c.part_count())),
    }
    assert!(gpu.check_tiled_order(m, Storage::Full).is_err());
    // A row longer than one part cannot be split.
    assert!(TiledMatrix::uninitialized(gpu.context(), 100, Storage::Full, 256).is_err());
}

/// spftrf's blocks where B21 does not continue B11's columns (three separate row-major blocks
/// in one buffer): L21 then comes from the separate solve with L11's inverted blocks.
#[test]
fn separate_blocks_factor_through_the_inverted_solve() {
    use symraster::gl::{Buffer, BufferTarget, BufferUsage};
    use symraster::tiled::{Triangle, View};
    let gpu = common::gpu();
    let k = TiledKernels::new(gpu.context(), KernelConfig::for_device(gpu.info())).unwrap();
    let (m, n1) = (150, 70);
    let n2 = m - n1;
    let c = problems::well_conditioned_spd(&mut problems::rng(8), m);
    // [B11 (n1 x n1) | B22 (n2 x n2) | B21 (n2 x n1)], row-major each.
    let mut data = Vec::new();
    data.extend((0..n1 * n1).map(|e| c[(e / n1, e % n1)]));
    data.extend((0..n2 * n2).map(|e| c[(n1 + e / n2, n1 + e % n2)]));
    data.extend((0..n2 * n1).map(|e| c[(n1 + e / n1, e % n1)]));
    let buffer = Buffer::new(
        gpu.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        &data,
    )
    .unwrap();
    let b11 = View::row_major(n1, n1);
    let b22 = View {
        offset: n1 * n1,
        ..View::row_major(n2, n2)
    };
    let b21 = View {
        offset: n1 * n1 + n2 * n2,
        ..View::row_major(n2, n1)
    };
    k.reset_status().unwrap();
    cholesky::potrf(&k, &buffer, Triangle::Blocks([b11, b21, b22]), 0).unwrap();
    k.check_status().unwrap();
    let got = buffer.download().unwrap();
    let l_ref = reference::cholesky(&c.to_f64()).unwrap();
    let l = Matrix::from_fn(m, m, |i, j| match (i < n1, j < n1) {
        _ if j > i => 0.0,
        (true, true) => got[b11.index(i, j)],
        (false, true) => got[b21.index(i - n1, j)],
        _ => got[b22.index(i - n1, j - n1)],
    });
    let e = relative_error(&l.to_f64(), &l_ref);
    assert!(e < 1e-4, "{e}");
}
