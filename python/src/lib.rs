//! `symraster._native`: the thin layer between numpy arrays and symraster's public API. The
//! scipy conventions (argument names, dtype rules, which triangle is read, check_finite) live
//! in the Python package (`symraster/__init__.py`); this module copies arrays in once (any
//! order or strides, straight into the library's row-major `Matrix`), runs the operation on
//! the GPU worker thread (`worker.rs`) with the GIL released, and hands results back without
//! a copy. The batched operations (numpy's stacked arrays) are in `batched.rs`.

mod batched;
#[cfg(feature = "bench")]
mod bench;
mod device;
mod errors;
mod worker;

use numpy::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use symraster::{
    Format, InverseMethod, InvertOptions, Matrix, Method, Options, Solution, SolveOptions,
    SymmetricView, Triangle,
};

use errors::{Names, finish, finish_as};
use symraster::least_squares::Fallback;

/// A matrix from Python in the precision it came in.
enum Mat {
    F32(Matrix<f32>),
    F64(Matrix<f64>),
}

/// A vector from Python in the precision it came in.
enum Vector {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Copies a 2-D view into a row-major `Matrix` (of its transpose with `transpose`).
fn matrix_of<T: Copy + Send + Sync>(
    view: ArrayView2<'_, T>,
    transpose: bool,
) -> symraster::Result<Matrix<T>> {
    let (rows, cols) = if transpose {
        (view.ncols(), view.nrows())
    } else {
        view.dim()
    };
    let mut data = symraster::memory::with_capacity(rows * cols, || {
        format!("a copy of the {}x{} array", view.nrows(), view.ncols())
    })?;
    append_row_major(&mut data, view, transpose);
    Matrix::from_row_major(rows, cols, data)
}

/// The side of the square tiles the strided copies move (a C array read transposed, for the
/// upper triangle, stays within the caches).
const TILE: usize = 64;

/// Copies of at least this many values run over all cores.
const PARALLEL: usize = 1 << 18;

/// Appends a 2-D view to `data` row-major (its transpose with `transpose`), over all cores for
/// a large view: a copy of contiguous memory where the view is contiguous in that order, else
/// row by row ([`copy_part`]). `data` gets room for the view fallibly first where the
/// callers reserved it (no memory is a `MemoryError`, not an abort).
fn append_row_major<T: Copy + Send + Sync>(
    data: &mut Vec<T>,
    view: ArrayView2<'_, T>,
    transpose: bool,
) {
    let view = if transpose {
        view.reversed_axes()
    } else {
        view
    };
    let (rows, cols) = view.dim();
    let start = data.len();
    data.reserve(rows * cols);
    let spare = &mut data.spare_capacity_mut()[..rows * cols];
    if let Some(s) = view.as_slice() {
        copy_values(spare, s);
    } else {
        copy_part(spare, view, Part::All);
    }
    // SAFETY: both copies write every (i, j) of the rows x cols matrix.
    unsafe { data.set_len(start + rows * cols) };
}

/// `out` = `values`, over all cores for many values.
fn copy_values<T: Copy + Send + Sync>(out: &mut [std::mem::MaybeUninit<T>], values: &[T]) {
    use rayon::prelude::*;
    let copy = |(o, v): (&mut [std::mem::MaybeUninit<T>], &[T])| {
        for (o, &v) in o.iter_mut().zip(v) {
            o.write(v);
        }
    };
    if values.len() >= PARALLEL {
        out.par_chunks_mut(PARALLEL / 4)
            .zip(values.par_chunks(PARALLEL / 4))
            .for_each(copy);
    } else {
        copy((out, values));
    }
}

/// The columns of each row that a copy writes or a pass reads: the one place a row is split
/// by triangle.
#[derive(Clone, Copy)]
enum Part {
    /// Every column.
    All,
    /// The lower triangle with the diagonal (j <= i).
    Lower,
    /// The upper triangle with the diagonal (j >= i).
    Upper,
    /// The strict upper triangle (j > i).
    StrictUpper,
    /// The strict lower triangle (j < i).
    StrictLower,
}

impl Part {
    /// The triangle `t`, diagonal included.
    fn triangle(t: Triangle) -> Self {
        match t {
            Triangle::Lower => Part::Lower,
            Triangle::Upper => Part::Upper,
        }
    }

    /// What lies outside the triangle `t`: the other strict triangle.
    fn outside(t: Triangle) -> Self {
        match t {
            Triangle::Lower => Part::StrictUpper,
            Triangle::Upper => Part::StrictLower,
        }
    }

    /// The columns of row `i` (of `cols`) this part holds.
    fn columns(self, i: usize, cols: usize) -> std::ops::Range<usize> {
        let diagonal = (i + 1).min(cols);
        match self {
            Part::All => 0..cols,
            Part::Lower => 0..diagonal,
            Part::Upper => i.min(cols)..cols,
            Part::StrictUpper => diagonal..cols,
            Part::StrictLower => 0..i.min(cols),
        }
    }
}

/// Writes `view`'s entries in `part` into the row-major `out` of `view`'s shape, leaving the
/// others as they are, over all cores for a large view (bands of rows, each its own part of
/// `out`): each row's columns as one slice where rows are contiguous (column stride 1), else
/// in `TILE` x `TILE` tiles (a transposing read, kept within the caches).
fn copy_part<T: Copy + Send + Sync>(
    out: &mut [std::mem::MaybeUninit<T>],
    view: ArrayView2<'_, T>,
    part: Part,
) {
    let (rows, cols) = view.dim();
    if rows == 0 || cols == 0 {
        return;
    }
    let contiguous = view.strides()[1] == 1 || cols == 1;
    // Rows i0.. of the band `out` (whole rows of `out`).
    let band = |i0: usize, out: &mut [std::mem::MaybeUninit<T>]| {
        if contiguous {
            for (i, out) in out.chunks_exact_mut(cols).enumerate() {
                let columns = part.columns(i0 + i, cols);
                let row = view.row(i0 + i);
                let row = row.to_slice().expect("a row of column stride 1 is a slice");
                out[columns.clone()].write_copy_of_slice(&row[columns]);
            }
            return;
        }
        let height = out.len() / cols;
        for j0 in (0..cols).step_by(TILE) {
            let tile = j0..(j0 + TILE).min(cols);
            for i in 0..height {
                let columns = part.columns(i0 + i, cols);
                for j in columns.start.max(tile.start)..columns.end.min(tile.end) {
                    // SAFETY: i0 + i < rows and j < cols (the band and part bounds).
                    out[i * cols + j].write(unsafe { *view.uget((i0 + i, j)) });
                }
            }
        }
    };
    // Bands of whole rows: `TILE` for the tiles, at least a quarter of `PARALLEL` values
    // for the slices (enough per task, and many tasks for the triangles' uneven rows).
    let height = if contiguous {
        (PARALLEL / 4).div_ceil(cols)
    } else {
        TILE
    };
    if rows * cols >= PARALLEL {
        use rayon::prelude::*;
        out[..rows * cols]
            .par_chunks_mut(height * cols)
            .enumerate()
            .for_each(|(b, out)| band(b * height, out));
    } else {
        for (b, out) in out[..rows * cols].chunks_mut(height * cols).enumerate() {
            band(b * height, out);
        }
    }
}

/// `values` as slots to overwrite (with initialised values only).
fn as_slots<T>(values: &mut [T]) -> &mut [std::mem::MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the callers write only initialised
    // values into the slots.
    unsafe { &mut *(values as *mut [T] as *mut [std::mem::MaybeUninit<T>]) }
}

/// The lower triangle of a square view (of its transpose with `transpose`) in a row-major
/// `Matrix`, zeros above the diagonal: what the Cholesky factorisations read, copied without
/// the triangle they do not (whose memory, zeroed by the allocator, is not touched).
fn lower_of<T: Copy + Send + Sync + symraster::memory::Zero>(
    view: ArrayView2<'_, T>,
    transpose: bool,
) -> symraster::Result<Matrix<T>> {
    let view = if transpose {
        view.reversed_axes()
    } else {
        view
    };
    let (rows, cols) = view.dim();
    let mut data = symraster::memory::zeros(rows * cols, || {
        format!("a copy of the {rows}x{cols} array's lower triangle")
    })?;
    copy_part(as_slots(&mut data), view, Part::Lower);
    Matrix::from_row_major(rows, cols, data)
}

/// Copies a 1-D view into a `Vec`.
fn vec_of<T: Copy>(view: ArrayView1<'_, T>) -> symraster::Result<Vec<T>> {
    let what = || format!("a copy of the array of {} values", view.len());
    Ok(match view.as_slice() {
        Some(s) => symraster::memory::copy(s, what)?,
        None => symraster::memory::collect(view.iter().copied(), what)?,
    })
}

/// A vector widened to f64, or the error of no memory for it.
fn widened(v: &[f32]) -> symraster::Result<Vec<f64>> {
    let what = || format!("the {} values widened to float64", v.len());
    Ok(symraster::memory::collect(
        v.iter().map(|&x| f64::from(x)),
        what,
    )?)
}

/// Reads a float32 or float64 2-D array (the Python layer has cast every other dtype),
/// copying with the GIL released.
fn read_matrix(py: Python<'_>, a: &Bound<'_, PyAny>, transpose: bool) -> PyResult<Mat> {
    read_2d(py, a, transpose, false)
}

/// Reads the lower triangle of a float32 or float64 square array (its upper one, transposed,
/// with `transpose`) into a `Matrix` with zeros above the diagonal, for the library's calls
/// that read C's lower triangle alone: the other triangle is not copied.
fn read_lower(py: Python<'_>, a: &Bound<'_, PyAny>, transpose: bool) -> PyResult<Mat> {
    read_2d(py, a, transpose, true)
}

/// [`read_matrix`], or with `lower_only` [`read_lower`].
fn read_2d(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    transpose: bool,
    lower_only: bool,
) -> PyResult<Mat> {
    fn copy<T: Copy + Send + Sync + symraster::memory::Zero>(
        view: ArrayView2<'_, T>,
        transpose: bool,
        lower_only: bool,
    ) -> symraster::Result<Matrix<T>> {
        if lower_only {
            lower_of(view, transpose)
        } else {
            matrix_of(view, transpose)
        }
    }
    let copied = if let Ok(a) = a.extract::<PyReadonlyArray2<'_, f64>>() {
        let view = a.as_array();
        py.detach(|| copy(view, transpose, lower_only))
            .map(Mat::F64)
    } else if let Ok(a) = a.extract::<PyReadonlyArray2<'_, f32>>() {
        let view = a.as_array();
        py.detach(|| copy(view, transpose, lower_only))
            .map(Mat::F32)
    } else {
        return Err(PyTypeError::new_err(
            "expected a 2-D float32 or float64 numpy array",
        ));
    };
    copied.map_err(|e| errors::to_py(py, e))
}

