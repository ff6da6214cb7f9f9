"""The exceptions symraster raises beyond ValueError/TypeError/NotImplementedError.

The Rust layer (``src/errors.rs``) builds these from the library's typed errors, so that they
subclass numpy's ``LinAlgError`` as scipy's errors do.
"""

from numpy.linalg import LinAlgError


class NumericalError(LinAlgError):
    """The computation met a matrix it cannot handle (singular, ill-conditioned, overflow).

    ``column`` is the failing column (0-based) where the error names one, else ``None``;
    ``problem`` the failing member's index in a stack (``None`` for a single problem).
    """

    def __init__(self, message, column=None, problem=None):
        super().__init__(message)
        self.column = column
        self.problem = problem

    def __reduce__(self):
        return (type(self), (str(self), self.column, self.problem))


class NotPositiveDefiniteError(NumericalError):
    """A matrix that is not positive definite: ``column`` is the first failing column,
    0-based (LAPACK's INFO − 1), as the Rust library's ``NotPositiveDefinite`` carries it;
    ``problem`` is the failing matrix's index in a stack (``None`` for a single matrix)."""

    def __init__(self, message, column, problem=None):
        super().__init__(message, column, problem)


class DeviceError(RuntimeError):
    """OpenGL, the device or its configuration failed (no usable GPU or EGL, for one)."""
