//! Least squares from A where it lies (`Gpu::least_squares_view`): the caller's X
//! (observations x unknowns, row-major) read as A = Xᵀ with no transposed copy, gaps between
//! its rows that hold NaN, f32 input, and views with neither rows nor columns contiguous, each
//! against A row-major and against an f64 solve on the CPU.

use symraster::least_squares::{
    Fallback, NormalEquations, check_problem, relative_error_vec, solve_normal_equations_faer,
};
use symraster::matrix::MatrixView;
use symraster::problems::random_least_squares;
use symraster::{Error, Gpu, InputError, Matrix, SolveOptions, SpdFactor};

/// Aᵀ row by row (the caller's X), `gap` NaNs after each row: what a slice of a wider array
/// leaves between the rows it views.
fn observations<T: Copy>(a: &Matrix<T>, gap: usize, fill: T) -> (Vec<T>, usize) {
    let (m, n) = a.shape();
    let stride = m + gap;
    let mut x = vec![fill; n * stride];
    for k in 0..n {
        for i in 0..m {
            x[k * stride + i] = a[(i, k)];
        }
    }
    (x, stride)
}

/// A of m rows and n columns: section 5.3's random problem at n = 2m, and a square one with
/// a dominant diagonal at n = m (uniform entries alone make a square A too ill-conditioned).
fn problem(m: usize, square: bool) -> (Matrix<f64>, Vec<f64>, Vec<f64>) {
    let p = random_least_squares(m as u64 + 7, m);
    if !square {
        return (p.a, p.d, p.b);
    }
    let a = Matrix::from_fn(m, m, |i, j| p.a[(i, j)] + if i == j { 4.0 } else { 0.0 });
    (a, p.d[..m].to_vec(), p.b[..m].to_vec())
}

#[test]
fn observations_by_rows_solve_as_a_does() {
    let gpu = Gpu::new().unwrap();
    for m in [1, 3, 17, 63, 65, 130] {
        for square in [false, true] {
            let (a, d, b) = problem(m, square);
            let n = a.cols();
            let x_cpu = solve_normal_equations_faer(&a, &d, &b).unwrap();
            let from_rows = gpu.least_squares(&a, &d, &b, SolveOptions::new()).unwrap();
            for gap in [0, 3] {
                let (x, stride) = observations(&a, gap, f64::NAN);
                let view = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
                let s = gpu
                    .least_squares_view(view, &d, &b, SolveOptions::new())
                    .unwrap();
                let case = format!("m = {m}, n = {n}, gap {gap}");
                assert!(s.converged, "{case}: {:?}", s.criteria);
                assert!(relative_error_vec(&s.x, &from_rows.x) <= 1e-14, "{case}");
                assert!(relative_error_vec(&s.x, &x_cpu) <= 1e-10, "{case}");
            }
        }
    }
}

/// Every method this device runs (the rasterizing ones read A on the host: its diagonal,
/// its f32 copy, the residuals), with A by columns as with A by rows; the fallbacks too.
#[test]
fn every_method_and_fallback_reads_a_by_columns() {
    let gpu = Gpu::new().unwrap();
    let (a, d, b) = problem(17, false);
    let (m, n) = a.shape();
    let (x, stride) = observations(&a, 2, f64::NAN);
    let view = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
    let x_cpu = solve_normal_equations_faer(&a, &d, &b).unwrap();
    for method in gpu.methods() {
        // The f32 factor's x⁰, which one step does not take to the default test.
        let single = SolveOptions::new().spd_factor(SpdFactor::Single);
        let opts = single.gpu(single.gpu.method(method));
        for (opts, fallback) in [
            (opts, None),
            (opts.tolerance(0.0), Some("stagnated")),
            (opts.max_iterations(1), Some("limit")),
        ] {
            let rows = gpu.least_squares(&a, &d, &b, opts).unwrap();
            let columns = gpu.least_squares_view(view, &d, &b, opts).unwrap();
            let case = format!("{method}, fallback {fallback:?}");
            assert_eq!(columns.fallback.is_some(), fallback.is_some(), "{case}");
            assert_eq!(
                columns.fallback.is_some(),
                rows.fallback.is_some(),
                "{case}"
            );
            if fallback == Some("limit") {
                assert_eq!(columns.fallback, Some(Fallback::IterationLimit), "{case}");
            }
            assert!(relative_error_vec(&columns.x, &rows.x) <= 1e-14, "{case}");
            assert!(relative_error_vec(&columns.x, &x_cpu) <= 1e-10, "{case}");
        }
    }
}

