//! The library's typed errors as Python exceptions, as scipy raises them: bad input is
//! `ValueError` (an unsupported option `NotImplementedError`), a matrix that is not positive
//! definite is `symraster.NotPositiveDefiniteError` (a `numpy.linalg.LinAlgError` with
//! `.column`, LAPACK's INFO − 1), other numerical failures `symraster.NumericalError` (a
//! `LinAlgError` too), the device's `symraster.DeviceError` (a `RuntimeError`); no memory for
//! a copy, a result or a GPU buffer is `MemoryError`. The classes are defined in Python
//! (`symraster/_errors.py`) so that they subclass numpy's.

use pyo3::exceptions::{PyMemoryError, PyNotImplementedError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use symraster::{Error, InputError, NumericalError};

use crate::worker::Outcome;

/// An instance of the class `name` of `symraster._errors` built from `args`, as a `PyErr`.
fn python_error<'py, A>(py: Python<'py>, name: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = py
        .import("symraster._errors")
        .and_then(|m| m.getattr(name))
        .and_then(|class| class.call1(args));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    exception(py, e, message)
}

/// The exception of `e`'s class with `message`.
fn exception(py: Python<'_>, e: Error, message: String) -> PyErr {
    match e {
        Error::Input(InputError::Unsupported(_)) => PyNotImplementedError::new_err(message),
        Error::Input(_) => PyValueError::new_err(message),
        Error::Device(_) => python_error(py, "DeviceError", (message,)),
        Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }) => {
            python_error(py, "NotPositiveDefiniteError", (message, column))
        }
        Error::Numerical(
            NumericalError::SingularMatrix { column, .. }
            | NumericalError::ZeroPivot { column, .. },
        ) => python_error(py, "NumericalError", (message, Some(column))),
        Error::Numerical(
            NumericalError::NumericallySingular { column, .. }
            | NumericalError::SingularToDouble { column, .. },
        ) => python_error(py, "NumericalError", (message, Some(column))),
        Error::Numerical(_) => python_error(py, "NumericalError", (message, None::<usize>)),
        Error::OutOfMemory(_) => PyMemoryError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// Whose names a message uses: the library's (A, d, b, C = AD²Aᵀ, the paper's notation) or
/// those of the Python function that called it.
#[derive(Clone, Copy)]
pub enum Names {
    /// `solve(a, b, assume_a="pos")`: the library's C is `a` (read transposed with `upper`).
    Spd {
        /// Whether `a`'s upper triangle was read (the library saw aᵀ).
        upper: bool,
    },
    /// `weighted_lstsq(x, y, w)`: the library's A is xᵀ (unknowns × observations), d is w,
    /// b is y, and C = AD²Aᵀ is the normal matrix xᵀ·diag(w)·x.
    Lstsq,
}

/// "row i, column j …" with i and j swapped (a position in the transpose); any other
/// position as it is.
fn transposed(position: &str) -> String {
    let numbers: Vec<&str> = position
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .collect();
    if position.starts_with("row ") && numbers.len() >= 2 {
        format!("row {}, column {} (0-based)", numbers[1], numbers[0])
    } else {
        position.to_string()
    }
}

