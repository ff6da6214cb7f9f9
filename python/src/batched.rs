//! The batched operations (`Gpu::batched`, issue 28) for numpy's stacked arrays: (B, n, n)
//! matrices and (B, n) vectors, the batch axis first, each lent to the library in place as a
//! `BatchRef` where its entries fill the memory they span (C order, or any order of the
//! axes), else copied once into a `Batch` with the GIL released; results written once. A
//! problem that fails comes back as its INFO (LAPACK's and cuSOLVER's: 0, k > 0 column k − 1 not positive definite,
//! −1 overflow) beside NaN outputs, never as an exception.

use numpy::ndarray::{Array1, Array2, Array3, ArrayView2, ArrayView3, Axis};
use numpy::{IntoPyArray, PyArray1, PyArray3, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use symraster::{Batch, BatchOptions, BatchRef, BatchSolution, Error, InputError};

use crate::errors::{self, finish};
use crate::{Square, append_row_major, copy_values, worker};
use rayon::prelude::*;

/// The largest order n the batched operations take (one work group per problem).
pub const MAX_ORDER: usize = symraster::batched::MAX_ORDER;

/// A stack from Python: lent where it lies (C-contiguous, or any dense order with
/// non-negative strides) or, where it is not, copied into a `Batch`.
enum Source<T> {
    Lent {
        lent: worker::Lent<T>,
        shape: (usize, usize, usize),
        strides: [usize; 3],
    },
    Copied(Batch<T>),
}

impl<T: Copy> Source<T> {
    /// (B, rows, cols) as the library reads it.
    fn shape(&self) -> (usize, usize, usize) {
        match self {
            Source::Lent { shape, .. } => *shape,
            Source::Copied(batch) => batch.shape(),
        }
    }

    /// The stack as the library takes it.
    ///
    /// # Safety
    /// As [`worker::Lent::get`]: only inside the job of the `run` made while the array is
    /// borrowed (its [`Held`] alive).
    unsafe fn view(&self) -> symraster::Result<BatchRef<'_, T>> {
        match self {
            Source::Lent {
                lent,
                shape: (count, rows, cols),
                strides,
            } => {
                // SAFETY: as the caller promises.
                let data = unsafe { lent.get() };
                BatchRef::from_strides(*count, *rows, *cols, *strides, data)
            }
            Source::Copied(batch) => Ok(batch.view()),
        }
    }
}

/// A batch from Python in the precision it came in.
enum Stack {
    F32(Source<f32>),
    F64(Source<f64>),
}

impl Stack {
    /// (B, rows, cols) as the library reads it.
    fn shape(&self) -> (usize, usize, usize) {
        match self {
            Stack::F32(s) => s.shape(),
            Stack::F64(s) => s.shape(),
        }
    }
}

/// Anything kept alive for the length of a call.
trait Kept {}
impl<T> Kept for T {}

/// Numpy's read-only borrow of a lent array, held until the call that reads it has returned.
struct Held<'py>(#[allow(dead_code)] Option<Box<dyn Kept + 'py>>);

/// `view`'s values lent in place where its strides are non-negative and its entries fill
/// the memory they span (C order, or any order of the axes): the lent slice, the shape and
/// the strides in elements (each problem's transpose with `transpose`).
fn lend<T>(view: &ArrayView3<'_, T>, transpose: bool) -> Option<Source<T>> {
    let (count, rows, cols) = view.dim();
    let len = count * rows * cols;
    let strides = view.strides();
    if len == 0 || strides.iter().any(|&s| s < 0) {
        return None;
    }
    let mut s = [
        strides[0] as usize,
        strides[1] as usize,
        strides[2] as usize,
    ];
    let extent = (count - 1) * s[0] + (rows - 1) * s[1] + (cols - 1) * s[2] + 1;
    if extent != len {
        return None;
    }
    // SAFETY: the view's first element and the extent its non-negative strides cover.
    let data = unsafe { std::slice::from_raw_parts(view.as_ptr(), len) };
    let (rows, cols) = if transpose {
        s.swap(1, 2);
        (cols, rows)
    } else {
        (rows, cols)
    };
    Some(Source::Lent {
        lent: worker::Lent::new(data),
        shape: (count, rows, cols),
        strides: s,
    })
}