/// Reads a float32 or float64 1-D array.
fn read_vector(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Vector> {
    let copied = if let Ok(a) = a.extract::<PyReadonlyArray1<'_, f64>>() {
        vec_of(a.as_array()).map(Vector::F64)
    } else if let Ok(a) = a.extract::<PyReadonlyArray1<'_, f32>>() {
        vec_of(a.as_array()).map(Vector::F32)
    } else {
        return Err(PyTypeError::new_err(
            "expected a 1-D float32 or float64 numpy array",
        ));
    };
    copied.map_err(|e| errors::to_py(py, e))
}

/// A `Matrix` as a numpy array, without a copy.
fn array_of<T: numpy::Element + Copy>(py: Python<'_>, m: Matrix<T>) -> Bound<'_, PyArray2<T>> {
    let (rows, cols) = m.shape();
    Array2::from_shape_vec((rows, cols), m.into_vec())
        .expect("a Matrix's data fills its shape")
        .into_pyarray(py)
}

/// The method and storage keywords as `Options`.
fn options(method: &str, storage: &str) -> PyResult<Options> {
    let method = match method {
        "auto" => Method::Auto,
        "tiled" => Method::Tiled,
        "blocked" => Method::Blocked,
        "faithful" => Method::Faithful,
        other => {
            return Err(PyValueError::new_err(format!(
                "method must be 'auto', 'tiled', 'blocked' or 'faithful', not {other:?}"
            )));
        }
    };
    let format = match storage {
        "full" => Format::Full,
        "packed" | "rfp" => Format::Packed,
        other => {
            return Err(PyValueError::new_err(format!(
                "storage must be 'full' or 'packed' (LAPACK's RFP for the tiled method), not \
                 {other:?}"
            )));
        }
    };
    Ok(Options::new(format).method(method))
}

/// The mixed-precision solves' diagnostics as a dict.
fn solution_dict<'py>(py: Python<'py>, s: &Solution, seconds: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("iterations", s.iterations)?;
    d.set_item("backward_error", s.backward_error)?;
    d.set_item("condition", s.condition)?;
    d.set_item("forward_error_estimate", s.forward_error_estimate)?;
    d.set_item("converged", s.converged)?;
    let (fallback, fallback_at) = match s.fallback.map(fallback_of) {
        Some((name, at)) => (Some(name), at),
        None => (None, None),
    };
    d.set_item("fallback", fallback)?;
    d.set_item("fallback_at", fallback_at)?;
    d.set_item("residuals", s.residuals.clone())?;
    d.set_item("tolerance", s.tolerance)?;
    d.set_item("api_seconds", seconds)?;
    Ok(d)
}

/// Why the float64 CPU solve produced x, as the Python layer documents it (`LstsqResult.fallback`):
/// a name, and the step (for "stagnated") or the f32 factor's failing column (for
/// "single_factor_failed") it happened at. Every variant is named here: a new one fails to
/// compile rather than reach Python as a debug string.
fn fallback_of(f: Fallback) -> (&'static str, Option<usize>) {
    match f {
        Fallback::Stagnated { iteration } => ("stagnated", Some(iteration)),
        Fallback::IterationLimit => ("iteration_limit", None),
        Fallback::SingleFactorFailed { column } => ("single_factor_failed", Some(column)),
    }
}

/// The device, its OpenGL version and the methods it runs, as `symraster info` lists them.
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let outcome = worker::run(py, |state| {
        let gpu = state.gpu()?;
        let methods: Vec<String> = gpu.methods().iter().map(|m| m.name().to_string()).collect();
        Ok((gpu.info().clone(), methods))
    });
    let ((i, methods), _) = finish(py, outcome)?;
    let d = PyDict::new(py);
    d.set_item("vendor", i.vendor)?;
    d.set_item("renderer", i.renderer)?;
    d.set_item("version", i.version)?;
    d.set_item("gl_version", i.gl_version)?;
    d.set_item("max_texture_size", i.max_texture_size)?;
    d.set_item("driver_max_texture_size", i.driver_max_texture_size)?;
    d.set_item("egl_device_index", i.egl_device_index)?;
    d.set_item("egl_device_count", i.egl_device_count)?;
    d.set_item("software", i.software)?;
    d.set_item("auto", methods.first().cloned())?;
    d.set_item("methods", methods)?;
    Ok(d)
}

/// The float64 factor L (C = L·Lᵀ, zeros above the diagonal) of the lower triangle of `c`,
/// to float64's accuracy (dpotrf's; on the GPU from order [`DEVICE_CHOLESKY_FROM`], on the
/// host below): the one call every float64 factor of the binding goes through (`cholesky`,
/// `cho_factor`, `Cholesky.factor`). It runs on the worker: the host's
/// thread pool (rayon's, which faer uses) has no threads in a forked child and would hang
/// there, and the worker refuses a forked child.
fn factor_f64(state: &mut worker::State, c: &Matrix<f64>) -> symraster::Result<Matrix<f64>> {
    if c.rows() >= DEVICE_CHOLESKY_FROM && c.rows() == c.cols() {
        let view = symraster::SymmetricView::lower(c);
        match state.gpu()?.cholesky_double(view, Default::default()) {
            Err(e) if beyond_device(&e) => {}
            done => return done,
        }
    }
    symraster::host::cholesky(c)
}

/// Whether the GPU's f64 factor could not take the problem at all (no compute shaders, C
/// larger than a storage buffer, device memory exhausted): the host's factor takes it then.
fn beyond_device(e: &symraster::Error) -> bool {
    matches!(
        e.kind(),
        symraster::ErrorKind::Device | symraster::ErrorKind::OutOfMemory
    )
}

/// The orders from which a float64 factor is the GPU's (`Gpu::cholesky_double`); below, the
/// host's dpotrf is as quick as the chained launch and the transfers
/// (`figures/h200/experiments/frontdoor/double_chain.csv`).
const DEVICE_CHOLESKY_FROM: usize = 256;

/// The dtypes `cholesky` and `cho_factor` factor, each its own way.
trait Factored: numpy::Element + Copy + Send + Sync + symraster::memory::Zero + 'static {
    /// L of the lower triangle of `c` in this dtype, on the worker.
    fn factor(
        state: &mut worker::State,
        c: &Matrix<Self>,
        opts: Options,
    ) -> symraster::Result<Matrix<Self>>;

    /// L of `a`'s triangle `upper` names, `a` read where it lies, where the dtype, the order and
    /// the layout allow it, with whether it came back as U = Lᵀ instead (row-major, for a C
    /// array's upper triangle); `None`: the triangle is copied and [`Factored::factor`] runs.
    fn factor_lent(
        _py: Python<'_>,
        _a: &PyReadonlyArray2<'_, Self>,
        _upper: bool,
        _opts: Options,
        _beside: &mut Beside<'_>,
    ) -> Option<PyResult<(Matrix<Self>, bool)>> {
        None
    }
}