/// `e`'s message in the caller's names, where the caller's inputs can produce it and the
/// library's would mislead (None: the library's message stands).
fn renamed(e: &Error, names: Names) -> Option<String> {
    const NORMAL: &str = "the normal matrix xᵀ·diag(w)·x";
    const RANK: &str = "check that x has full column rank (no repeated or dependent columns) \
                        among the rows with a non-zero weight";
    let limit = 1.0 / f64::EPSILON;
    let pivot_limit = 64.0 * f64::EPSILON;
    match (names, e) {
        (Names::Lstsq, Error::Numerical(n)) => match n {
            NumericalError::SingularProduct { m, n, nonzero } => Some(if n < m {
                format!(
                    "{NORMAL} is singular: x is {n}x{m} (observations x unknowns), and {n} \
                     observations cannot determine {m} unknowns; least squares needs at least \
                     as many rows of x as columns"
                )
            } else {
                format!(
                    "{NORMAL} is singular: only {nonzero} of the {n} weights w are non-zero, \
                     fewer than the {m} unknowns (columns of x); give at least {m} observations \
                     (rows of x) a non-zero weight"
                )
            }),
            NumericalError::SingularToDouble {
                condition,
                column,
                ratio,
                ..
            } => Some(format!(
                "{NORMAL} is singular to double precision: condition estimate {condition:.2e} \
                 (limit 1/ε = {limit:.2e}), smallest pivot L(j,j)² = {ratio:.2e}·C(j,j) at \
                 unknown {column} (column {column} of x, 0-based; limit {pivot_limit:.1e}); \
                 {RANK}"
            )),
            NumericalError::NumericallySingular {
                column,
                ratio,
                tolerance,
            } => Some(format!(
                "{NORMAL} is not positive definite to single precision: at unknown {column} \
                 (column {column} of x, 0-based) the pivot L(j,j)² is {ratio:.2e} times its \
                 diagonal entry, at or below the tolerance {tolerance:.2e}; {RANK}"
            )),
            NumericalError::NotPositiveDefinite { column, pivot } => Some(format!(
                "{NORMAL} is not positive definite: the pivot of unknown {column} (column \
                 {column} of x, 0-based) is not positive (value {pivot}); {RANK}"
            )),
            NumericalError::RefinementDiverged {
                iteration,
                residual,
            } => Some(format!(
                "iterative refinement diverged at iteration {iteration}: the residual norm \
                 became {residual}; {NORMAL} is too ill-conditioned for a single-precision factor"
            )),
            NumericalError::OutOfRange {
                row,
                col,
                value,
                why,
                ..
            } => Some(format!(
                "{NORMAL} leaves single precision's range: its entry ({row}, {col}) (0-based, \
                 unknowns {row} and {col}) is {value:.3e}, {why}; scale the columns of x to \
                 similar norms (by powers of two)"
            )),
            _ => None,
        },
        (Names::Lstsq, Error::Input(i)) => {
            let rename = |input: &str| {
                match input {
                    "A" => "x",
                    "d" => "w",
                    "b" => "y",
                    other => other,
                }
                .to_string()
            };
            // The library's A is xᵀ: a position in it is transposed in x.
            let place = |input: &str, position: &str| {
                if input == "A" {
                    transposed(position)
                } else {
                    position.to_string()
                }
            };
            match i {
                InputError::Empty { input, rows, cols } if input == "A" => Some(format!(
                    "x is empty ({cols}x{rows}, observations x unknowns); least squares needs at \
                     least one observation and one unknown"
                )),
                i => located(i, rename, place),
            }
        }
        (Names::Spd { .. }, Error::Numerical(n)) => match n {
            NumericalError::SingularToDouble {
                condition,
                column,
                ratio,
                ..
            } => Some(format!(
                "a is singular to double precision: condition estimate {condition:.2e} (limit \
                 1/ε = {limit:.2e}), smallest pivot L(j,j)² = {ratio:.2e}·a(j,j) in column \
                 {column} (0-based; limit {pivot_limit:.1e}); a is not positive definite to \
                 working precision"
            )),
            NumericalError::NumericallySingular {
                column,
                ratio,
                tolerance,
            } => Some(format!(
                "a is not positive definite to single precision: in column {column} (0-based) \
                 the pivot L(j,j)² is {ratio:.2e} times a(j,j), at or below the tolerance \
                 {tolerance:.2e}"
            )),
            NumericalError::RefinementDiverged {
                iteration,
                residual,
            } => Some(format!(
                "iterative refinement diverged at iteration {iteration}: the residual norm \
                 became {residual}; a is too ill-conditioned for a single-precision factor"
            )),
            _ => None,
        },
        (Names::Spd { upper }, Error::Input(i)) => {
            let rename = |input: &str| {
                if input.starts_with('C') {
                    "a".to_string()
                } else {
                    input.to_string()
                }
            };
            let place = |input: &str, position: &str| {
                if upper && input.starts_with('C') {
                    transposed(position)
                } else {
                    position.to_string()
                }
            };
            located(i, rename, place)
        }
        _ => None,
    }
}

/// An input error that names a place in an input (a value not finite, or beyond float32), in
/// the caller's names: `rename` the input, `place` the position within it.
fn located(
    i: &InputError,
    rename: impl Fn(&str) -> String,
    place: impl Fn(&str, &str) -> String,
) -> Option<String> {
    match i {
        InputError::NonFinite {
            input,
            position,
            value,
        } => Some(format!(
            "input {} holds a non-finite value ({value}) at {}",
            rename(input),
            place(input, position)
        )),
        InputError::OutOfSinglePrecision {
            input,
            position,
            value,
        } => Some(format!(
            "input {} holds {value:e} at {}, beyond single precision's range (±{:e}); the GPU \
             computes in float32",
            rename(input),
            place(input, position),
            f32::MAX
        )),
        _ => None,
    }
}

/// The Python exception for a library error, its message in `names`.
pub fn to_py_as(py: Python<'_>, e: Error, names: Names) -> PyErr {
    let message = renamed(&e, names).unwrap_or_else(|| e.to_string());
    exception(py, e, message)
}

thread_local! {
    /// Seconds the library's calls took on the worker for this calling thread since the last
    /// [`take_api_seconds`]: what the binding's overhead is measured against.
    static API_SECONDS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// The seconds spent inside the library for this thread's calls since the last take, reset.
pub fn take_api_seconds() -> f64 {
    API_SECONDS.with(|s| s.replace(0.0))
}

/// [`finish`] with the library's errors in the caller's names.
pub fn finish_as<R>(py: Python<'_>, outcome: Outcome<R>, names: Names) -> PyResult<(R, f64)> {
    match outcome {
        Outcome::Done(Err(e), _) => Err(to_py_as(py, e, names)),
        other => finish(py, other),
    }
}

/// A job's outcome as a Python result: the library's error mapped by [`to_py`], a panic as
/// `RuntimeError` (never an abort), with the job's own seconds beside the value.
pub fn finish<R>(py: Python<'_>, outcome: Outcome<R>) -> PyResult<(R, f64)> {
    match outcome {
        Outcome::Done(Ok(r), seconds) => {
            API_SECONDS.with(|s| s.set(s.get() + seconds));
            Ok((r, seconds))
        }
        Outcome::Done(Err(e), _) => Err(to_py(py, e)),
        Outcome::Panicked(message) => Err(PyRuntimeError::new_err(format!(
            "internal error in symraster (a Rust panic, caught; please report it): {message}"
        ))),
        Outcome::Gone => Err(PyRuntimeError::new_err(
            "symraster's GPU worker thread is gone",
        )),
        Outcome::Forked => Err(python_error(
            py,
            "DeviceError",
            (
                "this process was forked from one that had opened symraster's GPU, whose OpenGL \
              context cannot be used in the child; start worker processes with \
              multiprocessing's 'spawn' or 'forkserver' method, or fork before the first \
              symraster call",
            ),
        )),
    }
}
