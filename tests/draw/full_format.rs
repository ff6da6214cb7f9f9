//! The faithful full-format path on the GPU (Algorithms 3 and 5) against the CPU reference.

use crate::common::{U32, faithful, gpu, run_with_poisoned_targets, widen};
use symraster::internal::GpuInternals;
use symraster::{
    Error, Format, InputError, Matrix, NumericalError, problems, reference, relative_error,
};

const SIZES: [usize; 10] = [1, 2, 3, 4, 7, 16, 33, 64, 100, 257];

/// Assembly of an m x n problem from `seed` against Algorithm 2; returns the relative error.
fn check_assembly(gpu: &symraster::Gpu, m: usize, n: usize, seed: u64) -> f64 {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d = problems::uniform_vector(&mut rng, n);
    let c = gpu.assemble(&a, &d, faithful(Format::Full)).unwrap();
    let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
    let err = relative_error(&c, &c_ref);
    // Positive data: each entry is a sum of n positive products, error ≤ n·u relative.
    let tol = 2.0 * (n as f64 + 2.0) * U32;
    assert!(
        err <= tol,
        "assembly m={m} n={n} seed={seed}: error {err:.3e} > {tol:.3e}"
    );
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(c[(i, j)], 0.0, "upper entry ({i}, {j}) must be zero");
        }
    }
    err
}

#[test]
fn assembly_matches_reference_with_n_twice_m() {
    let gpu = gpu();
    for m in SIZES {
        let err = check_assembly(&gpu, m, 2 * m, 10 + m as u64);
        eprintln!("assembly m={m} n={}: relative error {err:.3e}", 2 * m);
    }
}

#[test]
fn assembly_with_fewer_columns_than_rows() {
    let gpu = gpu();
    for (m, n) in [(3, 1), (7, 1), (33, 5), (64, 1), (100, 37), (257, 1)] {
        check_assembly(&gpu, m, n, 99);
    }
}

#[test]
fn assembly_with_a_fresh_seed() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("fresh seed {seed}");
    check_assembly(&gpu(), 45, 90, seed);
}

/// Cholesky of a well-conditioned SPD matrix against Algorithm 4, forward and backward error.
fn check_cholesky(gpu: &symraster::Gpu, c: &Matrix<f32>, label: &str) -> (f64, f64) {
    let m = c.rows();
    let l = gpu
        .cholesky(c, faithful(Format::Full))
        .unwrap()
        .into_l()
        .unwrap();
    let l_ref = reference::cholesky(&c.to_f64()).unwrap();
    let forward = relative_error(&l, &l_ref);
    let backward = relative_error(
        &reference::multiply_lower_by_transpose(&l.to_f64()),
        &c.to_f64().symmetric_from_lower(),
    );
    let tol = 8.0 * (m as f64 + 2.0) * U32;
    assert!(
        backward <= tol,
        "{label} m={m}: backward error {backward:.3e} > {tol:.3e}"
    );
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(l[(i, j)], 0.0, "upper entry ({i}, {j}) of L must be zero");
        }
    }
    (forward, backward)
}

#[test]
fn cholesky_matches_reference() {
    let gpu = gpu();
    for m in SIZES {
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let (forward, backward) = check_cholesky(&gpu, &c, "well-conditioned");
        // Condition number below ~10: the forward error stays near the backward error.
        let tol = 16.0 * (m as f64 + 2.0) * U32;
        assert!(
            forward <= tol,
            "m={m}: forward error {forward:.3e} > {tol:.3e}"
        );
        eprintln!("cholesky m={m}: forward {forward:.3e} backward {backward:.3e}");
    }
}

#[test]
fn cholesky_of_assembled_random_problems() {
    // The paper's own chain: C = A·D²·Aᵀ from uniform data, then L. Conditioning grows with m,
    // so only the backward error is held to an f32 bound.
    let gpu = gpu();
    for m in [5, 32, 64, 129] {
        let mut rng = problems::rng(7 * m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 2 * m);
        let d = problems::uniform_vector(&mut rng, 2 * m);
        let c = gpu.assemble(&a, &d, faithful(Format::Full)).unwrap();
        check_cholesky(&gpu, &c, "assembled");
    }
}