impl Factored for f64 {
    /// The GPU's f64 factor of the array where it lies (no copy), from the order the GPU takes:
    /// for a C array's upper triangle U itself, turned over on the GPU, so that U and `a`'s
    /// other triangle are written row by row.
    fn factor_lent(
        py: Python<'_>,
        a: &PyReadonlyArray2<'_, f64>,
        upper: bool,
        _: Options,
        beside: &mut Beside<'_>,
    ) -> Option<PyResult<(Matrix<f64>, bool)>> {
        if a.as_array().nrows() < DEVICE_CHOLESKY_FROM {
            return None;
        }
        lent_factor(py, a, upper, beside, move |gpu, c, swapped| {
            if upper && !swapped {
                Ok((gpu.cholesky_double_upper(c, Default::default())?, true))
            } else {
                Ok((gpu.cholesky_double(c, Default::default())?, false))
            }
        })
    }

    fn factor(
        state: &mut worker::State,
        c: &Matrix<f64>,
        _: Options,
    ) -> symraster::Result<Matrix<f64>> {
        factor_f64(state, c)
    }
}

impl Factored for f32 {
    /// The GPU's factor of the array where it lies (`Gpu::cholesky_view`): its stored triangle
    /// goes from the array into the GPU's upload, with no copy on the host.
    fn factor_lent(
        py: Python<'_>,
        a: &PyReadonlyArray2<'_, f32>,
        upper: bool,
        opts: Options,
        beside: &mut Beside<'_>,
    ) -> Option<PyResult<(Matrix<f32>, bool)>> {
        lent_factor(py, a, upper, beside, move |gpu, c, _| {
            Ok((gpu.cholesky_view(c, opts)?.into_l()?, false))
        })
    }

    /// The GPU's factor (float32's accuracy).
    fn factor(
        state: &mut worker::State,
        c: &Matrix<f32>,
        opts: Options,
    ) -> symraster::Result<Matrix<f32>> {
        state.gpu()?.cholesky(c, opts)?.into_l()
    }
}

/// `factor(gpu, C, swapped)` on the worker with C the triangle of `a` that `upper` names, lent
/// where it lies (`swapped`: `a` is read as its transpose, a Fortran array), `beside` on the
/// calling thread meanwhile; `None` where `a` cannot be lent or the GPU cannot take it (no
/// compute shaders, too large, out of memory): the caller's copy path runs then.
fn lent_factor<T, F>(
    py: Python<'_>,
    a: &PyReadonlyArray2<'_, T>,
    upper: bool,
    beside: &mut Beside<'_>,
    factor: F,
) -> Option<PyResult<(Matrix<T>, bool)>>
where
    T: Factored + symraster::Element,
    F: FnOnce(&symraster::Gpu, SymmetricView<'_, T>, bool) -> symraster::Result<(Matrix<T>, bool)>
        + Send
        + 'static,
{
    let (lent, order, stride, triangle, swapped) = lend(a, upper)?;
    let outcome = beside.run(py, move |state| {
        // SAFETY: inside the job of this `run`, while `a` is borrowed (see `Lent`).
        let data = unsafe { lent.get() };
        let c = SymmetricView::new(data, order, stride, triangle)?;
        factor(state.gpu()?, c, swapped)
    });
    match outcome {
        worker::Outcome::Done(Err(ref e), _) if beyond_device(e) => None,
        outcome => Some(finish(py, outcome).map(|(l, _)| l)),
    }
}

/// L of `a`'s lower triangle (of its upper one with `upper`: U = Lᵀ, row-major where the
/// factor came back turned over, else L's transposed view) in a row-major buffer, its other
/// triangle zero or, with `other`, holding `a`'s other triangle (scipy's `cho_factor` output,
/// the factor's storage written once): the triangle the factor reads copied in (no more), the
/// factor's own buffer handed out (no copy back). `beside` runs on the calling thread while
/// the worker factors, and its error comes before the factor's.
fn factor_array<'py, T: Factored>(
    py: Python<'py>,
    a: &PyReadonlyArray2<'py, T>,
    upper: bool,
    opts: Options,
    other: bool,
    beside: &mut Beside<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let view = a.as_array();
    let factored = match T::factor_lent(py, a, upper, opts, beside) {
        Some(l) => l,
        None => py
            .detach(|| lower_of(view, upper))
            .map_err(|e| errors::to_py(py, e))
            .and_then(|c| {
                let outcome = beside.run(py, move |state| T::factor(state, &c, opts));
                Ok((finish(py, outcome)?.0, false))
            }),
    };
    beside.finish(py)?;
    let (l, turned) = factored?;
    let m = l.rows();
    let mut data = l.into_vec();
    if other {
        // a's other triangle where the factor's storage leaves it: below U's diagonal, or
        // above L's (of aᵀ for an upper factor held as L).
        let (view, part) = match (upper, turned) {
            (true, true) => (view, Part::StrictLower),
            (true, false) => (view.reversed_axes(), Part::StrictUpper),
            (false, _) => (view, Part::StrictUpper),
        };
        py.detach(|| copy_part(as_slots(&mut data), view, part));
    }
    let l = Array2::from_shape_vec((m, m), data)
        .expect("a Matrix's data fills its shape")
        .into_pyarray(py)
        .into_any();
    // U = Lᵀ: as it came back, or the transposed view of L (no copy).
    if upper && !turned {
        l.getattr("T")
    } else {
        Ok(l)
    }
}

/// `factor_array` for a float32 or float64 `a`; with `check_finite`, scipy's check of the
/// triangle the factor does not read (the library checks the one it reads) beside it.
fn factor_any<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    upper: bool,
    opts: Options,
    other: bool,
    check_finite: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let held = Held::of(a)?;
    let mut beside = Beside::outside(held.view(), upper, check_finite);
    if let (true, Held::F64(a)) = (other, &held)
        && let Some(c) = cho_factor_lent(py, a, upper, &mut beside)
    {
        return c;
    }
    match &held {
        Held::F64(a) => factor_array(py, a, upper, opts, other, &mut beside),
        Held::F32(a) => factor_array(py, a, upper, opts, other, &mut beside),
    }
}

/// scipy's float64 `cho_factor` output from the GPU's f64 factor of `a` lent where it lies
/// (`Gpu::cholesky_double_into`): the factor written into its triangle of the result, `a`'s
/// other triangle copied into the rest over all cores while the GPU factors, and `beside`
/// checking that triangle on the calling thread meanwhile. `None` where [`Factored::factor_lent`] would be (small, not lent,
/// beyond the device): the copy path runs then.
fn cho_factor_lent<'py>(
    py: Python<'py>,
    a: &PyReadonlyArray2<'py, f64>,
    upper: bool,
    beside: &mut Beside<'_>,
) -> Option<PyResult<Bound<'py, PyAny>>> {
    let m = a.as_array().nrows();
    if m < DEVICE_CHOLESKY_FROM {
        return None;
    }
    let (lent, order, stride, triangle, swapped) = lend(a, upper)?;
    let (whole, rs, cs) = strided(a.as_array())?;
    // U row-major where the GPU turns it over; else L, handed out as U = Lᵀ's view where
    // `upper`. a's entries at the result's positions: aᵀ's in L's storage for that view.
    let turned = upper && !swapped;
    let (rs, cs) = if upper && !turned { (cs, rs) } else { (rs, cs) };
    let outcome = beside.run(py, move |state| {
        // SAFETY: inside the job of this `run`, while `a` is borrowed (see `Lent`).
        let (data, whole) = unsafe { (lent.get(), whole.get()) };
        let c = SymmetricView::new(data, order, stride, triangle)?;
        let mut square = symraster::memory::zeros(order * order, || {
            format!("the Cholesky factor of order {order} in float64")
        })?;
        state.gpu()?.cholesky_double_into(
            c,
            Default::default(),
            turned,
            &mut square,
            |i, j0, row| {
                let from = i * rs + j0 * cs;
                if cs == 1 {
                    row.copy_from_slice(&whole[from..from + row.len()]);
                } else {
                    for (k, v) in row.iter_mut().enumerate() {
                        *v = whole[from + k * cs];
                    }
                }
            },
        )?;
        Ok(square)
    });
    if let worker::Outcome::Done(Err(ref e), _) = outcome
        && beyond_device(e)
    {
        return None;
    }
    Some((|| {
        beside.finish(py)?;
        let (square, _) = finish(py, outcome)?;
        let c = Array2::from_shape_vec((m, m), square)
            .expect("the square holds m·m values")
            .into_pyarray(py)
            .into_any();
        if upper && !turned {
            c.getattr("T")
        } else {
            Ok(c)
        }
    })())
}

