//! The library's typed errors as Python exceptions, as scipy raises them: bad input is
//! `ValueError` (an unsupported option `NotImplementedError`), a matrix that is not positive
//! definite is `symraster.NotPositiveDefiniteError` (a `numpy.linalg.LinAlgError` with
//! `.column`, LAPACK's INFO − 1), other numerical failures `symraster.NumericalError` (a
//! `LinAlgError` too), the device's `symraster.DeviceError` (a `RuntimeError`). The classes
//! are defined in Python (`symraster/_errors.py`) so that they subclass numpy's.

use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyValueError};
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
        Error::Numerical(_) => python_error(py, "NumericalError", (message, None::<usize>)),
        _ => PyRuntimeError::new_err(message),
    }
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
