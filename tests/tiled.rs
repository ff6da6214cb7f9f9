//! The tiled compute path against the f64 CPU reference: assembly, Cholesky and solves, full
//! and RFP, outputs poisoned with NaN before runs and NaN in the upper triangle never read.

mod common;

use symraster::gl::DeviceInfo;
use symraster::tiled::{
    DeviceProduct, DeviceRhs, KernelConfig, Storage, TiledKernels, TiledMatrix, assembly, cholesky,
    solve,
};
use symraster::{Matrix, reference, relative_error};

const MAX: u64 = i32::MAX as u64;

fn kernels(gpu: &symraster::Gpu) -> TiledKernels {
    TiledKernels::new(gpu.context(), KernelConfig::for_device(gpu.info())).unwrap()
}

fn random(rows: usize, cols: usize, seed: u64) -> Matrix<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Matrix::from_fn(rows, cols, |_, _| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) as f64 / (1u64 << 31) as f64 - 0.5) as f32
    })
}

#[test]
fn raw_kernels_assemble_and_factor() {
    let gpu = common::gpu();
    let k = kernels(&gpu);
    let _ = DeviceInfo::query(gpu.context());
    for storage in [Storage::Full, Storage::Rfp] {
        for (m, n) in [(1, 1), (2, 3), (3, 5), (17, 40), (70, 150)] {
            let a = random(m, n, m as u64);
            let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
            let p = DeviceProduct::upload(&k, &a, &d, MAX).unwrap();
            let mut c = TiledMatrix::uninitialized(gpu.context(), m, storage, MAX).unwrap();
            c.fill(f32::NAN).unwrap();
            assembly::assemble(&k, &p, &mut c).unwrap();
            let want = reference::assemble(&a.to_f64(), &common::widen(&d));
            let got = c.download_lower().unwrap();
            let e = relative_error(&got.to_f64(), &want.lower_triangle());
            assert!(e < 1e-5, "{storage:?} m {m} n {n}: assembly error {e}");
            cholesky::factor(&k, &mut c).unwrap();
            let l = c.download_lower().unwrap();
            let lref = reference::cholesky(&want).unwrap();
            let e = relative_error(&l.to_f64(), &lref);
            assert!(e < 1e-3, "{storage:?} m {m} n {n}: cholesky error {e}");
            let b = random(m, 3, 7);
            let mut x = DeviceRhs::upload(&k, &b, MAX).unwrap();
            solve::solve_in_place(&k, &c, &mut x).unwrap();
            let x = x.download().unwrap();
            let r = reference::multiply_lower_by_transpose(&lref);
            let bx = Matrix::from_fn(m, 3, |i, j| {
                (0..m).map(|t| r[(i, t)] * x[(t, j)] as f64).sum::<f64>()
            });
            let e = relative_error(&bx, &b.to_f64());
            assert!(e < 1e-2, "{storage:?} m {m}: solve residual {e}");
        }
    }
}