/// The Cholesky factor of `a` (its lower triangle, or with `upper` its upper one) in `a`'s
/// dtype: L lower, or with `upper` U = Lᵀ, the other triangle zero. float32 on the GPU;
/// float64 to float64's accuracy ([`factor_f64`]). With `check_finite`, a non-finite entry
/// in the other triangle is scipy's ValueError (checked while the worker factors).
#[pyfunction]
#[pyo3(signature = (a, upper, method, storage, check_finite=false))]
fn cholesky<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    upper: bool,
    method: &str,
    storage: &str,
    check_finite: bool,
) -> PyResult<Bound<'py, PyAny>> {
    factor_any(py, a, upper, options(method, storage)?, false, check_finite)
}

/// scipy's `cho_factor` output for `a` (float32 or float64, square): one array in `a`'s
/// dtype holding [`cholesky`]'s factor in the triangle `upper` names and `a`'s entries in the
/// other, made in one pass into the factor's own storage. `check_finite` as [`cholesky`]'s.
#[pyfunction]
#[pyo3(signature = (a, upper, method, storage, check_finite=false))]
fn cho_factor<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    upper: bool,
    method: &str,
    storage: &str,
    check_finite: bool,
) -> PyResult<Bound<'py, PyAny>> {
    factor_any(py, a, upper, options(method, storage)?, true, check_finite)
}

/// X with L·Lᵀ·X = B in float64 from the lower-triangular float64 `l` as given (its strict
/// upper triangle unread) and the 2-D float64 `b`: LAPACK's dpotrs on the host
/// (`symraster::host::cholesky_solve_strided`) with L read where it lies (any non-negative
/// strides: a C or Fortran array, scipy's `c.T`), not copied. With `check_finite`, a
/// non-finite entry anywhere in `l` is scipy's ValueError (checked beside the solve, the
/// solution dropped).
#[pyfunction]
#[pyo3(signature = (l, b, check_finite=false))]
fn cho_solve_f64<'py>(
    py: Python<'py>,
    l: PyReadonlyArray2<'py, f64>,
    b: PyReadonlyArray2<'py, f64>,
    check_finite: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let m = l.as_array().nrows();
    if l.as_array().ncols() != m || b.as_array().nrows() != m {
        return Err(PyValueError::new_err(format!(
            "L is {:?} and B {:?}: L must be square with B's rows",
            l.as_array().dim(),
            b.as_array().dim()
        )));
    }
    let source = match strided(l.as_array()) {
        Some((lent, rs, cs)) => Factor::Lent(lent, rs, cs),
        None => {
            let view = l.as_array();
            let copy = py
                .detach(|| matrix_of(view, false))
                .map_err(|e| errors::to_py(py, e))?;
            Factor::Owned(copy)
        }
    };
    let bv = b.as_array();
    let rhs = py
        .detach(|| matrix_of(bv, false))
        .map_err(|e| errors::to_py(py, e))?;
    // All of `l` checked on the pool beside the solve where its values fill their memory (C or
    // Fortran order: the solve, bound by memory's speed, leaves the cores room), else on the
    // calling thread while the worker solves.
    let whole = l
        .as_array()
        .as_slice_memory_order()
        .filter(|_| check_finite)
        .map(worker::Lent::new);
    let mut beside = Beside::new(
        Some(Square::F64(l.as_array())),
        None,
        check_finite && whole.is_none(),
        false,
    );
    // On the worker, as the float64 factor (`factor_f64`).
    let outcome = beside.run(py, move |_| {
        let (data, rs, cs) = match &source {
            // SAFETY: inside the job of this `run`, while `l` is borrowed (see `Lent`).
            Factor::Lent(lent, rs, cs) => (unsafe { lent.get() }, *rs, *cs),
            Factor::Owned(c) => (c.as_slice(), m, 1),
        };
        let solve = || symraster::host::cholesky_solve_strided(data, m, rs, cs, &rhs);
        match &whole {
            Some(whole) => {
                // SAFETY: as above.
                let values = unsafe { whole.get() };
                // A non-finite l is the error, whatever the solve made of it.
                match rayon::join(|| all_finite_par(values), solve) {
                    (false, _) => Ok(None),
                    (true, x) => x.map(Some),
                }
            }
            None => solve().map(Some),
        }
    });
    beside.finish(py)?;
    drop(l);
    match finish(py, outcome)?.0 {
        Some(x) => Ok(array_of(py, x)),
        None => Err(PyValueError::new_err("array must not contain infs or NaNs")),
    }
}

/// Whether every value is finite, over the pool's threads in chunks of [`FINITE_CHUNK`].
fn all_finite_par<T: Copy + Into<f64> + Sync>(values: &[T]) -> bool {
    use rayon::prelude::*;
    values.par_chunks(FINITE_CHUNK).all(finite)
}

/// The values one pool thread checks at a time ([`all_finite_par`]); fewer are checked on the
/// calling thread alone.
const FINITE_CHUNK: usize = 1 << 16;

/// A float64 factor for `cho_solve_f64`: lent where it lies, or a row-major copy.
enum Factor {
    /// The values, the row stride and the column stride.
    Lent(worker::Lent, usize, usize),
    Owned(Matrix<f64>),
}

/// A 2-D float64 view lent as it lies, with its row and column strides: `None` for a view
/// with a negative stride or no entries (copied instead).
fn strided(view: ArrayView2<'_, f64>) -> Option<(worker::Lent, usize, usize)> {
    let (rows, cols) = view.dim();
    let (rs, cs) = (view.strides()[0], view.strides()[1]);
    if rows == 0 || cols == 0 || rs < 0 || cs < 0 {
        return None;
    }
    let len = (rows - 1) * rs as usize + (cols - 1) * cs as usize + 1;
    // SAFETY: the view's first element and the extent its non-negative strides cover.
    let data = unsafe { std::slice::from_raw_parts(view.as_ptr(), len) };
    Some((worker::Lent::new(data), rs as usize, cs as usize))
}

/// Factors `a` (as [`cholesky`] reads it) and keeps the factor on the worker (on the GPU for
/// the tiled method): (id, order, method, storage, on_gpu).
#[pyfunction]
fn factor(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    upper: bool,
    method: &str,
    storage: &str,
) -> PyResult<(u64, usize, String, String, bool)> {
    let opts = options(method, storage)?;
    let input = read_lower(py, a, upper)?;
    let outcome = worker::run(py, move |state| {
        let gpu = state.gpu()?;
        let factor = match &input {
            Mat::F32(c) => gpu.cholesky(c, opts)?,
            Mat::F64(c) => gpu.cholesky(c, opts)?,
        };
        let about = (
            factor.order(),
            factor.method().name().to_string(),
            factor.format().to_string(),
            factor.on_gpu(),
        );
        Ok((state.keep(factor), about))
    });
    let ((id, (order, method, format, on_gpu)), _) = finish(py, outcome)?;
    Ok((id, order, method, format, on_gpu))
}

/// Keeps a lower-triangular L computed elsewhere (float32, the upper triangle ignored) as a
/// factor on the host, for `cho_solve`: its id.
#[pyfunction]
fn factor_from_l(py: Python<'_>, l: PyReadonlyArray2<'_, f32>) -> PyResult<u64> {
    let view = l.as_array();
    let l = py
        .detach(|| matrix_of(view, false))
        .map_err(|e| errors::to_py(py, e))?;
    let outcome = worker::run(py, move |state| {
        let factor = symraster::Cholesky::from_l(l)?;
        Ok(state.keep(factor))
    });
    Ok(finish(py, outcome)?.0)
}

/// A kept factor's id, or the error for one that is gone.
fn kept(state: &worker::State, id: u64) -> symraster::Result<&symraster::Cholesky> {
    state.factors.get(&id).ok_or_else(|| {
        symraster::InputError::InvalidOption(format!("the factor {id} has been released")).into()
    })
}

/// X with L·Lᵀ·X = B (B float32, m x k) through the kept factor `id`, in float32.
#[pyfunction]
fn factor_solve<'py>(
    py: Python<'py>,
    id: u64,
    b: PyReadonlyArray2<'py, f32>,
) -> PyResult<(Bound<'py, PyArray2<f32>>, f64)> {
    let view = b.as_array();
    let b = py
        .detach(|| matrix_of(view, false))
        .map_err(|e| errors::to_py(py, e))?;
    let outcome = worker::run(py, move |state| kept(state, id)?.solve_many(&b));
    let (x, seconds) = finish(py, outcome)?;
    Ok((array_of(py, x), seconds))
}