/// A 3-D array (B, rows, cols) lent in place ([`lend`]) or else copied ([`batch_of`]).
fn source_of<'py, T: numpy::Element + Copy + Send + Sync + 'static>(
    py: Python<'py>,
    array: PyReadonlyArray3<'py, T>,
    transpose: bool,
) -> PyResult<(Source<T>, Held<'py>)> {
    let lent = lend(&array.as_array(), transpose);
    if let Some(lent) = lent {
        return Ok((lent, Held(Some(Box::new(array)))));
    }
    let view = array.as_array();
    let batch = py
        .detach(|| batch_of(view, transpose))
        .map_err(|e| errors::to_py(py, e))?;
    Ok((Source::Copied(batch), Held(None)))
}

/// A 2-D array (B, len) as B vectors, lent in place or else copied.
fn vectors_source<'py, T: numpy::Element + Copy + Send + Sync + 'static>(
    py: Python<'py>,
    array: PyReadonlyArray2<'py, T>,
) -> PyResult<(Source<T>, Held<'py>)> {
    let lent = lend(&array.as_array().insert_axis(Axis(2)), false);
    if let Some(lent) = lent {
        return Ok((lent, Held(Some(Box::new(array)))));
    }
    let view = array.as_array();
    let batch = py
        .detach(|| vectors_of(view))
        .map_err(|e| errors::to_py(py, e))?;
    Ok((Source::Copied(batch), Held(None)))
}

/// Copies a 3-D view (B, rows, cols) into a `Batch` (of each problem's transpose with
/// `transpose`) over all cores: a copy of contiguous memory where the whole view is
/// C-contiguous, else problem by problem, each written straight into its place.
fn batch_of<T: Copy + Send + Sync>(
    view: ArrayView3<'_, T>,
    transpose: bool,
) -> symraster::Result<Batch<T>> {
    let (count, rows, cols) = view.dim();
    let (rows, cols) = if transpose {
        (cols, rows)
    } else {
        (rows, cols)
    };
    let size = rows * cols;
    let len = count.saturating_mul(size);
    let mut data = symraster::memory::with_capacity(len, || {
        format!("a copy of the {count}x{rows}x{cols} stack")
    })?;
    let spare = &mut data.spare_capacity_mut()[..len];
    match view.as_slice() {
        Some(s) if !transpose => copy_values(spare, s),
        _ if size > 0 => spare
            .par_chunks_mut(size)
            .with_min_len(256)
            .enumerate()
            .for_each(|(p, out)| {
                let one = view.index_axis(Axis(0), p);
                let one = if transpose { one.reversed_axes() } else { one };
                for (i, row) in out.chunks_mut(cols).enumerate() {
                    for (j, o) in row.iter_mut().enumerate() {
                        // SAFETY: i < rows and j < cols, the problem's shape.
                        o.write(unsafe { *one.uget((i, j)) });
                    }
                }
            }),
        _ => {}
    }
    // SAFETY: every problem's rows x cols values were written above.
    unsafe { data.set_len(len) };
    Batch::new(count, rows, cols, data)
}

/// Copies a 2-D view (B, len) into a `Batch` of vectors.
fn vectors_of<T: Copy + Send + Sync>(view: ArrayView2<'_, T>) -> symraster::Result<Batch<T>> {
    let (count, len) = view.dim();
    let mut data = symraster::memory::with_capacity(count * len, || {
        format!("a copy of the {count}x{len} stack of vectors")
    })?;
    append_row_major(&mut data, view, false);
    Batch::vectors(count, len, data)
}

/// Reads a float32 or float64 3-D array (the Python layer has cast every other dtype).
fn read_stack<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    transpose: bool,
) -> PyResult<(Stack, Held<'py>)> {
    if let Ok(a) = a.extract::<PyReadonlyArray3<'py, f64>>() {
        let (s, held) = source_of(py, a, transpose)?;
        Ok((Stack::F64(s), held))
    } else if let Ok(a) = a.extract::<PyReadonlyArray3<'py, f32>>() {
        let (s, held) = source_of(py, a, transpose)?;
        Ok((Stack::F32(s), held))
    } else {
        Err(PyTypeError::new_err(
            "expected a 3-D float32 or float64 numpy array (B, rows, cols)",
        ))
    }
}

