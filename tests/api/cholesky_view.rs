//! `Gpu::cholesky_view`, the f32 factor of a borrowed triangle, against the host's f64 factor
//! of the same f32 values: both triangles with NaN in the other and a row stride past the
//! order, sizes around 64 and past a tile of the tiled method, each method's path, the
//! failures named in C's terms.

use crate::common;

use symraster::internal::GpuInternals;
use symraster::{
    Error, Format, InputError, Matrix, Method, NumericalError, Options, SymmetricView, Triangle,
    host, relative_error,
};

/// Q·diag(λ)·Qᵀ with λ from 1 to 1/`condition`, rounded to f32.
fn spd(m: usize, condition: f64, seed: u64) -> Matrix<f32> {
    let lambda: Vec<f64> = (0..m)
        .map(|k| condition.powf(-(k as f64) / (m.max(2) - 1) as f64))
        .collect();
    common::spd_with_eigenvalues(&lambda, seed).map(|v| v as f32)
}

/// `c`'s `triangle` in row-major storage of stride m + 3, NaN everywhere else.
fn stored(c: &Matrix<f32>, triangle: Triangle) -> (Vec<f32>, usize) {
    common::stored(c, triangle, f32::NAN)
}

/// The f64 factor of the f32 values of `c`.
fn reference(c: &Matrix<f32>) -> Matrix<f64> {
    host::cholesky(&c.map(f64::from)).unwrap()
}

/// One order past the tiled method's largest tile or diagonal block on this GPU.
fn past_a_tile() -> usize {
    let gpu = common::gpu();
    let k = gpu.tiled_kernels().unwrap();
    k.config().bm().max(k.config().nb).max(k.diag()) + 1
}

#[test]
fn factors_both_triangles_from_a_wider_stride_as_the_f64_reference() {
    let gpu = common::gpu();
    let mut orders = vec![1, 2, 17, 63, 64, 65, 200, past_a_tile()];
    orders.dedup();
    for m in orders {
        let c = spd(m, 100.0, m as u64);
        let want = reference(&c);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let l = gpu
                .cholesky_view(view, Options::default())
                .unwrap()
                .into_l()
                .unwrap();
            let error = relative_error(&l, &want);
            assert!(error < 1e-4, "m {m} {triangle:?}: relative error {error:e}");
        }
    }
}

#[test]
fn every_method_and_format_reads_the_view() {
    let gpu = common::gpu();
    for (m, options) in [
        (17, Options::new(Format::Full).method(Method::Faithful)),
        (17, Options::new(Format::Packed).method(Method::Faithful)),
        (65, Options::new(Format::Packed).method(Method::Tiled)),
        (65, Options::new(Format::Full).method(Method::Tiled)),
    ] {
        let c = spd(m, 100.0, 3);
        let want = reference(&c);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            let l = gpu.cholesky_view(view, options).unwrap().into_l().unwrap();
            let error = relative_error(&l, &want);
            assert!(
                error < 1e-4,
                "m {m} {options:?} {triangle:?}: relative error {error:e}"
            );
        }
    }
}

#[test]
fn the_upper_triangle_of_the_transpose_factors_as_the_lower_bit_for_bit() {
    let gpu = common::gpu();
    for m in [17, 65, past_a_tile()] {
        let c = spd(m, 1e3, 7);
        // a: C's lower triangle, garbage above; aᵀ then holds C in its upper triangle.
        let a = Matrix::from_fn(m, m, |i, j| if j <= i { c[(i, j)] } else { 1e30 });
        let at = Matrix::from_fn(m, m, |i, j| a[(j, i)]);
        let lower = SymmetricView::new(a.as_slice(), m, m, Triangle::Lower).unwrap();
        let upper = SymmetricView::new(at.as_slice(), m, m, Triangle::Upper).unwrap();
        let from_lower = gpu.cholesky_view(lower, Options::default()).unwrap();
        let from_upper = gpu.cholesky_view(upper, Options::default()).unwrap();
        let (from_lower, from_upper) = (from_lower.into_l().unwrap(), from_upper.into_l().unwrap());
        assert_eq!(from_lower, from_upper, "m {m}");
        // Gpu::cholesky of the matrix takes the same path.
        let direct = gpu
            .cholesky(&a, Options::default())
            .unwrap()
            .into_l()
            .unwrap();
        assert_eq!(direct, from_lower, "m {m}");
    }
}

#[test]
fn a_scaled_and_a_graded_c_factor_in_range() {
    let gpu = common::gpu();
    // Far from unit scale: C·2^-100 (exact), factored by 4^k into range and back.
    let m = 70;
    let c = spd(m, 10.0, 11);
    let tiny = c.map(|v| v * 2f32.powi(-100));
    for triangle in [Triangle::Lower, Triangle::Upper] {
        let (data, stride) = stored(&tiny, triangle);
        let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
        let l = gpu.cholesky_view(view, Options::default()).unwrap();
        let l = l.into_l().unwrap().map(|v| f64::from(v) * 2f64.powi(50));
        let error = relative_error(&l, &reference(&c));
        assert!(error < 1e-4, "{triangle:?}: relative error {error:e}");
    }
    // A diagonal spanning more than f32's range can bring near 1 at once: equilibrated.
    let graded = Matrix::from_row_major(
        3,
        3,
        vec![1e10f32, 0.0, 0.0, 0.0, 1e-25, 0.0, 0.0, 0.0, 1.0],
    )
    .unwrap();
    for triangle in [Triangle::Lower, Triangle::Upper] {
        let (data, stride) = stored(&graded, triangle);
        let view = SymmetricView::new(&data, 3, stride, triangle).unwrap();
        let l = gpu
            .cholesky_view(view, Options::default())
            .unwrap()
            .into_l()
            .unwrap();
        let error = relative_error(&l, &reference(&graded));
        assert!(
            error < 1e-6,
            "graded {triangle:?}: relative error {error:e}"
        );
        assert!((f64::from(l[(1, 1)]) / 1e-25f64.sqrt() - 1.0).abs() < 1e-6);
    }
}