/// The kept factor's L (float32, lower triangular).
#[pyfunction]
fn factor_l(py: Python<'_>, id: u64) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let outcome = worker::run(py, move |state| kept(state, id)?.l());
    Ok(array_of(py, finish(py, outcome)?.0))
}

/// C⁻¹ through the kept factor (float32, symmetric).
#[pyfunction]
fn factor_inverse(py: Python<'_>, id: u64) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let outcome = worker::run(py, move |state| kept(state, id)?.inverse());
    Ok(array_of(py, finish(py, outcome)?.0))
}

/// Releases the kept factor `id` (without waiting).
#[pyfunction]
fn factor_drop(id: u64) {
    worker::post(move |state| {
        state.factors.remove(&id);
    });
}

/// x (float64) and the diagnostics of a solve.
type Solved<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>);

/// C·x = b for SPD C (its lower triangle, or with `upper` its upper one), f64 accurate: the
/// library's `spd_solve` (dsposv). A float32 or float64 `a` with rows or columns contiguous is
/// lent as it lies (a float32 one widened where the library reads it), any other copied
/// once; b is widened to float64. With `check_finite`, a non-finite entry in a's other
/// triangle is scipy's ValueError (checked while the worker solves). Returns x (float64) and
/// the diagnostics.
#[pyfunction]
#[pyo3(signature = (a, b, upper, method, storage, check_finite=false))]
fn spd_solve<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    upper: bool,
    method: &str,
    storage: &str,
    check_finite: bool,
) -> PyResult<Solved<'py>> {
    let solve = SolveOptions {
        gpu: options(method, storage)?,
        ..SolveOptions::default()
    };
    let held = Held::of(a)?;
    let mut beside = Beside::outside(held.view(), upper, check_finite);
    let solved = match lent_spd_solve::<f64>(py, a, b, upper, solve, &mut beside) {
        Some(solved) => solved,
        None => match lent_spd_solve::<f32>(py, a, b, upper, solve, &mut beside) {
            Some(solved) => solved,
            None => read_lower(py, a, upper)
                .and_then(|c| Ok((c, read_vector(py, b)?)))
                .and_then(|(c, b)| {
                    spd_solved(py, b, upper, &mut beside, move |gpu, b| match &c {
                        Mat::F64(c) => copied_spd_solve(gpu, c, b, solve),
                        Mat::F32(c) => copied_spd_solve(gpu, c, b, solve),
                    })
                }),
        },
    };
    beside.finish(py)?;
    solved
}

/// [`spd_solve`] of `a` lent to the worker where it is a `T` array that [`lend`] takes, else
/// `None`.
fn lent_spd_solve<'py, T: numpy::Element + symraster::Element>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    upper: bool,
    solve: SolveOptions,
    beside: &mut Beside<'_>,
) -> Option<PyResult<Solved<'py>>> {
    let array = a.extract::<PyReadonlyArray2<'py, T>>().ok()?;
    let (lent, order, stride, triangle, swapped) = lend(&array, upper)?;
    // C read where it lies: no copy (the array stays borrowed until `run` returns).
    let solved = read_vector(py, b).and_then(|b| {
        spd_solved(py, b, swapped, beside, move |gpu, b| {
            // SAFETY: inside the job of this `run`, while `array` is borrowed (see `Lent`).
            let data = unsafe { lent.get() };
            let c = SymmetricView::new(data, order, stride, triangle)?;
            gpu.spd_solve_view(c, b, solve)
        })
    });
    drop(array);
    Some(solved)
}

/// The library's SPD solve of a C copied into `c` (its lower triangle read).
fn copied_spd_solve<T: symraster::Element>(
    gpu: &symraster::Gpu,
    c: &Matrix<T>,
    b: &[f64],
    solve: SolveOptions,
) -> symraster::Result<Solution> {
    symraster::matrix::check_square("C", c, "(a symmetric matrix)")?;
    gpu.spd_solve_view(SymmetricView::lower(c), b, solve)
}

/// Runs `solve` with b widened to f64 on the worker (`beside` on the calling thread meanwhile)
/// and returns x (float64) and the diagnostics, the errors named as the SPD solve's (`upper`:
/// the library saw aᵀ).
fn spd_solved<'py>(
    py: Python<'py>,
    b: Vector,
    upper: bool,
    beside: &mut Beside<'_>,
    solve: impl FnOnce(&symraster::Gpu, &[f64]) -> symraster::Result<Solution> + Send + 'static,
) -> PyResult<Solved<'py>> {
    let outcome = beside.run(py, move |state| {
        let b = match b {
            Vector::F64(b) => b,
            Vector::F32(b) => widened(&b)?,
        };
        solve(state.gpu()?, &b)
    });
    let (s, seconds) = finish_as(py, outcome, Names::Spd { upper })?;
    let d = solution_dict(py, &s, seconds)?;
    Ok((Array1::from_vec(s.x).into_pyarray(py), d))
}

/// Whether every value of a float32 or float64 array (any shape and strides) is finite, as
/// scipy's `check_finite` asks: one pass over all cores with the GIL released for a large
/// contiguous array (a small one on the calling thread), and no temporary (numpy's
/// `isfinite(a).all()` makes a boolean array).
/// With `outside` ("lower" or "upper", a square 2-D array or a stack (B, n, n) of them) only
/// the entries outside that triangle (of each matrix) are read: the library checks the
/// triangle it reads itself.
#[pyfunction]
#[pyo3(signature = (a, outside=None))]
fn all_finite(py: Python<'_>, a: &Bound<'_, PyAny>, outside: Option<&str>) -> PyResult<bool> {
    use rayon::prelude::*;
    fn check<T: Copy + Into<f64> + Sync>(
        py: Python<'_>,
        view: numpy::ndarray::ArrayViewD<'_, T>,
    ) -> bool {
        match view.as_slice_memory_order() {
            // A few values on this thread: waking the pool's threads would take longer.
            Some(s) if s.len() <= FINITE_CHUNK => finite(s),
            Some(s) => py.detach(|| all_finite_par(s)),
            None => view.iter().all(|&v| v.into().is_finite()),
        }
    }
    // The entries (i, j) with j > i (outside the lower triangle) or j < i, row by row, of a
    // square matrix or of each matrix of a stack (B, n, n), rows over all cores.
    fn check_outside<T: Copy + Into<f64> + Sync>(
        py: Python<'_>,
        view: numpy::ndarray::ArrayViewD<'_, T>,
        lower: bool,
    ) -> PyResult<bool> {
        use numpy::ndarray::{Axis, Ix3, s};
        let view = match view.ndim() {
            2 => view.insert_axis(Axis(0)),
            3 => view,
            _ => {
                return Err(PyValueError::new_err(
                    "`outside` needs a 2-D array or a 3-D stack of matrices",
                ));
            }
        };
        let view = view.into_dimensionality::<Ix3>().expect("three axes");
        let (count, n, cols) = view.dim();
        if n != cols {
            return Err(PyValueError::new_err("`outside` needs square matrices"));
        }
        // Rows where they are contiguous: Fortran-ordered matrices transposed, their triangles
        // swapped.
        let columns = count > 0 && {
            let one = view.index_axis(Axis(0), 0);
            !one.is_standard_layout() && one.t().is_standard_layout()
        };
        let (view, lower) = if columns {
            (view.permuted_axes([0, 2, 1]), !lower)
        } else {
            (view, lower)
        };
        let outside = Part::outside(if lower {
            Triangle::Lower
        } else {
            Triangle::Upper
        });
        if let Some(values) = view.as_slice()
            && n > 0
        {
            // C-ordered: about FINITE_CHUNK values of whole rows per task (many small
            // matrices, or a band of a large one), each row a plain slice.
            let rows_per_task = (FINITE_CHUNK / n).max(1);
            return Ok(py.detach(|| {
                values
                    .par_chunks(rows_per_task * n)
                    .enumerate()
                    .all(|(task, rows)| {
                        rows.chunks(n).enumerate().all(|(r, row)| {
                            let i = (task * rows_per_task + r) % n;
                            finite(&row[outside.columns(i, n)])
                        })
                    })
            }));
        }
        Ok(py.detach(|| {
            (0..count * n).into_par_iter().with_min_len(64).all(|r| {
                let (p, i) = (r / n, r % n);
                let part = view.slice(s![p, i, outside.columns(i, n)]);
                match part.as_slice() {
                    Some(part) => finite(part),
                    None => part.iter().all(|&v| v.into().is_finite()),
                }
            })
        }))
    }
    let lower = match outside {
        None => None,
        Some("lower") => Some(true),
        Some("upper") => Some(false),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "outside must be 'lower' or 'upper', not {other:?}"
            )));
        }
    };
    if let Ok(a) = a.extract::<numpy::PyReadonlyArrayDyn<'_, f64>>() {
        match lower {
            None => Ok(check(py, a.as_array())),
            Some(lower) => check_outside(py, a.as_array(), lower),
        }
    } else if let Ok(a) = a.extract::<numpy::PyReadonlyArrayDyn<'_, f32>>() {
        match lower {
            None => Ok(check(py, a.as_array())),
            Some(lower) => check_outside(py, a.as_array(), lower),
        }
    } else {
        Err(PyTypeError::new_err(
            "expected a float32 or float64 numpy array",
        ))
    }
}

