//! The rectangular packed format on the GPU (section 3.3, Figs 4, 6, 7) against the full format
//! and the CPU reference, per-pass coverage with NaN poisoning, the raw packed API, RFP
//! interchange and the texture-size limit.

use crate::common::{U32, faithful, gpu, run_with_poisoned_targets, widen};
use symraster::internal::GpuInternals;
use symraster::{
    Error, Format, InputError, Layout, Matrix, NumericalError, PackedMatrix, reference,
    relative_error, rfp,
};
use symraster::{Gpu, problems};

/// Every m from 1 to 20 (all the small parities and the loop-half boundaries) and larger odd
/// and even sizes.
fn sizes() -> Vec<usize> {
    (1..=20).chain([63, 64, 255, 256]).collect()
}

/// Assembly in `format` against Algorithm 2; asserts the f32 bound and returns the error.
fn assembly_error(gpu: &Gpu, format: Format, a: &Matrix<f32>, d: &[f32]) -> (Matrix<f32>, f64) {
    let (m, n) = a.shape();
    let c = gpu.assemble(a, d, faithful(format)).unwrap();
    let err = relative_error(&c, &reference::assemble(&a.to_f64(), &widen(d)));
    // Positive data: each entry a sum of n positive products, relative error ≤ ~n·u.
    let tol = 2.0 * (n as f64 + 2.0) * U32;
    assert!(
        err <= tol,
        "{format} assembly m={m} n={n}: error {err:.3e} > {tol:.3e}"
    );
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(
                c[(i, j)],
                0.0,
                "{format}: upper entry ({i}, {j}) must be zero"
            );
        }
    }
    (c, err)
}

#[test]
fn packed_assembly_matches_full_and_reference() {
    let gpu = gpu();
    for m in sizes() {
        let n = 2 * m;
        let mut rng = problems::rng(100 + m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        let (packed, e_packed) = assembly_error(&gpu, Format::Packed, &a, &d);
        let (full, e_full) = assembly_error(&gpu, Format::Full, &a, &d);
        let between = relative_error(&packed, &full);
        assert!(
            between <= 2.0 * (n as f64 + 2.0) * U32,
            "m={m}: packed and full differ by {between:.3e}"
        );
        eprintln!("assembly m={m} n={n}: packed {e_packed:.3e} full {e_full:.3e}");
    }
}

#[test]
fn packed_assembly_with_fewer_columns_than_rows() {
    let gpu = gpu();
    for (m, n) in [(2, 1), (5, 2), (8, 3), (20, 1), (63, 5), (64, 7), (256, 1)] {
        let mut rng = problems::rng(7 * m as u64 + n as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        assembly_error(&gpu, Format::Packed, &a, &d);
    }
}

/// Cholesky in `format` against Algorithm 4: forward and backward (‖LLᵀ − C‖/‖C‖) error.
fn cholesky_errors(gpu: &Gpu, format: Format, c: &Matrix<f32>) -> (Matrix<f32>, f64, f64) {
    let m = c.rows();
    let l = gpu.cholesky(c, faithful(format)).unwrap().into_l().unwrap();
    let l_ref = reference::cholesky(&c.to_f64()).unwrap();
    let forward = relative_error(&l, &l_ref);
    let backward = relative_error(
        &reference::multiply_lower_by_transpose(&l.to_f64()),
        &c.to_f64().symmetric_from_lower(),
    );
    let (tol_b, tol_f) = (8.0 * (m as f64 + 2.0) * U32, 16.0 * (m as f64 + 2.0) * U32);
    assert!(
        backward <= tol_b,
        "{format} m={m}: backward error {backward:.3e} > {tol_b:.3e}"
    );
    // Well conditioned (κ below ~10): the forward error stays near the backward error.
    assert!(
        forward <= tol_f,
        "{format} m={m}: forward error {forward:.3e} > {tol_f:.3e}"
    );
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(
                l[(i, j)],
                0.0,
                "{format}: upper entry ({i}, {j}) must be zero"
            );
        }
    }
    (l, forward, backward)
}

#[test]
fn packed_cholesky_matches_full_and_reference() {
    let gpu = gpu();
    for m in sizes() {
        let c = problems::well_conditioned_spd(&mut problems::rng(200 + m as u64), m);
        let (packed, f_p, b_p) = cholesky_errors(&gpu, Format::Packed, &c);
        let (full, f_f, b_f) = cholesky_errors(&gpu, Format::Full, &c);
        let between = relative_error(&packed, &full);
        assert!(
            between <= 16.0 * (m as f64 + 2.0) * U32,
            "m={m}: packed and full factors differ by {between:.3e}"
        );
        eprintln!(
            "cholesky m={m}: packed forward {f_p:.3e} backward {b_p:.3e}; \
             full forward {f_f:.3e} backward {b_f:.3e}"
        );
    }
}