/// Reads a float32 or float64 2-D array (B, len) as B vectors.
fn read_vectors<'py>(py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<(Stack, Held<'py>)> {
    if let Ok(v) = v.extract::<PyReadonlyArray2<'py, f64>>() {
        let (s, held) = vectors_source(py, v)?;
        Ok((Stack::F64(s), held))
    } else if let Ok(v) = v.extract::<PyReadonlyArray2<'py, f32>>() {
        let (s, held) = vectors_source(py, v)?;
        Ok((Stack::F32(s), held))
    } else {
        Err(PyTypeError::new_err(
            "expected a 2-D float32 or float64 numpy array (B, len)",
        ))
    }
}

/// A `Batch` of matrices as a (B, rows, cols) numpy array, without a copy.
fn array3_of<T: numpy::Element + Copy>(py: Python<'_>, b: Batch<T>) -> Bound<'_, PyArray3<T>> {
    let shape = b.shape();
    Array3::from_shape_vec(shape, b.into_vec())
        .expect("a Batch's data fills its shape")
        .into_pyarray(py)
}

/// The options of a batched solve with `refinement_steps` steps.
fn solve_options(refinement_steps: usize) -> BatchOptions {
    BatchOptions::default().refinement_steps(refinement_steps)
}

/// The dtype mismatch the Python layer rules out, should it reach here.
fn mixed(names: &str) -> Error {
    InputError::InvalidOption(format!("{names} must share one dtype")).into()
}

/// A job's outcome as [`finish`] gives it, except that the batched kernels' limits (the
/// order past [`MAX_ORDER`], a problem too long for one launch) are `ValueError`: they are
/// limits of the input's shape, not options that other code implements.
fn finish_batched<R>(py: Python<'_>, outcome: worker::Outcome<R>) -> PyResult<R> {
    match outcome {
        worker::Outcome::Done(Err(Error::Input(InputError::Unsupported(message))), _) => {
            Err(PyValueError::new_err(format!("not supported: {message}")))
        }
        outcome => Ok(finish(py, outcome)?.0),
    }
}

/// The info vector as an int32 array.
fn info_array(py: Python<'_>, info: Vec<i32>) -> Bound<'_, PyArray1<i32>> {
    Array1::from_vec(info).into_pyarray(py)
}

/// A batched solve's result for Python: x (B, n) float64 (float32 for float32 inputs) and
/// INFO int32 (B,).
type Solved<'py> = (Bound<'py, PyAny>, Bound<'py, PyArray1<i32>>);

/// A batched solve's x in the inputs' precision: f64, or f32 as the library rounds it on its
/// way back (a solved problem whose x leaves float32's normal range has INFO −1 and NaN).
enum Solution {
    Double(BatchSolution),
    Single(BatchSolution<f32>),
}

/// A [`Solution`] as [`Solved`], without a copy.
fn solved(py: Python<'_>, s: Solution) -> Solved<'_> {
    fn array<T: numpy::Element + Copy>(py: Python<'_>, x: Batch<T>) -> Bound<'_, PyAny> {
        let (count, n, _) = x.shape();
        Array2::from_shape_vec((count, n), x.into_vec())
            .expect("a Batch fills its shape")
            .into_pyarray(py)
            .into_any()
    }
    match s {
        Solution::Double(s) => (array(py, s.x), info_array(py, s.info)),
        Solution::Single(s) => (array(py, s.x), info_array(py, s.info)),
    }
}

/// The lower triangles of Aₚ·diag(dₚ)·Aₚᵀ for A (B, n, k) and d (B, k): float32 (B, n, n),
/// zeros above the diagonal.
#[pyfunction]
pub fn batched_assemble<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    d: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray3<f32>>> {
    let ((a, _a), (d, _d)) = (read_stack(py, a, false)?, read_vectors(py, d)?);
    let outcome = worker::run(py, move |state| {
        let batched = state.gpu()?.batched();
        let options = BatchOptions::default();
        // SAFETY (each view): inside this `run`'s job, the arrays held (`_a`, `_d`).
        match (&a, &d) {
            (Stack::F64(a), Stack::F64(d)) => {
                let (a, d) = unsafe { (a.view()?, d.view()?) };
                batched.assemble(&a, &d, options)
            }
            (Stack::F32(a), Stack::F32(d)) => {
                let (a, d) = unsafe { (a.view()?, d.view()?) };
                batched.assemble(&a, &d, options)
            }
            _ => Err(mixed("a and d")),
        }
    });
    Ok(array3_of(py, finish_batched(py, outcome)?))
}

/// Cₚ = Lₚ·Lₚᵀ for C (B, n, n; each lower triangle read, with `upper` each upper one), in
/// float32: (L (B, n, n) lower triangular in C's dtype, INFO int32 (B,)). With `check_finite`
/// the other triangles are checked finite too, by the library's upload.
#[pyfunction]
#[pyo3(signature = (c, upper, check_finite = false))]
pub fn batched_cholesky<'py>(
    py: Python<'py>,
    c: &Bound<'py, PyAny>,
    upper: bool,
    check_finite: bool,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyArray1<i32>>)> {
    let (c, _c) = read_stack(py, c, upper)?;
    let double = matches!(c, Stack::F64(_));
    let (count, rows, cols) = c.shape();
    let len = count * rows * cols;
    // L's room allocated here, on the caller's thread, and filled by the GPU's thread: memory
    // the worker allocated afresh on each call would be faulted in on each call (glibc's
    // per-thread arenas return it).
    let room =
        symraster::memory::with_capacity::<f32>(len, || format!("L ({count}x{rows}x{cols})"))
            .map_err(|e| errors::to_py(py, e.into()))?;
    let options = BatchOptions::default().check_upper(check_finite);
    let outcome = worker::run(py, move |state| {
        let mut room = room;
        let batched = state.gpu()?.batched();
        let l = &mut room.spare_capacity_mut()[..len];
        // SAFETY (each view): inside this `run`'s job, the array held (`_c`).
        let info = match &c {
            Stack::F64(c) => batched.cholesky_into(&unsafe { c.view()? }, l, options),
            Stack::F32(c) => batched.cholesky_into(&unsafe { c.view()? }, l, options),
        }?;
        // SAFETY: `cholesky_into` wrote all `len` values.
        unsafe { room.set_len(len) };
        Ok((Batch::new(count, rows, cols, room)?, info))
    });
    let (factor, info) = finish_batched(py, outcome)?;
    let l = if double {
        let l = py
            .detach(|| -> symraster::Result<Batch<f64>> {
                let single = factor.into_vec();
                let mut data = symraster::memory::zeros::<f64>(single.len(), || {
                    format!("L ({count}x{rows}x{cols}) widened to float64")
                })?;
                data.par_chunks_mut(1 << 14)
                    .zip(single.par_chunks(1 << 14))
                    .for_each(|(out, l)| {
                        out.iter_mut().zip(l).for_each(|(o, &v)| *o = f64::from(v));
                    });
                Batch::new(count, rows, cols, data)
            })
            .map_err(|e| errors::to_py(py, e))?;
        array3_of(py, l).into_any()
    } else {
        array3_of(py, factor).into_any()
    };
    Ok((l, info_array(py, info)))
}

/// Cₚ·xₚ = bₚ for SPD C (B, n, n; lower triangles read, with `upper` the upper ones) and b
/// (B, n): (x (B, n) float64, float32 for float32 inputs, INFO int32 (B,)). With
/// `check_finite` C's other triangles are checked finite too, by the library's upload.
#[pyfunction]
#[pyo3(signature = (c, b, upper, refinement_steps, check_finite = false))]
pub fn batched_spd_solve<'py>(
    py: Python<'py>,
    c: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    upper: bool,
    refinement_steps: usize,
    check_finite: bool,
) -> PyResult<Solved<'py>> {
    let ((c, _c), (b, _b)) = (read_stack(py, c, upper)?, read_vectors(py, b)?);
    let options = solve_options(refinement_steps).check_upper(check_finite);
    let outcome = worker::run(py, move |state| {
        let batched = state.gpu()?.batched();
        // SAFETY (each view): inside this `run`'s job, the arrays held (`_c`, `_b`).
        match (&c, &b) {
            (Stack::F64(c), Stack::F64(b)) => {
                let (c, b) = unsafe { (c.view()?, b.view()?) };
                batched.spd_solve(&c, &b, options).map(Solution::Double)
            }
            (Stack::F32(c), Stack::F32(b)) => {
                let (c, b) = unsafe { (c.view()?, b.view()?) };
                batched.spd_solve_as(&c, &b, options).map(Solution::Single)
            }
            _ => Err(mixed("c and b")),
        }
    });
    Ok(solved(py, finish_batched(py, outcome)?))
}

/// What the weights hold, for the error the Python layer's order of checks gives.
#[derive(Clone, Copy, Default)]
struct Weights {
    nan: bool,
    infinite: bool,
    negative: bool,
}

impl Weights {
    /// One pass over `w` (on the calling thread, beside the worker's job).
    fn of(w: Square<'_>) -> Self {
        fn scan<T: Copy + Into<f64>>(w: ArrayView2<'_, T>) -> Weights {
            let mut seen = Weights::default();
            let mut note = |v: f64| {
                seen.nan |= v.is_nan();
                seen.infinite |= v.is_infinite();
                seen.negative |= v < 0.0;
            };
            match w.as_slice_memory_order() {
                Some(values) => values.iter().for_each(|&v| note(v.into())),
                None => w.iter().for_each(|&v| note(v.into())),
            }
            seen
        }
        match w {
            Square::F64(w) => scan(w),
            Square::F32(w) => scan(w),
        }
    }

    /// The Python layer's error for weights with a negative value and no NaN (`min(w) < 0`,
    /// where a NaN makes the minimum NaN): scipy's non-finite error first for an infinite one
    /// where `check_finite`, else the weights' own.
    fn error(self, check_finite: bool) -> Option<PyErr> {
        if self.nan || !self.negative {
            None
        } else if check_finite && self.infinite {
            Some(PyValueError::new_err("array must not contain infs or NaNs"))
        } else {
            Some(PyValueError::new_err("weights d must be non-negative"))
        }
    }
}

/// min ‖diag(√wₚ)(yₚ − xₚ·βₚ)‖₂ for x (B, k, n) observations × unknowns per problem (read in
/// place as the library's A = xₚᵀ), w and y (B, k): (β (B, n) float64, float32 for float32
/// inputs, INFO int32 (B,)). The weights are checked non-negative on the calling thread while
/// the worker solves (a negative one raises, the solution discarded, before any error of the
/// solve: the Python layer's order).
#[pyfunction]
#[pyo3(signature = (x, w, y, refinement_steps, check_finite = true))]
pub fn batched_least_squares<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    w: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    refinement_steps: usize,
    check_finite: bool,
) -> PyResult<Solved<'py>> {
    let weights = crate::Held::of(w).ok();
    let (a, _a) = read_stack(py, x, true)?;
    let ((w, _w), (y, _y)) = (read_vectors(py, w)?, read_vectors(py, y)?);
    let options = solve_options(refinement_steps);
    let (outcome, seen) = worker::run_beside(
        py,
        move |state| {
            let batched = state.gpu()?.batched();
            // SAFETY (each view): inside this `run`'s job, the arrays held (`_a`, `_w`, `_y`).
            match (&a, &w, &y) {
                (Stack::F64(a), Stack::F64(w), Stack::F64(y)) => {
                    let (a, w, y) = unsafe { (a.view()?, w.view()?, y.view()?) };
                    batched
                        .least_squares(&a, &w, &y, options)
                        .map(Solution::Double)
                }
                (Stack::F32(a), Stack::F32(w), Stack::F32(y)) => {
                    let (a, w, y) = unsafe { (a.view()?, w.view()?, y.view()?) };
                    batched
                        .least_squares_as(&a, &w, &y, options)
                        .map(Solution::Single)
                }
                _ => Err(mixed("x, w and y")),
            }
        },
        {
            let view = weights.as_ref().map(crate::Held::view);
            move || view.map(Weights::of)
        },
    );
    if let Some(error) = seen.and_then(|w| w.error(check_finite)) {
        return Err(error);
    }
    Ok(solved(py, finish_batched(py, outcome)?))
}