/// ‖a‖₁ (the largest column sum of |a|) of a float32 or float64 2-D array, or with
/// `triangle` ("lower" or "upper") of the symmetric matrix whose triangle `a` holds (read
/// from that triangle alone, where scipy's callers build the full matrix first): one pass
/// over all cores with the GIL released, no temporary arrays. NaN where an entry is NaN.
#[pyfunction]
#[pyo3(signature = (a, triangle=None))]
fn norm_1(py: Python<'_>, a: &Bound<'_, PyAny>, triangle: Option<&str>) -> PyResult<f64> {
    let triangle = match triangle {
        None => None,
        Some("lower") => Some(Triangle::Lower),
        Some("upper") => Some(Triangle::Upper),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "triangle must be 'lower', 'upper' or None, not {other:?}"
            )));
        }
    };
    if let Ok(a) = a.extract::<PyReadonlyArray2<'_, f64>>() {
        let view = a.as_array();
        Ok(py.detach(|| norm_1_of(view, triangle)))
    } else if let Ok(a) = a.extract::<PyReadonlyArray2<'_, f32>>() {
        let view = a.as_array();
        Ok(py.detach(|| norm_1_of(view, triangle)))
    } else {
        Err(PyTypeError::new_err(
            "expected a 2-D float32 or float64 numpy array",
        ))
    }
}

/// [`norm_1`] of a view: each row's magnitudes added to per-thread column sums (an entry
/// off the diagonal of a stored triangle to its row's sum and its column's, the symmetric
/// matrix's two copies of it), the sums then added together.
fn norm_1_of<T: Copy + Into<f64> + Sync>(
    view: ArrayView2<'_, T>,
    triangle: Option<Triangle>,
) -> f64 {
    use rayon::prelude::*;
    let (rows, cols) = view.dim();
    if rows == 0 || cols == 0 {
        return 0.0;
    }
    let sums = (0..rows)
        .into_par_iter()
        .with_min_len(TILE)
        .fold(
            || vec![0.0f64; cols],
            |mut sums, i| {
                let row = view.row(i);
                let stored = triangle.map_or(Part::All, Part::triangle).columns(i, cols);
                let mut own = 0.0;
                for j in stored {
                    let v = row[j].into().abs();
                    if triangle.is_none() {
                        sums[j] += v;
                    } else {
                        own += v;
                        if j != i {
                            sums[j] += v;
                        }
                    }
                }
                if triangle.is_some() && i < cols {
                    sums[i] += own;
                }
                sums
            },
        )
        .reduce(
            || vec![0.0f64; cols],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        );
    largest(&sums)
}

/// The largest of the column sums `sums` of ‖·‖₁, NaN where one is NaN.
fn largest(sums: &[f64]) -> f64 {
    sums.iter().fold(0.0, |top: f64, &s| {
        if top.is_nan() || s.is_nan() {
            f64::NAN
        } else {
            top.max(s)
        }
    })
}

/// Values a finiteness check tests per block: a block without a branch per value (so that it
/// vectorizes), the check stopping at the first block that holds a non-finite value.
const BLOCK: usize = 256;

/// Whether every value of `values` is finite.
fn finite<T: Copy + Into<f64>>(values: &[T]) -> bool {
    values.chunks(BLOCK).all(|block| {
        block
            .iter()
            .fold(true, |ok, &v| ok & (v.into().abs() <= f64::MAX))
    })
}

/// Σ|v| over `values`, in eight interleaved partial sums (so that it vectorizes).
fn sum_abs<T: Copy + Into<f64>>(values: &[T]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let blocks = values.chunks_exact(lanes.len());
    let rest: f64 = blocks.remainder().iter().map(|&v| v.into().abs()).sum();
    for block in blocks {
        for (lane, &v) in lanes.iter_mut().zip(block) {
            *lane += v.into().abs();
        }
    }
    lanes.iter().sum::<f64>() + rest
}

/// A float32 or float64 2-D array borrowed read-only from Python, for views of it.
enum Held<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

impl<'py> Held<'py> {
    fn of(a: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = a.extract::<PyReadonlyArray2<'py, f64>>() {
            Ok(Held::F64(a))
        } else if let Ok(a) = a.extract::<PyReadonlyArray2<'py, f32>>() {
            Ok(Held::F32(a))
        } else {
            Err(PyTypeError::new_err(
                "expected a 2-D float32 or float64 numpy array",
            ))
        }
    }

    fn view(&self) -> Square<'_> {
        match self {
            Held::F64(a) => Square::F64(a.as_array()),
            Held::F32(a) => Square::F32(a.as_array()),
        }
    }
}

/// A view of a float32 or float64 2-D array (a square matrix, where it is used).
#[derive(Clone, Copy)]
enum Square<'a> {
    F64(ArrayView2<'a, f64>),
    F32(ArrayView2<'a, f32>),
}

/// The host's share of a call on the array `a`, worked out on the calling thread while the
/// worker runs the call ([`worker::run_beside`]), once per call: scipy's check_finite for the
/// entries outside the triangle the library reads (the library checks those it reads as it
/// reads them), or for all of `a` where the library checks none, and where asked ‖·‖₁ of the
/// symmetric matrix that triangle holds.
struct Beside<'a> {
    /// `a`, where there is something to work out.
    a: Option<Square<'a>>,
    /// The triangle of `a` the library reads and checks; `None`: it checks none of `a`.
    read: Option<Triangle>,
    check: bool,
    norm: bool,
    /// Whether the entries checked are finite, and ‖·‖₁ (0 where not asked), once worked out.
    done: Option<(bool, f64)>,
}

impl<'a> Beside<'a> {
    /// With `check`, the entries of `a` outside `read` (all of them where `read` is `None`)
    /// checked; with `norm`, ‖·‖₁ of the symmetric matrix `read` holds.
    fn new(a: Option<Square<'a>>, read: Option<Triangle>, check: bool, norm: bool) -> Self {
        Self {
            a: a.filter(|_| check || (norm && read.is_some())),
            read,
            check,
            norm,
            done: None,
        }
    }

    /// With `check`, the entries of the square `a` outside the triangle a factor reads (the
    /// upper one where `upper`) checked.
    fn outside(a: Square<'a>, upper: bool, check: bool) -> Self {
        let read = if upper {
            Triangle::Upper
        } else {
            Triangle::Lower
        };
        Self::new(Some(a), Some(read), check, false)
    }

    /// The pass over `a`, or nothing where it ran already or there is nothing to work out.
    fn pending(&self) -> impl FnOnce() -> Option<(bool, f64)> + Send + use<'a> {
        let a = self.a.filter(|_| self.done.is_none());
        let (read, check, norm) = (self.read, self.check, self.norm);
        move || {
            a.map(|a| match a {
                Square::F64(view) => pass_beside(view, read, check, norm),
                Square::F32(view) => pass_beside(view, read, check, norm),
            })
        }
    }

    /// [`worker::run`] of `f`, the pass beside it where it has not run yet.
    fn run<R, F>(&mut self, py: Python<'_>, f: F) -> worker::Outcome<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut worker::State) -> symraster::Result<R> + Send + 'static,
    {
        let (outcome, done) = worker::run_beside(py, f, self.pending());
        self.done = self.done.or(done);
        outcome
    }

    /// ‖·‖₁ (0 where not asked), or scipy's error where an entry checked is not finite (the
    /// pass run now where no job ran beside it). Called once the call's jobs ran, before their
    /// errors are raised: scipy checks before it computes, so the check's error comes first.
    fn finish(&mut self, py: Python<'_>) -> PyResult<f64> {
        if self.done.is_none() {
            let pass = self.pending();
            self.done = py.detach(pass);
        }
        match self.done {
            Some((false, _)) => Err(PyValueError::new_err("array must not contain infs or NaNs")),
            Some((true, norm)) => Ok(norm),
            None => Ok(0.0),
        }
    }
}