#[test]
fn packed_cholesky_of_assembled_problem_stays_packed() {
    // The paper's chain, never unpacked on the way: C = A·D²·Aᵀ packed, then L packed.
    let gpu = gpu();
    for m in [1, 2, 9, 10, 64, 65] {
        let mut rng = problems::rng(300 + m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 2 * m);
        let d = problems::uniform_vector(&mut rng, 2 * m);
        let c = gpu.assemble_packed_raw(&a, &d).unwrap();
        let (w, h) = (m.div_ceil(2), m + (m + 1) % 2);
        assert_eq!(c.size(), (w, h), "m={m}: the texture is w x h");
        assert_eq!(c.as_slice().len(), w * h);
        assert_eq!(
            c.to_lower(),
            gpu.assemble(&a, &d, faithful(Format::Packed)).unwrap()
        );
        let l = gpu.cholesky_packed_raw(&c).unwrap();
        assert_eq!(l.size(), (w, h));
        let backward = relative_error(
            &reference::multiply_lower_by_transpose(&l.to_lower().to_f64()),
            &c.to_lower().to_f64().symmetric_from_lower(),
        );
        let tol = 8.0 * (m as f64 + 2.0) * U32;
        assert!(
            backward <= tol,
            "m={m}: backward {backward:.3e} > {tol:.3e}"
        );
        // The same factor as through the unpacked API.
        assert_eq!(
            l.to_lower(),
            gpu.cholesky(&c.to_lower(), faithful(Format::Packed))
                .unwrap()
                .into_l()
                .unwrap()
        );
        // And it goes to LAPACK's RFP and back unchanged.
        let arf = l.to_rfp();
        assert_eq!(arf.len(), m * (m + 1) / 2);
        assert_eq!(rfp::to_lower(&arf).unwrap(), l.to_lower());
        assert_eq!(PackedMatrix::from_rfp(&arf).unwrap(), l);
    }
}

#[test]
fn packed_cholesky_never_reads_the_upper_triangle() {
    let gpu = gpu();
    for m in [2, 7, 8] {
        let c = problems::well_conditioned_spd(&mut problems::rng(3), m);
        let clean = gpu
            .cholesky(&c.lower_triangle(), faithful(Format::Packed))
            .unwrap()
            .into_l()
            .unwrap();
        let mut garbage = c.clone();
        for i in 0..m {
            for j in i + 1..m {
                garbage[(i, j)] = f32::NAN;
            }
        }
        assert_eq!(
            gpu.cholesky(&garbage, faithful(Format::Packed))
                .unwrap()
                .into_l()
                .unwrap(),
            clean
        );
    }
}

#[test]
fn not_positive_definite_names_the_column_in_either_half() {
    let gpu = gpu();
    for (m, bad) in [(8, 1), (8, 6), (8, 7), (7, 2), (7, 5), (1, 0)] {
        let mut c = Matrix::from_fn(m, m, |i, j| if i == j { 2.0f32 } else { 0.0 });
        c[(bad, bad)] = -1.0;
        match gpu.cholesky(&c, faithful(Format::Packed)) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                assert_eq!(column, bad, "m={m}")
            }
            other => panic!("m={m}: expected not positive definite, got {other:?}"),
        }
        let packed = PackedMatrix::from_lower(&c).unwrap();
        assert!(matches!(
            gpu.cholesky_packed_raw(&packed),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) if column == bad
        ));
    }
}

#[test]
fn every_packed_pass_writes_exactly_its_texels() {
    let gpu = gpu();
    for m in 1..=9 {
        let layout = Layout::packed(m);
        let n = 3;
        let mut rng = problems::rng(500 + m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        let mut run = gpu
            .start_assembly(&a, &d, faithful(Format::Packed))
            .unwrap();
        assert_eq!(
            (run.pair().width(), run.pair().height()),
            layout.texture_size()
        );
        run_with_poisoned_targets(&mut run);
        let c = run.download_lower().unwrap();
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        assert!(relative_error(&c, &c_ref) < 1e-5, "m={m}");

        let spd = problems::well_conditioned_spd(&mut rng, m);
        let packed = PackedMatrix::from_lower(&spd).unwrap();
        let mut run = gpu.start_cholesky_packed(&packed).unwrap();
        run_with_poisoned_targets(&mut run);
        let l = run.download_packed().unwrap().to_lower();
        let l_ref = reference::cholesky(&spd.to_f64()).unwrap();
        assert!(relative_error(&l, &l_ref) < 1e-5, "m={m}");
    }
}

#[test]
fn too_large_is_a_clear_error_naming_the_limits() {
    let gpu = gpu();
    let limit = gpu.info().max_texture_size;
    let (max_full, max_packed) = gpu.max_order();
    assert_eq!(max_full, limit);
    assert!(gpu.check_order(max_packed, Format::Packed).is_ok());
    assert!(gpu.check_order(limit, Format::Full).is_ok());
    // The first m whose packed texture is too tall (h = m + 1 for even m).
    let m = max_packed + 1;
    for e in [
        gpu.check_order(m, Format::Packed).unwrap_err(),
        gpu.assemble(&Matrix::filled(m, 1, 1.0), &[1.0], faithful(Format::Packed))
            .unwrap_err(),
    ] {
        match &e {
            Error::Input(InputError::TooLarge {
                m: got,
                format: Format::Packed,
                limit: l,
                max_full: f,
                max_packed: p,
                ..
            }) => assert_eq!((*got, *l, *f, *p), (m, limit, max_full, max_packed)),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains("GL_MAX_TEXTURE_SIZE")
                && msg.contains(&format!("{max_packed} in packed"))
                && msg.contains(&format!("{max_full} in full")),
            "{msg}"
        );
    }
}

#[test]
fn packed_inputs_get_specific_errors() {
    let gpu = gpu();
    let mut c = PackedMatrix::from_lower(&Matrix::filled(4, 4, 1.0))
        .unwrap()
        .into_vec();
    c[3] = f32::INFINITY;
    let c = PackedMatrix::from_raw(4, c).unwrap();
    assert!(matches!(
        gpu.cholesky_packed_raw(&c),
        Err(Error::Input(InputError::NonFinite { .. }))
    ));
    let empty = PackedMatrix::from_raw(0, vec![]).unwrap();
    assert!(matches!(
        gpu.cholesky_packed_raw(&empty),
        Err(Error::Input(InputError::Empty { .. }))
    ));
}