/// f32 observations by rows are widened exactly, as an f32 A is; a view with neither rows nor
/// columns contiguous (every other value of a larger array) is read through its copy.
#[test]
fn single_precision_and_strided_views_solve_too() {
    let gpu = Gpu::new().unwrap();
    let (a, d, b) = problem(33, false);
    let (m, n) = a.shape();
    let a32 = a.map(|v| v as f32);
    let (d32, b32): (Vec<f32>, Vec<f32>) = (
        d.iter().map(|&v| v as f32).collect(),
        b.iter().map(|&v| v as f32).collect(),
    );
    let want = gpu
        .least_squares(&a32, &d32, &b32, SolveOptions::new())
        .unwrap();
    let (x32, stride) = observations(&a32, 1, f32::NAN);
    let view = MatrixView::new(&x32, n, m, stride, 1).unwrap().transpose();
    let s = gpu
        .least_squares_view(view, &d32, &b32, SolveOptions::new())
        .unwrap();
    assert!(relative_error_vec(&s.x, &want.x) <= 1e-14);
    let widen = |v: &[f32]| v.iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
    let x_cpu = solve_normal_equations_faer(&a32.to_f64(), &widen(&d32), &widen(&b32)).unwrap();
    assert!(relative_error_vec(&s.x, &x_cpu) <= 1e-10);
    // Entry (i, j) of A at 2·(i·n + j): NaN between every two of them.
    let mut spread = vec![f64::NAN; 2 * m * n];
    for i in 0..m {
        for j in 0..n {
            spread[2 * (i * n + j)] = a[(i, j)];
        }
    }
    let view = MatrixView::new(&spread, m, n, 2 * n, 2).unwrap();
    let rows = gpu.least_squares(&a, &d, &b, SolveOptions::new()).unwrap();
    let s = gpu
        .least_squares_view(view, &d, &b, SolveOptions::new())
        .unwrap();
    assert!(relative_error_vec(&s.x, &rows.x) <= 1e-14);
    let x_cpu = solve_normal_equations_faer(&a, &d, &b).unwrap();
    assert!(relative_error_vec(&s.x, &x_cpu) <= 1e-10);
    let equations = NormalEquations::new(view, &d, &b);
    let by_rows = NormalEquations::new(&a, &d, &b);
    assert!(relative_error_vec(equations.rhs(), by_rows.rhs()) <= 1e-15);
}

/// A non-finite entry inside the view is named at its place in A; the NaNs outside it (the
/// gaps) are never read; a slice too short for the view is a shape error.
#[test]
fn views_are_checked_where_they_read() {
    let (a, d, b) = problem(5, false);
    let (m, n) = a.shape();
    let (mut x, stride) = observations(&a, 2, f64::NAN);
    let view = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
    check_problem(view, &d, &b).unwrap();
    x[7 * stride + 3] = f64::INFINITY;
    let view = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
    let e = check_problem(view, &d, &b).unwrap_err();
    assert!(
        matches!(&e, Error::Input(InputError::NonFinite { input, position, .. })
            if input == "A" && position == "row 3, column 7 (0-based)"),
        "{e}"
    );
    let e = MatrixView::new(&x[..x.len() - 3], n, m, stride, 1).unwrap_err();
    assert!(matches!(e, Error::Input(InputError::Shape(_))), "{e}");
}

/// Empty views are refused as an empty A is, in either precision and layout.
#[test]
fn empty_views_are_refused() {
    let gpu = Gpu::new().unwrap();
    let none: [f32; 0] = [];
    for (rows, cols) in [(3, 0), (0, 4)] {
        let view = MatrixView::new(&none, rows, cols, 7, 5).unwrap();
        let e = gpu
            .least_squares_view(
                view,
                &vec![1.0; cols],
                &vec![1.0; cols],
                SolveOptions::new(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Input(InputError::Empty { .. })), "{e}");
    }
}

/// A non-finite entry of A is the same error from A by rows (whole or strided) and by columns,
/// with every method, at its first, a middle and its last entry; with d not finite as well,
/// A's error comes first.
#[test]
fn a_non_finite_entry_is_named_by_every_path() {
    let gpu = Gpu::new().unwrap();
    let (a, d, b) = problem(33, false);
    let (m, n) = a.shape();
    for (i, j) in [(0, 0), (17, 40), (m - 1, n - 1)] {
        for value in [f64::NAN, f64::NEG_INFINITY] {
            let mut bad = a.clone();
            bad[(i, j)] = value;
            let (x, stride) = observations(&bad, 1, f64::NAN);
            let columns = MatrixView::new(&x, n, m, stride, 1).unwrap().transpose();
            // A by rows with NaN gaps between them (checked as its pieces go up).
            let row_stride = n + 2;
            let mut lines = vec![f64::NAN; m * row_stride];
            for r in 0..m {
                lines[r * row_stride..r * row_stride + n].copy_from_slice(bad.row(r));
            }
            let strided_rows = MatrixView::new(&lines, m, n, row_stride, 1).unwrap();
            let mut bad_d = d.clone();
            bad_d[3] = f64::NAN;
            for method in gpu.methods() {
                let opts = SolveOptions::new().gpu(SolveOptions::new().gpu.method(method));
                let case = format!("{method} ({i}, {j}) {value}");
                for e in [
                    gpu.least_squares(&bad, &d, &b, opts).unwrap_err(),
                    gpu.least_squares_view(columns, &d, &b, opts).unwrap_err(),
                    gpu.least_squares_view(strided_rows, &d, &b, opts)
                        .unwrap_err(),
                    gpu.least_squares(&bad, &bad_d, &b, opts).unwrap_err(),
                ] {
                    assert!(
                        matches!(&e, Error::Input(InputError::NonFinite { input, position, .. })
                            if input == "A"
                                && *position == format!("row {i}, column {j} (0-based)")),
                        "{case}: {e}"
                    );
                }
            }
        }
    }
}