#[test]
fn cholesky_never_reads_the_upper_triangle() {
    let gpu = gpu();
    for m in [2, 7, 33] {
        let c = problems::well_conditioned_spd(&mut problems::rng(3), m);
        let clean = gpu
            .cholesky(&c.lower_triangle(), faithful(Format::Full))
            .unwrap()
            .into_l()
            .unwrap();
        let mut garbage = c.clone();
        for i in 0..m {
            for j in i + 1..m {
                garbage[(i, j)] = if (i + j) % 2 == 0 { f32::NAN } else { 1e30 };
            }
        }
        let l = gpu
            .cholesky(&garbage, faithful(Format::Full))
            .unwrap()
            .into_l()
            .unwrap();
        assert_eq!(
            l, clean,
            "m={m}: garbage in the upper triangle changed the factor"
        );
    }
}

#[test]
fn not_positive_definite_names_the_failing_column() {
    let gpu = gpu();
    let m = 12;
    for column in [0, 5, 11] {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        // Lower the diagonal entry so that the Schur complement at `column` turns negative
        // while every earlier pivot is untouched.
        c[(column, column)] -= 50.0;
        // The reference's pivot before the square root: what the error must report.
        let expected = match reference::cholesky(&c.to_f64()) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, pivot })) => {
                assert_eq!(got, column);
                pivot
            }
            other => panic!("reference: expected NotPositiveDefinite, got {other:?}"),
        };
        assert!(expected < 0.0);
        match gpu.cholesky(&c, faithful(Format::Full)) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, pivot })) => {
                assert_eq!(got, column);
                assert!(
                    (pivot - expected).abs() <= 1e-4 * expected.abs(),
                    "pivot {pivot} against the reference's {expected}"
                );
                let msg = gpu
                    .cholesky(&c, faithful(Format::Full))
                    .unwrap_err()
                    .to_string();
                assert!(msg.contains(&format!("column {column}")), "{msg}");
                assert!(!msg.contains("NaN"), "{msg}");
            }
            other => panic!("column {column}: expected NotPositiveDefinite, got {other:?}"),
        }
    }
    // A zero matrix fails at column 0; an m = 1 negative at column 0.
    let zero = Matrix::<f32>::zeros(4, 4);
    assert!(matches!(
        gpu.cholesky(&zero, faithful(Format::Full)),
        Err(Error::Numerical(NumericalError::NotPositiveDefinite {
            column: 0,
            ..
        }))
    ));
    let neg = Matrix::filled(1, 1, -2.0f32);
    assert!(matches!(
        gpu.cholesky(&neg, faithful(Format::Full)),
        Err(Error::Numerical(NumericalError::NotPositiveDefinite {
            column: 0,
            ..
        }))
    ));
}

#[test]
fn bad_inputs_get_specific_errors() {
    let gpu = gpu();
    let a = Matrix::filled(3, 4, 1.0f32);
    let e = gpu
        .assemble(&a, &[1.0; 3], faithful(Format::Full))
        .unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::Shape(_))) && e.to_string().contains("3x4"),
        "{e}"
    );
    let e = gpu
        .assemble(
            &Matrix::<f32>::zeros(0, 4),
            &[1.0; 4],
            faithful(Format::Full),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Input(InputError::Empty { .. })), "{e}");
    let mut bad = a.clone();
    bad[(2, 1)] = f32::INFINITY;
    let e = gpu
        .assemble(&bad, &[1.0; 4], faithful(Format::Full))
        .unwrap_err();
    assert!(e.to_string().contains("row 2, column 1"), "{e}");
    let e = gpu
        .assemble(&a, &[1.0, f32::NAN, 1.0, 1.0], faithful(Format::Full))
        .unwrap_err();
    assert!(
        e.to_string().contains("d") && e.to_string().contains("index 1"),
        "{e}"
    );
    let e = gpu
        .cholesky(&Matrix::filled(3, 4, 1.0), faithful(Format::Full))
        .unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    let e = gpu
        .cholesky(&Matrix::<f32>::zeros(0, 0), faithful(Format::Full))
        .unwrap_err();
    assert!(matches!(e, Error::Input(InputError::Empty { .. })), "{e}");
    let mut c = Matrix::filled(3, 3, 1.0f32);
    c[(2, 0)] = f32::NAN;
    let e = gpu.cholesky(&c, faithful(Format::Full)).unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::NonFinite { .. })),
        "{e}"
    );
}

