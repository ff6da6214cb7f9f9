//! The SPD inverse via Cholesky in place in LAPACK's RFP storage (spftri's structure) against
//! faer's f64 inverse and against the full-storage route: odd, even and tiny orders, across the
//! recursion's leaves (diagonal blocks of 32, triangular-product leaves of 128, and of 16 / 64
//! with a smaller kernel configuration), the register-only kernels (recursive Cholesky), the
//! failing column, and refused requests. Upper triangles of the inputs are NaN (never read).

use crate::common;

use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use symraster::internal::GpuInternals;
use symraster::inverse::{self, InverseMethod as Method, InvertOptions, Inverter, Kind, Storage};
use symraster::layout::rfp;
use symraster::tiled::KernelConfig;
use symraster::{Error, ErrorKind, Matrix, NumericalError, relative_error};

/// A well-conditioned SPD matrix with entries from a seeded generator: B·Bᵀ/n + I.
fn spd(n: usize, seed: u64) -> Matrix<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let b = Matrix::from_fn(n, n, |_, _| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as f64 / (1u64 << 31) as f64 - 0.5
    });
    let fb = Mat::from_fn(n, n, |i, j| b[(i, j)]);
    let c = &fb * fb.transpose();
    Matrix::from_fn(n, n, |i, j| {
        c[(i, j)] / n as f64 + if i == j { 1.0 } else { 0.0 }
    })
}

/// The lower triangle of `a` in f32 with NaN above it.
fn lower_with_nan_above(a: &Matrix<f64>) -> Matrix<f32> {
    Matrix::from_fn(a.rows(), a.cols(), |i, j| {
        if j > i { f32::NAN } else { a[(i, j)] as f32 }
    })
}

fn cpu_inverse(a: &Matrix<f64>) -> Matrix<f64> {
    let fa = Mat::from_fn(a.rows(), a.cols(), |i, j| a[(i, j)]);
    let x = fa.partial_piv_lu().inverse();
    Matrix::from_fn(a.rows(), a.cols(), |i, j| x[(i, j)])
}

fn rfp_options() -> InvertOptions {
    InvertOptions {
        storage: Storage::Rfp,
        ..InvertOptions::default()
    }
}

/// RFP and full storage against faer at each order; the two storages against each other.
fn check_orders(inv: &Inverter, orders: &[usize], what: &str) {
    for &n in orders {
        let a = spd(n, 7 + n as u64);
        let a32 = lower_with_nan_above(&a);
        let want = cpu_inverse(&a);
        let kappa = a.frobenius_norm() * want.frobenius_norm();
        let bound = (50.0 * kappa * common::U32).max(1e-5);
        let x_rfp = inverse::invert_with(inv, &a32, Kind::Spd, Method::Cholesky, rfp_options())
            .unwrap_or_else(|e| panic!("{what} n {n}: {e}"));
        let x_full = inverse::invert_with(
            inv,
            &a32,
            Kind::Spd,
            Method::Cholesky,
            InvertOptions::default(),
        )
        .unwrap();
        let e_rfp = relative_error(&x_rfp.to_f64(), &want);
        let e_full = relative_error(&x_full.to_f64(), &want);
        assert!(
            e_rfp < bound,
            "{what} n {n}: RFP error {e_rfp}, bound {bound}"
        );
        assert!(e_full < bound, "{what} n {n}: full error {e_full}");
        let apart = relative_error(&x_rfp.to_f64(), &x_full.to_f64());
        assert!(apart < bound, "{what} n {n}: RFP and full {apart} apart");
        // The RFP entry point returns the same inverse as an RFP array.
        let arf = rfp::from_lower(&a32).unwrap();
        let x_arf = inverse::invert_rfp(inv, n, &arf).unwrap();
        let x_lower = rfp::to_lower_of_order(n, &x_arf).unwrap();
        let same = relative_error(&x_lower.to_f64(), &x_rfp.to_f64().lower_triangle());
        assert!(same < 1e-6, "{what} n {n}: invert_rfp differs by {same}");
    }
}

#[test]
fn rfp_inverse_matches_the_cpu_and_full_storage() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // Tiny; around the diagonal block (32) and RFP's halves; past the product leaf (128 per
    // half, so the triangular product recurses from 258 up).
    check_orders(
        &inv,
        &[1, 2, 3, 4, 5, 17, 64, 65, 66, 130, 131, 300, 301],
        "default",
    );
}

#[test]
fn rfp_inverse_with_small_leaves_and_register_kernels() {
    let gpu = common::gpu();
    let small = KernelConfig {
        nb: 16,
        ..KernelConfig::GPU
    };
    let inv = Inverter::with_config(gpu.context(), small).unwrap();
    // Leaves of 16 and triangular-product leaves of 64: every recursion runs several levels.
    check_orders(&inv, &[33, 150, 151], "nb 16");
    // No shared memory: the recursive Cholesky on RFP's blocks.
    let inv = Inverter::with_config(gpu.context(), KernelConfig::CPU).unwrap();
    check_orders(&inv, &[3, 40, 97], "register-only");
}

#[test]
fn rfp_names_the_failing_column_and_refuses_other_methods() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // Columns 0..3 SPD, column 4's pivot negative; in the first RFP half (n 9) and the second
    // (n 6: halves of 3).
    for n in [9, 6] {
        let mut a = Matrix::from_fn(n, n, |i, j| if i == j { 4.0f32 } else { 0.5 });
        a[(4, 4)] = -1.0;
        match inverse::invert_with(&inv, &a, Kind::Spd, Method::Cholesky, rfp_options()) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                assert_eq!(column, 4, "n {n}")
            }
            other => panic!("n {n}: {other:?}"),
        }
    }
    let a = lower_with_nan_above(&spd(5, 1));
    for (kind, method) in [
        (Kind::Spd, Method::Gje),
        (Kind::Spd, Method::Lu),
        (Kind::General, Method::Gje),
        (Kind::General, Method::Cholesky),
    ] {
        let e = inverse::invert_with(&inv, &a, kind, method, rfp_options()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Input, "{kind:?} {method:?}: {e}");
    }
    // Arrays of the wrong length, empty, or with NaN.
    let e = inverse::invert_rfp(&inv, 4, &[1.0; 9]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    let e = inverse::invert_rfp(&inv, 0, &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    let mut arf = rfp::from_lower(&a).unwrap();
    arf[3] = f32::NAN;
    let e = inverse::invert_rfp(&inv, 5, &arf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
}

#[test]
fn rfp_f64_entry_refines_to_double_accuracy() {
    let gpu = common::gpu();
    let a = spd(45, 3);
    let r = gpu
        .invert(
            &a,
            InvertOptions {
                kind: Kind::Spd,
                method: Method::Cholesky,
                refine_steps: 3,
                ..rfp_options()
            },
        )
        .unwrap();
    assert!(r.refined);
    let e = relative_error(&r.x, &cpu_inverse(&a));
    assert!(e < 1e-12, "error {e}");
}

#[test]
fn rfp_timing_entry_runs_and_refuses_other_methods() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    let t = inverse::bench::time_inverse_in(
        &inv,
        Kind::Spd,
        Method::Cholesky,
        Storage::Rfp,
        70,
        None,
        1,
    )
    .unwrap();
    assert_eq!((t.storage, t.order), (Storage::Rfp, 70));
    assert!(t.gflops.is_finite() && t.gflops > 0.0);
    let e =
        inverse::bench::time_inverse_in(&inv, Kind::Spd, Method::Gje, Storage::Rfp, 70, None, 1)
            .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input);
}
