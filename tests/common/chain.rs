//! The chained launches' tests' helpers (tests/chain/): a single-threaded llvmpipe context, C uploaded with garbage
//! in the triangle the factor must not read, the factor checked against that garbage, its
//! backward error against the f64 reference and the failing column a factorization reports.

use symraster::internal::GpuInternals;
use symraster::tiled::{KernelConfig, Storage, TiledKernels, TiledMatrix, Triangle, cholesky};
use symraster::tuning::Tuning;
use symraster::{Error, Matrix, NumericalError, reference};

/// One buffer's byte limit: storage in one part.
pub const MAX: u64 = i32::MAX as u64;

/// Garbage the factorization must not read (nor write over): the upper triangle's value.
pub const GARBAGE: f32 = 1e30;

/// A context on which llvmpipe runs one thread (work groups in ticket order, no waits).
pub fn gpu() -> symraster::Gpu {
    static ONE_THREAD: std::sync::Once = std::sync::Once::new();
    // SAFETY: every test of the one binary that uses this (tests/chain) calls it before it
    // creates its context, and the value is the same for all.
    ONE_THREAD.call_once(|| unsafe { std::env::set_var("LP_NUM_THREADS", "1") });
    super::gpu()
}

/// The tiled kernels with tuning `t` (the GPUs' tile shapes).
pub fn tuned(gpu: &symraster::Gpu, t: &Tuning) -> TiledKernels {
    TiledKernels::tuned(gpu.context(), KernelConfig::GPU, t).unwrap()
}

/// `c`'s lower triangle in `storage` (cut into buffers of `part_bytes`), GARBAGE elsewhere.
pub fn upload_in(
    gpu: &symraster::Gpu,
    c: &Matrix<f32>,
    storage: Storage,
    part_bytes: u64,
) -> TiledMatrix {
    let m = c.rows();
    let t = TiledMatrix::uninitialized(gpu.context(), m, storage, part_bytes).unwrap();
    let mut data = vec![GARBAGE; storage.len(m)];
    for i in 0..m {
        for j in 0..=i {
            data[t.index(i, j)] = c[(i, j)];
        }
    }
    for (start, buffer) in t.buffers() {
        buffer.write(0, &data[start..start + buffer.len()]).unwrap();
    }
    t
}

/// `c`'s lower triangle in full storage in one buffer with GARBAGE in the upper one.
pub fn upload(gpu: &symraster::Gpu, c: &Matrix<f32>) -> TiledMatrix {
    upload_in(gpu, c, Storage::Full, MAX)
}

/// ‖L·Lᵀ − C‖_F / ‖C‖_F over the lower triangles, in f64.
pub fn backward_error(l: &Matrix<f64>, c: &Matrix<f32>) -> f64 {
    let llt = reference::multiply_lower_by_transpose(l);
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..c.rows() {
        for j in 0..=i {
            let cij = f64::from(c[(i, j)]);
            num += (llt[(i, j)] - cij).powi(2);
            den += cij * cij;
        }
    }
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

/// The tolerance of an f32 factor of order m: a few units of roundoff per tile of the sum.
pub fn tolerance(m: usize) -> f64 {
    64.0 * super::U32 * (m as f64).max(16.0)
}

/// Factors `c` with `k` in full storage (the inverse slots poisoned with NaN first), checks
/// the upper triangle was left alone, returns L.
pub fn factor(gpu: &symraster::Gpu, k: &TiledKernels, c: &Matrix<f32>) -> Matrix<f32> {
    let mut t = upload(gpu, c);
    k.poison_inverses(c.rows().div_ceil(k.diag())).unwrap();
    cholesky::factor(k, &mut t).unwrap();
    let raw = t.download_raw().unwrap();
    let m = c.rows();
    // Full storage: entry (i, j) above the diagonal at i·rs + j (TiledMatrix::index takes the
    // lower triangle only).
    let Triangle::Square(v) = t.triangle() else {
        panic!("full storage is one square")
    };
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(
                raw[v.offset + i * v.rs + j * v.cs],
                GARBAGE,
                "m {m}: ({i}, {j}) written"
            );
        }
    }
    t.download_lower().unwrap()
}

/// The failing column (LAPACK's INFO − 1) and the pivot before its square root of `c`
/// factored with `k` in full storage.
pub fn failure(gpu: &symraster::Gpu, k: &TiledKernels, c: &Matrix<f32>) -> (usize, f64) {
    let mut t = upload(gpu, c);
    match cholesky::factor(k, &mut t) {
        Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
            (column, pivot)
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
}