#[test]
fn every_pass_writes_exactly_its_pixels() {
    let gpu = gpu();
    for m in [1, 2, 3, 6, 7] {
        let n = 3;
        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        let mut run = gpu.start_assembly(&a, &d, faithful(Format::Full)).unwrap();
        run_with_poisoned_targets(&mut run);
        let c = run.download_lower().unwrap();
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        assert!(relative_error(&c, &c_ref) < 1e-5);

        let spd = problems::well_conditioned_spd(&mut rng, m);
        let mut run = gpu.start_cholesky(&spd, faithful(Format::Full)).unwrap();
        run_with_poisoned_targets(&mut run);
        let l = run.download_lower().unwrap();
        let l_ref = reference::cholesky(&spd.to_f64()).unwrap();
        assert!(relative_error(&l, &l_ref) < 1e-5, "m={m}");
    }
}

#[test]
fn the_strict_upper_triangle_never_changes() {
    let gpu = gpu();
    let sentinel = -7777.0f32;
    for m in [2, 5, 8] {
        let mut rng = problems::rng(40 + m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 2 * m);
        let d = problems::uniform_vector(&mut rng, 2 * m);
        let spd = problems::well_conditioned_spd(&mut rng, m);
        let with_sentinel = |lower: &Matrix<f32>| {
            Matrix::from_fn(m, m, |i, j| if j > i { sentinel } else { lower[(i, j)] })
        };
        let check = |run: &mut symraster::draw::execution::Execution<'_>, start: &Matrix<f32>| {
            run.pair()
                .source()
                .texture()
                .upload(with_sentinel(start).as_slice())
                .unwrap();
            run.pair()
                .target()
                .texture()
                .upload(with_sentinel(start).as_slice())
                .unwrap();
            run.finish().unwrap();
            for tex in [run.pair().source().texture(), run.pair().target().texture()] {
                let data = tex.download().unwrap();
                for i in 0..m {
                    for j in i + 1..m {
                        assert_eq!(
                            data[i * m + j],
                            sentinel,
                            "m={m}: upper entry ({i}, {j}) changed"
                        );
                    }
                }
            }
        };
        let mut run = gpu.start_assembly(&a, &d, faithful(Format::Full)).unwrap();
        check(&mut run, &Matrix::zeros(m, m));
        let mut run = gpu.start_cholesky(&spd, faithful(Format::Full)).unwrap();
        check(&mut run, &spd);
        let l = run.download_lower().unwrap();
        assert!(relative_error(&l, &reference::cholesky(&spd.to_f64()).unwrap()) < 1e-5);
    }
}

/// C = A·diag(d)·Aᵀ outside f32's range is refused, naming the entry, before any GPU work;
/// it never comes back as inf or as silent zeros.
#[test]
fn products_outside_single_range_are_refused() {
    let gpu = gpu();
    let mut rng = problems::rng(17);
    let a = problems::uniform_matrix(&mut rng, 5, 10);
    let d = problems::uniform_vector(&mut rng, 10);
    for (scale, word) in [(1e20f32, "largest"), (1e-22, "smallest normal")] {
        let big = a.map(|v| v * scale);
        match gpu.assemble(&big, &d, faithful(Format::Full)) {
            Err(Error::Numerical(NumericalError::OutOfRange { row, col, .. })) => {
                assert_eq!((row, col), (0, 0));
                let msg = gpu
                    .assemble(&big, &d, faithful(Format::Full))
                    .unwrap_err()
                    .to_string();
                assert!(msg.contains(word) && msg.contains("entry (0, 0)"), "{msg}");
            }
            other => panic!("scale {scale:e}: expected OutOfRange, got {other:?}"),
        }
    }
}