/// [`Beside`]'s pass over `view`, one row after another in memory order on the calling thread
/// alone (the worker's job has the pool's threads): with `check`, whether the entries outside
/// the triangle `read` (all where `None`) are finite (false at the first that is not); with
/// `norm`, ‖·‖₁ of the symmetric matrix `read` holds (each entry off the diagonal counted in
/// its row's sum and its column's).
fn pass_beside<T: Copy + Into<f64>>(
    view: ArrayView2<'_, T>,
    read: Option<Triangle>,
    check: bool,
    norm: bool,
) -> (bool, f64) {
    let norm = norm && read.is_some();
    // Columns contiguous (Fortran order): aᵀ's rows, whose triangles are swapped.
    let (view, read) = if view.strides()[1] != 1 && view.strides()[0] == 1 {
        let swapped = read.map(|t| match t {
            Triangle::Lower => Triangle::Upper,
            Triangle::Upper => Triangle::Lower,
        });
        (view.reversed_axes(), swapped)
    } else {
        (view, read)
    };
    let cols = view.ncols();
    let mut sums = vec![0.0f64; if norm { cols } else { 0 }];
    let mut copy = Vec::new();
    for (i, row) in view.outer_iter().enumerate() {
        let row = match row.to_slice() {
            Some(row) => row,
            None => {
                copy.clear();
                copy.extend(row.iter().copied());
                &copy[..]
            }
        };
        let (stored, unread) = match read {
            Some(t) => (
                &row[Part::triangle(t).columns(i, cols)],
                &row[Part::outside(t).columns(i, cols)],
            ),
            None => (&row[..0], row),
        };
        if check && !finite(unread) {
            return (false, f64::NAN);
        }
        if norm && i < cols {
            let (off, from, diagonal) = match read {
                Some(Triangle::Lower) => (&stored[..i], 0, stored[i]),
                _ => (&stored[1..], i + 1, stored[0]),
            };
            for (sum, &v) in sums[from..from + off.len()].iter_mut().zip(off) {
                *sum += v.into().abs();
            }
            sums[i] += diagonal.into().abs() + sum_abs(off);
        }
    }
    (true, if norm { largest(&sums) } else { 0.0 })
}

/// A square float32 or float64 array lent as C by the triangle scipy's `lower` names, where its rows (or,
/// for a Fortran-ordered array, its columns) are contiguous: the lent values, the order, the
/// row stride, the triangle of those rows read, and whether positions in the library's
/// messages are transposed from the array's. `None`: the array is copied instead.
fn lend<T: numpy::Element>(
    array: &PyReadonlyArray2<'_, T>,
    upper: bool,
) -> Option<(worker::Lent<T>, usize, usize, Triangle, bool)> {
    let view = array.as_array();
    let (rows, cols) = view.dim();
    if rows != cols || rows == 0 {
        return None;
    }
    let (rs, cs) = (view.strides()[0], view.strides()[1]);
    let named = if upper {
        Triangle::Upper
    } else {
        Triangle::Lower
    };
    let other = if upper {
        Triangle::Lower
    } else {
        Triangle::Upper
    };
    // Rows contiguous: a as stored. Columns contiguous: aᵀ's rows, whose other triangle is
    // a's named one.
    let (stride, triangle, swapped) = if cs == 1 && rs >= cols as isize {
        (rs as usize, named, false)
    } else if rs == 1 && cs >= rows as isize {
        (cs as usize, other, true)
    } else {
        return None;
    };
    let len = (rows - 1) * stride + cols;
    // SAFETY: the view's first element and the extent its non-negative strides cover.
    let data = unsafe { std::slice::from_raw_parts(view.as_ptr(), len) };
    Some((worker::Lent::new(data), rows, stride, triangle, swapped))
}

/// min ‖diag(√w)(y − x·β)‖₂ with x observations × unknowns, read where it lies as the
/// library's A = xᵀ (`Gpu::least_squares_view`), f64 accurate. A float64 x is lent to the
/// worker as it is (C or Fortran order, any non-negative strides), a float32 one widened once
/// in its own order; only x with a negative stride is copied transposed. The library's check
/// of x is the one pass over it: with `check_finite` a non-finite x is scipy's error. Returns
/// β (float64) and the diagnostics.
#[pyfunction]
fn least_squares<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    w: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    method: &str,
    storage: &str,
    check_finite: bool,
) -> PyResult<Solved<'py>> {
    let solve = SolveOptions {
        gpu: options(method, storage)?,
        ..SolveOptions::default()
    };
    let lent = x.extract::<PyReadonlyArray2<'py, f64>>().ok();
    let observations = match &lent {
        Some(array) => match strided(array.as_array()) {
            Some((values, rs, cs)) => {
                let (rows, cols) = array.as_array().dim();
                Observations::Lent(values, [rows, cols, rs, cs])
            }
            None => Observations::Copied(read_matrix(py, x, true)?),
        },
        None => match x.extract::<PyReadonlyArray2<'py, f32>>() {
            Ok(array) => match widened_as_it_lies(array.as_array()) {
                Some((values, layout)) => Observations::Widened(
                    py.detach(|| widened(values))
                        .map_err(|e| errors::to_py(py, e))?,
                    layout,
                ),
                None => Observations::Copied(read_matrix(py, x, true)?),
            },
            Err(_) => Observations::Copied(read_matrix(py, x, true)?),
        },
    };
    let (w, y) = (read_vector(py, w)?, read_vector(py, y)?);
    let outcome = worker::run(py, move |state| {
        let gpu = state.gpu()?;
        let x_transposed = |values, [rows, cols, rs, cs]: [usize; 4]| {
            symraster::matrix::MatrixView::new(values, rows, cols, rs, cs).map(|v| v.transpose())
        };
        match (&observations, &w, &y) {
            (Observations::Lent(values, layout), Vector::F64(w), Vector::F64(y)) => {
                // SAFETY: inside the job of this `run`, while `x` is borrowed (see `Lent`).
                let a = x_transposed(unsafe { values.get() }, *layout)?;
                gpu.least_squares_view(a, w, y, solve)
            }
            (Observations::Widened(values, layout), Vector::F32(w), Vector::F32(y)) => {
                let a = x_transposed(values, *layout)?;
                gpu.least_squares_view(a, &widened(w)?, &widened(y)?, solve)
            }
            (Observations::Copied(Mat::F64(a)), Vector::F64(w), Vector::F64(y)) => {
                gpu.least_squares(a, w, y, solve)
            }
            (Observations::Copied(Mat::F32(a)), Vector::F32(w), Vector::F32(y)) => {
                gpu.least_squares(a, w, y, solve)
            }
            _ => Err(symraster::InputError::InvalidOption(
                "x, w and y must share one dtype".into(),
            )
            .into()),
        }
    });
    drop(lent);
    if let worker::Outcome::Done(
        Err(symraster::Error::Input(symraster::InputError::NonFinite { input, .. })),
        _,
    ) = &outcome
        && check_finite
        && input == "A"
    {
        return Err(PyValueError::new_err("array must not contain infs or NaNs"));
    }
    let (s, seconds) = finish_as(py, outcome, Names::Lstsq)?;
    let d = solution_dict(py, &s, seconds)?;
    Ok((Array1::from_vec(s.x).into_pyarray(py), d))
}

/// The observations x of `least_squares` as the worker reads them.
enum Observations {
    /// A float64 x where it lies, and its layout: [rows, columns, row stride, column stride].
    Lent(worker::Lent, [usize; 4]),
    /// A float32 x widened to float64 in its own order, and that layout.
    Widened(Vec<f64>, [usize; 4]),
    /// xᵀ copied row-major (an x with a negative stride, or an empty one).
    Copied(Mat),
}

/// A float32 x's values in memory order and their layout where x is C or Fortran
/// contiguous (so that widening them keeps x's order); `None` otherwise.
fn widened_as_it_lies(view: ArrayView2<'_, f32>) -> Option<(&[f32], [usize; 4])> {
    let (rows, cols) = view.dim();
    let values = view.to_slice_memory_order()?;
    if rows == 0 || cols == 0 {
        return None;
    }
    let layout = if view.is_standard_layout() {
        [rows, cols, cols, 1]
    } else {
        [rows, cols, 1, rows]
    };
    Some((values, layout))
}

/// The lower triangle of A·diag(d)·Aᵀ (float32, upper triangle zero): the paper's assembly.
#[pyfunction]
fn assemble<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    d: &Bound<'py, PyAny>,
    method: &str,
    storage: &str,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let opts = options(method, storage)?;
    let (a, d) = (read_matrix(py, a, false)?, read_vector(py, d)?);
    let outcome = worker::run(py, move |state| {
        let gpu = state.gpu()?;
        match (&a, &d) {
            (Mat::F64(a), Vector::F64(d)) => gpu.assemble(a, d, opts),
            (Mat::F32(a), Vector::F32(d)) => gpu.assemble(a, d, opts),
            _ => Err(
                symraster::InputError::InvalidOption("a and d must share one dtype".into()).into(),
            ),
        }
    });
    Ok(array_of(py, finish(py, outcome)?.0))
}