#[test]
fn a_factor_read_back_in_pieces_is_unscaled_exactly_with_zeros_above() {
    let gpu = common::gpu();
    // Past the staged size (`tuning::DEFAULT_STAGED_FROM_BYTES` of f32), rows cut by the
    // read-back's pieces, and C scaled by 2^±40 (exact): the GPU factors the same 4^k·C, so L
    // comes back as L·2^∓20 bit for bit.
    let m = 530;
    let c = spd(m, 1e3, 5);
    let factor = |scale: f32| {
        let scaled = c.map(|v| v * scale);
        let (data, stride) = stored(&scaled, Triangle::Lower);
        let view = SymmetricView::new(&data, m, stride, Triangle::Lower).unwrap();
        gpu.cholesky_view(view, Options::default())
            .unwrap()
            .into_l()
            .unwrap()
    };
    let l = factor(1.0);
    let error = relative_error(&l, &reference(&c));
    assert!(error < 1e-4, "relative error {error:e}");
    for (scale, back) in [
        (2f32.powi(-40), 2f32.powi(20)),
        (2f32.powi(40), 2f32.powi(-20)),
    ] {
        let scaled = factor(scale);
        for i in 0..m {
            for j in 0..m {
                let (got, want) = (scaled[(i, j)], l[(i, j)]);
                if j > i {
                    assert_eq!(got.to_bits(), 0, "({i}, {j}) above the diagonal");
                } else {
                    assert_eq!(got * back, want, "({i}, {j}) of C·{scale:e}");
                }
            }
        }
    }
}

#[test]
fn not_positive_definite_names_its_column_and_pivot_in_cs_units() {
    let gpu = common::gpu();
    for (m, column) in [(1, 0), (17, 9), (65, 40), (200, 130)] {
        // 1000·C with C(column, column) made negative: the leading minors before it are SPD.
        let mut c = spd(m, 10.0, 13).map(|v| v * 1000.0);
        c[(column, column)] = -1000.0;
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let (data, stride) = stored(&c, triangle);
            let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
            match gpu.cholesky_view(view, Options::default()) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                    column: got,
                    pivot,
                })) => {
                    assert_eq!(got, column, "m {m} {triangle:?}");
                    // C(j,j) − ‖L(j, 0..j)‖² in C's units: below −1000.
                    assert!(pivot < -999.0, "m {m} {triangle:?}: pivot {pivot}");
                }
                other => panic!("m {m} {triangle:?}: expected column {column}, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_c_whose_scaling_would_leave_f32s_range_factors_unscaled() {
    let gpu = common::gpu();
    // A tiny diagonal scaled to 1 by 4^50 takes the entries of 2^100 past f32's largest: C
    // goes up as given, and fails at column 1 in its own units (it is not positive definite).
    let (tiny, huge) = (2f32.powi(-100), 2f32.powi(100));
    let c = Matrix::from_row_major(2, 2, vec![tiny, huge, huge, tiny]).unwrap();
    for triangle in [Triangle::Lower, Triangle::Upper] {
        let (data, stride) = stored(&c, triangle);
        let view = SymmetricView::new(&data, 2, stride, triangle).unwrap();
        match gpu.cholesky_view(view, Options::default()) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                assert_eq!(column, 1, "{triangle:?}");
                assert!(pivot < -1e80, "{triangle:?}: pivot {pivot:e}");
            }
            other => panic!("{triangle:?}: expected column 1, got {other:?}"),
        }
    }
}

#[test]
fn a_non_finite_entry_of_the_read_triangle_is_an_error() {
    let gpu = common::gpu();
    // Orders within one piece of the checked upload and over several (past the staged size);
    // the entry off the diagonal, on it, and the first of two.
    for (m, triangle, (i, j), value) in [
        (65, Triangle::Lower, (40, 3), f32::NAN),
        (65, Triangle::Upper, (3, 40), f32::INFINITY),
        (65, Triangle::Upper, (5, 5), f32::NEG_INFINITY),
        (530, Triangle::Lower, (517, 260), f32::INFINITY),
        (530, Triangle::Upper, (260, 517), f32::NAN),
    ] {
        let c = spd(m, 10.0, 17);
        let (mut data, stride) = stored(&c, triangle);
        if m > 65 {
            // A later entry too: the first in the storage's row order is named.
            data[(m - 1) * stride + (m - 1)] = f32::NAN;
        }
        data[i * stride + j] = value;
        let view = SymmetricView::new(&data, m, stride, triangle).unwrap();
        match gpu.cholesky_view(view, Options::default()) {
            Err(Error::Input(InputError::NonFinite {
                input, position, ..
            })) => {
                let name = format!("{triangle:?}").to_lowercase();
                assert!(input.contains(&name), "{input}");
                assert_eq!(position, format!("row {i}, column {j} (0-based)"));
            }
            other => panic!("m {m} {triangle:?} ({i}, {j}): expected NonFinite, got {other:?}"),
        }
    }
    let empty = SymmetricView::<f32>::new(&[], 0, 0, Triangle::Lower).unwrap();
    assert!(matches!(
        gpu.cholesky_view(empty, Options::default()),
        Err(Error::Input(InputError::Empty { .. }))
    ));
}