/// M⁻¹ in float64 (refined): general by `method` ("auto": Gauss-Jordan or LU by order,
/// `InverseMethod::Auto`; "gje"; "lu": LU with partial pivoting) or, with `spd`, SPD through
/// Cholesky reading the lower triangle (with `upper` the upper), a float64 M read where it lies
/// (`Gpu::spd_inverse_double`, no copy). Returns X and the
/// diagnostics; for `spd` they hold `norm_1`, ‖M‖₁ of the symmetric M the triangle read
/// holds (NaN where an entry is NaN), worked out while the worker inverts, and with
/// `check_finite` a non-finite entry in the other triangle is scipy's ValueError.
#[pyfunction]
#[pyo3(signature = (a, spd, upper, method, check_finite=false))]
fn invert<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    spd: bool,
    upper: bool,
    method: &str,
    check_finite: bool,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let method = match method {
        "auto" => InverseMethod::Auto,
        "gje" => InverseMethod::Gje,
        "lu" => InverseMethod::Lu,
        other => {
            return Err(PyValueError::new_err(format!(
                "method must be 'auto', 'gje' or 'lu', not {other:?}"
            )));
        }
    };
    let held = if spd { Some(Held::of(a)?) } else { None };
    let read = if upper {
        Triangle::Upper
    } else {
        Triangle::Lower
    };
    let mut beside = Beside::new(
        held.as_ref().map(Held::view),
        Some(read),
        spd && check_finite,
        spd,
    );
    let inverted = inverted(py, a, spd, upper, method, &mut beside);
    let norm = beside.finish(py)?;
    let (r, seconds) = inverted?;
    inverse_result(py, r, seconds, spd.then_some(norm))
}

/// [`invert`]'s inverse, `beside` on the calling thread while the worker inverts.
fn inverted(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    spd: bool,
    upper: bool,
    method: InverseMethod,
    beside: &mut Beside<'_>,
) -> PyResult<(symraster::Refined, f64)> {
    let mut opts = if spd {
        InvertOptions::spd()
    } else {
        InvertOptions::default()
    };
    if !spd {
        opts.method = method;
    }
    // The SPD inverse's messages name a and positions in it (not in aᵀ's copy for `upper`).
    let names = spd.then_some(Names::Spd { upper });
    if spd
        && let Ok(array) = a.extract::<PyReadonlyArray2<'_, f64>>()
        && let Some((lent, order, stride, triangle, swapped)) = lend(&array, upper)
    {
        // A float64 a read where it lies: the f64 inverse `Gpu::invert` would run on the copy.
        let outcome = beside.run(py, move |state| {
            // SAFETY: inside the job of this `run`, while `array` is borrowed (see `Lent`).
            let data = unsafe { lent.get() };
            let c = SymmetricView::new(data, order, stride, triangle)?;
            state.gpu()?.spd_inverse_double(c, Default::default())
        });
        drop(array);
        match outcome {
            // The GPU cannot take it in f64: the copy and `Gpu::invert`'s f32 inverse, refined.
            worker::Outcome::Done(Err(ref e), _) if beyond_device(e) => {}
            outcome => {
                let ((x, residual), seconds) =
                    finish_as(py, outcome, Names::Spd { upper: swapped })?;
                let refined = symraster::Refined {
                    x,
                    residuals: vec![residual],
                    refined: false,
                    fallback: None,
                };
                return Ok((refined, seconds));
            }
        }
    }
    // The SPD inverse reads the lower triangle alone (of aᵀ with `upper`).
    let a = if spd {
        read_lower(py, a, upper)?
    } else {
        read_matrix(py, a, false)?
    };
    let outcome = beside.run(py, move |state| {
        let gpu = state.gpu()?;
        match &a {
            Mat::F64(a) => gpu.invert(a, opts),
            Mat::F32(a) => gpu.invert(a, opts),
        }
    });
    match names {
        Some(names) => finish_as(py, outcome, names),
        None => finish(py, outcome),
    }
}

/// [`invert`]'s result: X and the diagnostics (with ‖M‖₁ where given).
fn inverse_result<'py>(
    py: Python<'py>,
    r: symraster::Refined,
    seconds: f64,
    norm: Option<f64>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let d = PyDict::new(py);
    d.set_item("residuals", r.residuals)?;
    d.set_item("refined", r.refined)?;
    d.set_item("fallback", r.fallback)?;
    d.set_item("api_seconds", seconds)?;
    if let Some(norm) = norm {
        d.set_item("norm_1", norm)?;
    }
    Ok((array_of(py, r.x), d))
}

/// sign(A) in float64 and the diagnostics.
#[pyfunction]
fn sign<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let a = read_matrix(py, a, false)?;
    let outcome = worker::run(py, move |state| {
        let gpu = state.gpu()?;
        match &a {
            Mat::F64(a) => gpu.sign(a, Default::default()),
            Mat::F32(a) => gpu.sign(a, Default::default()),
        }
    });
    let (s, seconds) = finish(py, outcome)?;
    let d = PyDict::new(py);
    d.set_item("iterations", s.iterations)?;
    d.set_item("residual", s.residual)?;
    d.set_item("commutation", s.commutation)?;
    d.set_item("fallback", s.fallback)?;
    d.set_item("api_seconds", seconds)?;
    Ok((array_of(py, s.s), d))
}

/// X with A·X + X·Aᵀ = Q in float64 and the diagnostics.
#[pyfunction]
fn lyapunov<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    q: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let (a, q) = (read_matrix(py, a, false)?, read_matrix(py, q, false)?);
    let outcome = worker::run(py, move |state| {
        let gpu = state.gpu()?;
        match (&a, &q) {
            (Mat::F64(a), Mat::F64(q)) => gpu.lyapunov(a, q, Default::default()),
            (Mat::F32(a), Mat::F32(q)) => gpu.lyapunov(a, q, Default::default()),
            _ => Err(
                symraster::InputError::InvalidOption("a and q must share one dtype".into()).into(),
            ),
        }
    });
    let (l, seconds) = finish(py, outcome)?;
    let d = PyDict::new(py);
    d.set_item("iterations", l.iterations)?;
    d.set_item("residuals", l.residuals)?;
    d.set_item("api_seconds", seconds)?;
    Ok((array_of(py, l.x), d))
}

/// The seconds this thread's calls spent inside the Rust library (on the worker, timed there)
/// since the last call of this function, which resets them: for measuring the binding's
/// overhead (python/benchmarks/overhead.py).
#[pyfunction]
fn take_api_seconds() -> f64 {
    errors::take_api_seconds()
}

/// A job that panics on the worker, for the test that a Rust panic becomes an exception.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    let outcome = worker::run(py, |_| -> symraster::Result<()> {
        panic!("a deliberate panic (symraster._native._panic_for_tests)")
    });
    finish(py, outcome).map(|_| ())
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(cho_factor, m)?)?;
    m.add_function(wrap_pyfunction!(cho_solve_f64, m)?)?;
    m.add_function(wrap_pyfunction!(all_finite, m)?)?;
    m.add_function(wrap_pyfunction!(norm_1, m)?)?;
    m.add_function(wrap_pyfunction!(factor, m)?)?;
    m.add_function(wrap_pyfunction!(factor_from_l, m)?)?;
    m.add_function(wrap_pyfunction!(factor_solve, m)?)?;
    m.add_function(wrap_pyfunction!(factor_l, m)?)?;
    m.add_function(wrap_pyfunction!(factor_inverse, m)?)?;
    m.add_function(wrap_pyfunction!(factor_drop, m)?)?;
    m.add_function(wrap_pyfunction!(spd_solve, m)?)?;
    m.add_function(wrap_pyfunction!(least_squares, m)?)?;
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(invert, m)?)?;
    m.add_function(wrap_pyfunction!(sign, m)?)?;
    m.add_function(wrap_pyfunction!(lyapunov, m)?)?;
    m.add_function(wrap_pyfunction!(take_api_seconds, m)?)?;
    m.add("BATCH_MAX_ORDER", batched::MAX_ORDER)?;
    m.add_function(wrap_pyfunction!(batched::batched_assemble, m)?)?;
    m.add_function(wrap_pyfunction!(batched::batched_cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(batched::batched_spd_solve, m)?)?;
    m.add_function(wrap_pyfunction!(batched::batched_least_squares, m)?)?;
    m.add_function(wrap_pyfunction!(device::select_device, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(bench::_bench_tiled, m)?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(bench::_log_init, m)?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(bench::_set_polls, m)?)?;
    Ok(())
}
