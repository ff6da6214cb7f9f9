"""symraster: dense symmetric linear algebra on an OpenGL GPU, with scipy.linalg's conventions.

``import symraster as la`` in place of ``import scipy.linalg as la`` works for ``cholesky``,
``cho_factor``, ``cho_solve``, ``solve``, ``inv``, ``signm`` and ``solve_continuous_lyapunov``
on real float32/float64 arrays: same names, signatures, defaults, return types and errors.
``syrk``, ``weighted_lstsq`` and ``Cholesky`` are symraster's own, and so are the batched
functions (``batched_syrk``, ``batched_cholesky``, ``batched_solve``,
``batched_weighted_lstsq``: many small problems at once, numpy's stacked arrays with the batch
axis first, a status per problem). The GPU computes in float32;
each function's docstring says what accuracy its result carries.

The docstrings are written once, in the typed stub ``__init__.pyi`` (which type checkers
read), and attached to the functions and classes here at import (``help()`` shows them).

Threads: one worker thread owns the OpenGL context (a context is current on one thread at a
time); every call from any Python thread runs there in turn, the GIL released while it waits.
"""

import math
import operator
import warnings
import weakref

import numpy as np

from . import _device, _native, _stacks
from ._device import use_device
from ._errors import DeviceError, NotPositiveDefiniteError, NumericalError
from ._stacks import StackedLstsqResult

__version__ = _native.__version__

__all__ = [
    "AccuracyWarning",
    "LinAlgWarning",
    "BATCH_MAX_ORDER",
    "Cholesky",
    "DeviceError",
    "LstsqResult",
    "NotPositiveDefiniteError",
    "NumericalError",
    "StackedLstsqResult",
    "batched_cholesky",
    "batched_solve",
    "batched_syrk",
    "batched_weighted_lstsq",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "info",
    "inv",
    "signm",
    "solve",
    "solve_continuous_lyapunov",
    "syrk",
    "use_device",
    "weighted_lstsq",
]


class AccuracyWarning(RuntimeWarning):
    """A float64 result did not reach float64 accuracy (the float32 factor's refinement did
    not converge: the matrix is too ill-conditioned for it)."""


class _LinAlgWarning(RuntimeWarning):
    """The warning for an ill-conditioned matrix where scipy is not installed: scipy's
    ``LinAlgWarning`` stands in for it where it is."""


_LinAlgWarning.__name__ = _LinAlgWarning.__qualname__ = "LinAlgWarning"


def _linalg_warning():
    """scipy's ``scipy.linalg.LinAlgWarning`` where scipy is installed (imported on first use,
    so that filters and ``pytest.warns`` written for scipy catch ours), else symraster's own
    ``RuntimeWarning`` subclass."""
    try:
        from scipy.linalg import LinAlgWarning
    except ImportError:
        return _LinAlgWarning
    return LinAlgWarning


def __getattr__(name):
    if name == "LinAlgWarning":
        return _linalg_warning()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_condition(condition, dtype, stacklevel=3):
    """scipy's warning where the reciprocal condition number 1/``condition`` (κ₁ or its
    estimate) falls below the machine epsilon of ``dtype``, as scipy's ``solve`` warns."""
    rcond = 1.0 / condition if condition > 0 else np.inf
    eps = _EPS.get(dtype)
    if eps is None:
        eps = np.finfo(dtype).eps
    if not math.isfinite(condition) or rcond < eps:
        warnings.warn(
            f"Ill-conditioned matrix (rcond={rcond:.6g}): result may not be accurate.",
            _linalg_warning(), stacklevel=stacklevel + 1)


def _norm_1(a, triangle=None):
    """‖a‖₁, the largest column sum; with ``triangle`` ("lower" or "upper") of the symmetric
    matrix whose triangle ``a`` holds. Over all cores without temporaries for float32 and
    float64 (``_native.norm_1``)."""
    if a.ndim == 2 and a.dtype in _FLOATS:
        return _native.norm_1(a, triangle)
    if triangle is not None:
        a = _symmetric(a, triangle == "lower")
    return float(np.max(np.sum(np.abs(a), axis=0))) if a.size else 0.0


def _inverse_norm_1(apply_inverse, n, max_steps=5):
    """An estimate of ‖C⁻¹‖₁ for a symmetric C from solves with it (Hager's method, as
    LAPACK's dlacon): a lower bound, within a small factor in practice."""
    x = np.full((n, 1), 1.0 / n)
    estimate = 0.0
    previous_j = -1
    for _ in range(max_steps):
        y = apply_inverse(x)
        estimate = max(estimate, float(np.sum(np.abs(y))))
        z = apply_inverse(np.where(y >= 0, 1.0, -1.0))  # C⁻ᵀ = C⁻¹
        j = int(np.argmax(np.abs(z)))
        if j == previous_j or abs(z[j, 0]) <= (z.T @ x).item():
            break
        x = np.zeros((n, 1))
        x[j, 0] = 1.0
        previous_j = j
    return estimate


# --- input handling (scipy's rules) -------------------------------------------------------

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_EPS = {dtype: float(np.finfo(dtype).eps) for dtype in _FLOATS}


def _lapack_dtype(dtype):
    """The float dtype scipy's LAPACK wrappers compute in: float32 for float16/float32 and the
    small integers and bool, float64 for the rest (as scipy's cholesky and inv convert)."""
    dtype = np.dtype(dtype)
    if dtype in _FLOATS:
        return dtype
    promoted = np.result_type(dtype, np.float32)
    return promoted if promoted in _FLOATS else np.dtype(np.float64)


def _solve_dtype(dtype):
    """scipy's solve: integers and bool become float64, float16 float32."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    return _lapack_dtype(dtype)


def _real(a, name, rule=_lapack_dtype):
    """``a`` as an array of a float dtype by ``rule``; complex and non-numeric refused."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        raise TypeError(
            f"{name} is complex ({a.dtype}); symraster works on real float32 and float64 "
            "arrays (use scipy.linalg for complex matrices)"
        )
    if a.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} has dtype {a.dtype}; symraster works on real float32 and float64 arrays"
        )
    dtype = rule(a.dtype)
    return a if a.dtype == dtype else a.astype(dtype)


def _finite(a, check_finite):
    if not check_finite:
        return
    if a.dtype in _FLOATS:
        finite = _native.all_finite(a)  # all cores, no boolean temporary
    else:
        finite = np.isfinite(a).all()
    if not finite:
        raise ValueError("array must not contain infs or NaNs")


def _matrix(a, name, check_finite, rule=_lapack_dtype):
    """A 2-D float array (as scipy checks it, before its squareness)."""
    a = _real(a, name, rule)
    if a.ndim > 2:
        raise NotImplementedError(
            f"{name} has shape {a.shape}: symraster takes one 2-D matrix at a time (scipy's "
            "batched arrays are not supported; loop over the leading axes, or use the "
            "batched_* functions for stacks of small problems)"
        )
    if a.ndim < 2:
        raise ValueError(f"expected a 2-D array, but {name} has shape {a.shape}")
    _finite(a, check_finite)
    return a


def _square(a, name="a", check_finite=True, rule=_lapack_dtype):
    a = _matrix(a, name, check_finite, rule)
    if a.shape[0] != a.shape[1]:
        raise ValueError(
            f"Input array is expected to be square but has the shape: {a.shape}."
        )
    return a


def _symmetric(a, lower):
    """The symmetric matrix whose `lower` (else upper) triangle ``a`` holds."""
    if lower:
        s = np.tril(a)
        s += np.tril(a, -1).T
    else:
        s = np.triu(a)
        s += np.triu(a, 1).T
    return s


def _options(method, storage):
    if method not in ("auto", "tiled", "blocked", "faithful"):
        raise ValueError(
            f"method must be 'auto', 'tiled', 'blocked' or 'faithful', not {method!r}"
        )
    if storage not in ("full", "packed", "rfp"):
        raise ValueError(f"storage must be 'full' or 'packed', not {storage!r}")
    return method, storage


# --- the device ------------------------------------------------------------------------------


class DeviceInfo(dict):
    """What ``info()`` returns: a dict (vendor, renderer, version, gl_version, methods, ...)
    that prints as ``symraster info`` does."""

    def __str__(self):
        lines = [
            f"GL_VENDOR            {self['vendor']}",
            f"GL_RENDERER          {self['renderer']}",
            f"GL_VERSION           {self['version']}",
            f"GL_MAX_TEXTURE_SIZE  {self['driver_max_texture_size']} (driver)",
            f"texture limit        {self['max_texture_size']}",
            f"EGL device           {self['egl_device_index']} of {self['egl_device_count']}"
            + (" (software)" if self["software"] else ""),
            f"methods              {', '.join(self['methods'])} (auto: {self['auto']})",
        ]
        return "\n".join(lines)


def info():
    """The GPU symraster runs on: a dict that prints as the command line's ``info``."""
    return DeviceInfo(_native.info())


# --- Cholesky --------------------------------------------------------------------------------


def cholesky(a, lower=False, overwrite_a=False, check_finite=True, *, method="auto",
             storage="full", return_info=False):
    if np.ndim(a) > 2 or return_info:  # stacks (..., n, n): _stacks.py
        return _stacks.cholesky(a, lower, check_finite, method, storage, return_info)
    a = _square(a, "a", False)
    method, storage = _options(method, storage)
    if a.shape[0] == 0:
        return np.empty((0, 0), dtype=a.dtype)
    # The triangle the factor reads is checked by the library as it reads it, the other by the
    # binding while the factor runs (one pass over a, not two, and off the critical path).
    with _checked_by_library(check_finite):
        small = _small_float32_factor(a, lower, method, storage, check_finite)
        return small if small is not None else _native.cholesky(
            a, not lower, method, storage, check_finite)


class _checked_by_library:
    """scipy's check_finite for values the library reads and checks itself as it reads them
    (one pass over them, not two): its non-finite error raised as scipy's."""

    def __init__(self, check_finite):
        self.check = check_finite

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if self.check and kind is not None and issubclass(kind, ValueError) \
                and "holds a non-finite value" in str(error):
            raise ValueError("array must not contain infs or NaNs") from error
        return False


def _small_float32_factor(a, lower, method, storage, check_finite):
    """A float32 matrix of an order the batched kernels take, factored by them as a stack of
    one, so that a matrix and the same matrix inside a stack get the same factor bit for bit
    (scipy's batch tests compare them); None where it does not apply or the factor fails
    there (the single path then factors it, or names why it cannot). With ``check_finite``
    the library's upload checks both triangles (it reads one)."""
    if a.dtype != np.float32 or not _stacks._batched(a.shape[0], method, storage):
        return None
    l, info = _native.batched_cholesky(np.ascontiguousarray(a)[None], not lower, check_finite)
    if info[0] != 0:
        return None
    return l[0] if lower else l[0].T


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True, *, method="auto",
               storage="full", return_info=False):
    if np.ndim(a) > 2 or return_info:  # stacks (..., n, n): _stacks.py
        return _stacks.cho_factor(a, lower, overwrite_a, check_finite, method, storage,
                                  return_info)
    given = a
    a = _square(a, "a", False)
    method, storage = _options(method, storage)
    m = a.shape[0]
    if m == 0:
        return np.empty((0, 0), dtype=a.dtype), lower
    # a's triangles checked as cholesky's are.
    with _checked_by_library(check_finite):
        factor = _small_float32_factor(a, lower, method, storage, check_finite)
        overwrite = overwrite_a and a is given and a.flags.writeable
        if factor is None and not overwrite:
            # The factor's triangle and a's other one, written once into the factor's storage.
            return _native.cho_factor(a, not lower, method, storage, check_finite), lower
        if factor is None:
            factor = _native.cholesky(a, not lower, method, storage, check_finite)
    if overwrite:
        c = a
    else:
        c = np.array(a, dtype=a.dtype, order="C", copy=True)
    mask = np.tri(m, dtype=bool)
    np.copyto(c, factor, where=mask if lower else mask.T)
    return c, lower


def _pow2_scale(r):
    """A power of two that brings max |r| into [1, 2) (1 for r = 0): exact, and keeps r
    within float32's range on its way to the GPU."""
    top = float(np.max(np.abs(r))) if r.size else 0.0
    if top == 0.0 or not np.isfinite(top):
        return 1.0
    return float(np.ldexp(1.0, -int(np.floor(np.log2(top)))))


def _solve32(fid, r):
    """X with L·Lᵀ·X = R (R 2-D, any float) through the kept factor ``fid``, in float64 from
    float32: R scaled by a power of two on its way."""
    s = _pow2_scale(r)
    x, _ = _native.factor_solve(fid, np.asarray(r * s, dtype=np.float32))
    return x.astype(np.float64) / s


_FORWARD_STEPS = 2


def _refine(matvec, fid, b, max_iter=30):
    """Mixed-precision iterative refinement (Algorithm 1, dsposv's loop) of C·X = B (B 2-D
    float64): corrections from the float32 factor ``fid``, residuals in float64 through
    ``matvec``; stops at the backward error √m·2⁻⁵³ of the system equilibrated to a unit
    diagonal (S·C·S·(S⁻¹X) = S·B, as LAPACK's expert drivers judge it: every unknown counts
    whatever its units) or when corrections stop shrinking. Returns (X, converged)."""
    m = b.shape[0]
    eps = np.finfo(np.float64).eps
    tolerance = np.sqrt(m) * eps
    s = matvec.equilibration[:, None]
    x = _solve32(fid, b)
    b_norm = np.max(np.abs(b * s), axis=0)
    previous = np.inf
    ratio = 1.0
    forward_steps = 0
    for _ in range(max_iter):
        r = b - matvec(x)
        eta = np.max(
            np.max(np.abs(r * s), axis=0)
            / (matvec.norm_inf * np.max(np.abs(x / s), axis=0) + b_norm + 1e-300)
        )
        converged = eta <= tolerance
        # Past the test, at most two more steps while the corrections' contraction says x
        # would still gain digits above rounding (LAPACK xGERFSX's estimate of the error left,
        # ratio/(1 − ratio)·‖last correction‖; the Rust refinement's rule).
        if converged and (forward_steps == _FORWARD_STEPS or not (
                ratio < 0.5
                and ratio / (1 - ratio) * previous > 2 * eps * np.max(np.abs(x / s)))):
            return x, True
        dx = _solve32(fid, r)
        step = float(np.max(np.abs(dx / s)))
        if not step < 0.5 * previous and previous != np.inf:
            return x, converged
        ratio = step / previous
        previous = step
        forward_steps += converged
        x += dx
    return x, False


class _Product:
    """x ↦ C·x for a dense C in float64, with the powers of two S that bring C's diagonal near
    1 (dpoequ's, exact) and ‖S·C·S‖∞."""

    def __init__(self, c):
        self.c = c
        d = np.diag(c)
        if d.size and np.all(d > 0) and np.all(np.isfinite(d)):
            self.equilibration = np.ldexp(1.0, -np.round(np.log2(d) / 2).astype(int))
        else:
            self.equilibration = np.ones(d.size)
        e = self.equilibration
        magnitudes = np.abs(c)
        # ‖C‖∞, and ‖S·C·S‖∞ = max_i s_i·(|C|·s)_i.
        self.norm = float(np.max(np.sum(magnitudes, axis=1))) if c.size else 0.0
        self.norm_inf = float(np.max(e * (magnitudes @ e))) if c.size else 0.0

    def __call__(self, x):
        return self.c @ x


def _right_side(b, m, name="b", rule=_lapack_dtype, check_finite=True):
    b = _real(b, name, rule)
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise ValueError(f"incompatible dimensions ({(m, m)} and {b.shape})")
    _finite(b, check_finite)
    return b


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True, *, return_info=False):
    if (return_info or np.ndim(c_and_lower[0]) > 2 or np.ndim(b) > 2
            or np.ndim(c_and_lower[1]) > 0):  # stacks: _stacks.py
        return _stacks.cho_solve(c_and_lower, b, overwrite_b, check_finite, return_info)
    (c, lower) = c_and_lower
    try:
        checked = _square(c, "c", False)
        b = _right_side(b, checked.shape[0], check_finite=check_finite)
        error = None
    except (ValueError, TypeError) as e:
        error = e
    if error is not None:
        _square(c, "c", check_finite)  # scipy's order: all of c checked first
        raise error
    c = checked
    m = c.shape[0]
    dtype = np.result_type(c.dtype, b.dtype)
    if m == 0 or b.size == 0:
        _finite(c, check_finite)
        return np.empty(b.shape, dtype=dtype)
    b2 = b.reshape(m, -1)
    if dtype == np.float64:
        # dpotrs: the factor as given, in float64 on the host, which reads only L's lower
        # triangle (c's other triangle may hold anything, as scipy's); all of c checked beside
        # the solve, scipy's error raised in place of its result.
        l = c if lower else c.T
        x = _native.cho_solve_f64(l.astype(np.float64, copy=False),
                                  np.ascontiguousarray(b2, dtype=np.float64), check_finite)
        return x.reshape(b.shape)
    _finite(c, check_finite)
    l = np.tril(c) if lower else np.triu(c).T
    fid = _native.factor_from_l(np.asarray(l, dtype=np.float32))
    try:
        s = _pow2_scale(b2)
        x, _ = _native.factor_solve(fid, np.asarray(b2 * s, np.float32))
        x = x / np.float32(s)
    finally:
        _native.factor_drop(fid)
    return x.astype(dtype, copy=False).reshape(b.shape)


def _no_op():
    pass


class Cholesky:
    """The Cholesky factor of an SPD matrix, kept on the GPU (tiled method) for repeated
    solves. See ``__init__.pyi`` for the full docs."""

    def __init__(self, a, lower=False, *, method="auto", storage="full", check_finite=True):
        a = _square(a, "a", check_finite)
        method, storage = _options(method, storage)
        if a.shape[0] == 0:
            raise ValueError("a is empty (0x0); a Cholesky factor needs at least one row")
        self.dtype = a.dtype
        self.lower = bool(lower)
        # float64: C itself, for the refinement that makes solves float64-accurate.
        self._c = _Product(_symmetric(a, lower)) if a.dtype == np.float64 else None
        self._l64 = None
        try:
            (self._id, self.order, self.method, self.storage, self.on_gpu) = _native.factor(
                a, not lower, method, storage)
        except NotPositiveDefiniteError:
            raise
        except NumericalError:
            if self._c is None:
                raise
            # Positive definite but beyond float32 (too ill-conditioned, or out of its
            # range): the float64 factor on the host alone, as dsposv falls back.
            self._id, self.order, self.method, self.storage, self.on_gpu = (
                None, a.shape[0], "host", "full", False)
            self._double_factor()
            self._finalizer = weakref.finalize(self, _no_op)
            return
        self._finalizer = weakref.finalize(self, _native.factor_drop, self._id)

    def __repr__(self):
        return (f"Cholesky(order={self.order}, dtype={self.dtype}, method={self.method!r}, "
                f"storage={self.storage!r}, on_gpu={self.on_gpu})")

    def _live(self):
        if not self._finalizer.alive:
            raise ValueError("this Cholesky factor has been released (close())")
        return self._id

    def solve(self, b, check_finite=True):
        fid = self._live()
        b = _right_side(b, self.order, check_finite=check_finite)
        dtype = np.result_type(self.dtype, b.dtype)
        if b.size == 0:
            return np.empty(b.shape, dtype=dtype)
        b2 = b.reshape(self.order, -1)
        if self._c is not None:
            x, converged = ((None, False) if fid is None
                            else _refine(self._c, fid, b2.astype(np.float64)))
            if not converged:
                # Too ill-conditioned for the float32 factor: dsposv's fallback, the float64
                # factor (computed once, kept).
                x = _native.cho_solve_f64(self._double_factor(), b2.astype(np.float64))
        else:
            x = _solve32(fid, b2)
        return x.astype(dtype, copy=False).reshape(b.shape)

    def _double_factor(self):
        """L in float64 (dpotrf on the host), computed on first use and kept."""
        if self._l64 is None:
            self._l64 = _native.cholesky(self._c.c, False, "auto", "full")
        return self._l64

    @property
    def factor(self):
        """L (``lower=True``) or U = Lᵀ in the input's dtype: float64 to float64's accuracy
        (dpotrf on the host), float32 the GPU's."""
        if self._c is not None:
            self._live()
            l = self._double_factor()
        else:
            l = _native.factor_l(self._live()).astype(self.dtype, copy=False)
        return l if self.lower else l.T

    def inv(self):
        """C⁻¹ in the input's dtype: float64 as ``inv(a, assume_a="pos")`` (refined to
        float64's accuracy), float32 through the GPU's factor."""
        if self._c is not None:
            self._live()
            x, _ = _native.invert(self._c.c, True, False, "auto")
            return x
        return _native.factor_inverse(self._live()).astype(self.dtype, copy=False)

    def close(self):
        """Releases the factor's GPU memory now (else when the object is collected)."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- solve and inv ---------------------------------------------------------------------------

_GENERAL = {None, "gen", "general"}
_SYMMETRIC = {"sym", "symmetric", "her", "hermitian"}
_POSITIVE = {"pos", "positive definite"}
_ELSEWHERE = {"diagonal", "tridiagonal", "banded", "upper triangular", "lower triangular"}


def _structure(assume_a, function):
    if assume_a in _GENERAL:
        return "gen"
    if assume_a in _SYMMETRIC:
        return "sym"
    if assume_a in _POSITIVE:
        return "pos"
    if assume_a in _ELSEWHERE:
        raise NotImplementedError(
            f"{function}: assume_a={assume_a!r} is not implemented in symraster; "
            "'gen' (general, LU on the GPU refined in float64), 'sym' and 'pos' (the "
            "mixed-precision SPD solve) are"
        )
    raise ValueError(f"{assume_a} is not a recognized matrix structure")


def _general_solve(a64, b64, max_iter=10):
    """X with A·X = B in float64: the GPU's LU inverse with partial pivoting, refined in
    float64, then iterative refinement of X with it. Returns X and κ₁(A) = ‖A‖₁·‖A⁻¹‖₁."""
    inverse, _ = _native.invert(a64, False, False, "lu")
    condition = _norm_1(a64) * _norm_1(inverse)
    x = inverse @ b64
    a_norm = float(np.max(np.sum(np.abs(a64), axis=1)))
    b_norm = np.max(np.abs(b64), axis=0)
    tolerance = np.sqrt(a64.shape[0]) * np.finfo(np.float64).eps
    for _ in range(max_iter):
        r = b64 - a64 @ x
        eta = np.max(np.max(np.abs(r), axis=0)
                     / (a_norm * np.max(np.abs(x), axis=0) + b_norm + 1e-300))
        if eta <= tolerance:
            break
        x += inverse @ r
    return x, condition


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False, *, method="auto", storage="full",
          return_info=False):
    if np.ndim(a) > 2 or np.ndim(b) > 2 or return_info:  # stacks: _stacks.py
        return _stacks.solve(a, b, lower, overwrite_a, overwrite_b, check_finite, assume_a,
                             transposed, method, storage, return_info)
    structure = _structure(assume_a, "solve")
    # One right side of an SPD solve: the triangle of a the library reads is checked there, in
    # its pass for ‖a‖₁, and the other by the binding while the solve runs (one pass over a,
    # not two, and off the critical path).
    one_pass = (check_finite and structure == "pos"
                and (np.ndim(b) == 1 or (np.ndim(b) == 2 and np.shape(b)[1] == 1)))
    a = _square(a, "a", check_finite and not one_pass, _solve_dtype)
    m = a.shape[0]
    try:
        b = _real(b, "b", _solve_dtype)
        if b.ndim not in (1, 2) or b.shape[0] != m:
            b1 = b.reshape(-1, 1) if b.ndim == 1 else b
            raise ValueError(
                f"incompatible shapes: a1.shape={a.shape} and b1.shape={b1.shape}")
        _finite(b, check_finite)
        method, storage = _options(method, storage)
    except (TypeError, ValueError):
        # a is checked before b and the options, as scipy checks it.
        if one_pass and not _native.all_finite(a, "lower" if lower else "upper"):
            raise ValueError("array must not contain infs or NaNs") from None
        raise
    dtype = np.result_type(a.dtype, b.dtype)
    if m == 0 or b.size == 0:
        return np.empty(b.shape, dtype=dtype)
    if structure == "pos":
        with _checked_by_library(one_pass):
            x, condition = _pos_solve(a, b, lower, method, storage, one_pass)
    else:
        a64 = a.astype(np.float64, copy=False)
        if structure == "sym":
            a64 = _symmetric(a64, lower)
        elif transposed:
            a64 = a64.T
        x, condition = _general_solve(a64, b.reshape(m, -1).astype(np.float64))
        x = x.reshape(b.shape)
    _check_condition(condition, dtype)
    return x.astype(dtype, copy=False)


def _pos_solve(a, b, lower, method, storage, check_finite=False):
    """The SPD solve: the library's spd_solve (dsposv) per right side; several right sides
    share one GPU factor and refine together, falling back to spd_solve where that stalls.
    Returns x and an estimate of κ₁(a). With ``check_finite`` (one right side), the binding
    checks the triangle of a the library does not read."""
    m = a.shape[0]
    if b.ndim == 1 or b.shape[1] == 1:
        x, d = _native.spd_solve(a, _same(b.reshape(m), b.dtype), not lower, method, storage,
                                 check_finite)
        return (x if b.ndim == 1 else x.reshape(b.shape)), d["condition"]
    b64 = b.astype(np.float64)
    try:
        factor = Cholesky(a, lower, method=method, storage=storage, check_finite=False)
    except NumericalError:
        factor = None  # maybe SPD in float64 still, or out of float32's range: spd_solve decides
    if factor is not None and factor._id is None:
        # float64 beyond float32: the float64 factor alone; ‖a⁻¹‖₁ through it.
        with factor:
            x = factor.solve(b64)
            l = factor._double_factor()
            inverse_norm = _inverse_norm_1(
                lambda v: _native.cho_solve_f64(l, np.ascontiguousarray(v)), m)
            return x, factor._c.norm * inverse_norm
    if factor is not None:
        with factor:
            c = factor._c if factor._c is not None else _Product(
                _symmetric(a.astype(np.float64), lower))
            x, converged = _refine(c, factor._id, b64)
            if converged:
                # κ₁(a) = ‖a‖₁·‖a⁻¹‖₁, ‖a⁻¹‖₁ estimated through the float32 factor (which the
                # convergence shows is good enough for an estimate).
                fid = factor._id
                return x, c.norm * _inverse_norm_1(lambda v: _solve32(fid, v), m)
    solved = [
        _native.spd_solve(a, _same(b[:, j], b.dtype), not lower, method, storage)
        for j in range(b.shape[1])
    ]
    return (np.stack([x for x, _ in solved], axis=1),
            max(d["condition"] for _, d in solved))


def _same(v, dtype):
    return np.ascontiguousarray(v, dtype=dtype)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False,
        return_info=False):
    if np.ndim(a) > 2 or return_info:  # stacks (..., n, n): _stacks.py
        return _stacks.inv(a, overwrite_a, check_finite, assume_a, lower, return_info)
    structure = _structure(assume_a, "inv")
    # SPD: the triangle of a the library reads is checked there, the other by the binding
    # while the inverse runs (one pass over a, not two, and off the critical path), where
    # ‖a‖₁ of the symmetric a that triangle holds comes from too.
    one_pass = check_finite and structure == "pos"
    a = _square(a, "a", check_finite and not one_pass)
    if a.shape[0] == 0:
        return np.empty((0, 0), dtype=a.dtype)
    if structure == "pos":
        with _checked_by_library(one_pass):
            x, d = _native.invert(a, True, not lower, "auto", one_pass)
        a_norm = d["norm_1"]
    else:
        if structure == "sym":
            a = _symmetric(a, lower)
        x, _ = _native.invert(a, False, False, "auto")
        a_norm = _norm_1(a)
    _check_condition(a_norm * _norm_1(x), a.dtype)  # κ₁(a) = ‖a‖₁·‖a⁻¹‖₁, as scipy warns
    return x.astype(a.dtype, copy=False)


# --- sign and Lyapunov -----------------------------------------------------------------------


def signm(A, disp=True):
    a = _square(A, "A", True)
    if a.shape[0] == 0:
        s, residual = np.empty((0, 0), dtype=a.dtype), 0.0
    else:
        s, diagnostics = _native.sign(a)
        s, residual = s.astype(a.dtype, copy=False), diagnostics["residual"]
    return s if disp else (s, residual)


def solve_continuous_lyapunov(a, q):
    a = _square(a, "a", True)
    q = _square(q, "q", True)
    if a.shape != q.shape:
        raise ValueError(
            f"a and q must have the same shape, but are {a.shape} and {q.shape}")
    dtype = np.result_type(a.dtype, q.dtype)
    if a.shape[0] == 0:
        return np.empty((0, 0), dtype=dtype)
    x, _ = _native.lyapunov(a.astype(dtype, copy=False), q.astype(dtype, copy=False))
    return x.astype(dtype, copy=False)


# --- ours: assembly and weighted least squares -----------------------------------------------


def syrk(a, d=None, lower=True, *, method="auto", storage="full", check_finite=True):
    a = _matrix(a, "a", check_finite)
    m, n = a.shape
    method, storage = _options(method, storage)
    if d is None:
        d = np.ones(n, dtype=a.dtype)
    d = _real(d, "d")
    if d.ndim != 1 or d.shape[0] != n:
        raise ValueError(
            f"shape mismatch: a is {m}x{n}, so d needs {n} entries (one per column of a), "
            f"but has shape {d.shape}")
    _finite(d, check_finite)
    dtype = np.result_type(a.dtype, d.dtype)
    if m == 0 or n == 0:
        return np.zeros((m, m), dtype=dtype)
    c = _native.assemble(a.astype(dtype, copy=False), _same(d, dtype), method, storage)
    c = c.astype(dtype, copy=False)
    return c if lower else c.T


_FALLBACKS = (None, "stagnated", "iteration_limit", "single_factor_failed")
"""The values of ``LstsqResult.fallback`` (see its docstring)."""


class LstsqResult:
    """What ``weighted_lstsq`` returns: ``x`` and the refined solve's diagnostics."""

    __slots__ = ("x", "iterations", "backward_error", "condition", "forward_error_estimate",
                 "converged", "fallback", "fallback_at", "residuals", "tolerance", "api_seconds")

    def __init__(self, x, diagnostics):
        self.x = x
        for key in self.__slots__[1:]:
            setattr(self, key, diagnostics[key])
        if self.fallback not in _FALLBACKS:
            raise RuntimeError(f"internal error: unknown fallback {self.fallback!r}")

    @property
    def fallback_ran(self):
        """Whether the float64 CPU fallback produced x."""
        return self.fallback is not None

    def __repr__(self):
        return (f"LstsqResult(x=<{self.x.shape[0]} values>, iterations={self.iterations}, "
                f"backward_error={self.backward_error:.2e}, condition={self.condition:.2e}, "
                f"converged={self.converged}, fallback={self.fallback!r}, "
                f"fallback_at={self.fallback_at!r})")


def weighted_lstsq(x, y, w=None, *, method="auto", storage="full", check_finite=True,
                   return_info=False):
    if np.ndim(x) > 2 or np.ndim(y) > 1 or np.ndim(w) > 1 or return_info:  # _stacks.py
        return _stacks.weighted_lstsq(x, y, w, method, storage, check_finite, return_info)
    # x's finiteness is checked once, by the library as it reads x (check_finite below).
    x = _matrix(x, "x", False)
    n, m = x.shape
    y = _real(y, "y")
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(
            f"shape mismatch: x is {n}x{m} (observations x unknowns), so y needs {n} "
            f"entries, but has shape {y.shape}")
    if w is None:
        w = np.ones(n, dtype=x.dtype)
    w = _real(w, "w")
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(
            f"shape mismatch: x is {n}x{m}, so w needs {n} weights, but has shape {w.shape}")
    _finite(y, check_finite)
    _finite(w, check_finite)
    if np.any(w < 0):
        raise ValueError("weights w must be non-negative")
    method, storage = _options(method, storage)
    dtype = np.result_type(x.dtype, y.dtype, w.dtype)
    beta, diagnostics = _native.least_squares(
        x.astype(dtype, copy=False), _same(w, dtype), _same(y, dtype), method, storage,
        check_finite)
    return LstsqResult(beta.astype(dtype, copy=False), diagnostics)


# --- ours: batched, many small problems at once (issue 28) ---------------------------------

BATCH_MAX_ORDER = _native.BATCH_MAX_ORDER


def _stack(a, name, ndim, layout, check_finite, rule=_lapack_dtype):
    """``a`` as a float array of ``ndim`` dimensions, the batch axis first (``layout`` names
    the axes in the messages). Empty batches and problems of order 0 pass: each function
    returns numpy's empty shapes for them."""
    a = _real(a, name, rule)
    if a.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array {layout} with the batch axis first, but has "
            f"shape {a.shape}")
    _finite(a, check_finite)
    return a


def _non_negative(d, check_finite):
    """Weights with a negative value refused (a NaN, which makes the minimum NaN, is left to
    the finiteness check; -inf is a non-finite weight first)."""
    if d.size and d.min() < 0:
        _finite(d, check_finite)
        raise ValueError("weights d must be non-negative")


def _no_problems(count, n):
    """Whether a batch has nothing to compute: no problems, or problems of order 0."""
    return count == 0 or n == 0


def _empty_info(count):
    """INFO for problems that all succeed trivially (order 0, or none)."""
    return np.zeros(count, dtype=np.int32)


def _batch_shape(name, v, shape, why):
    if v.shape != shape:
        raise ValueError(f"shape mismatch: {name} must be {shape} ({why}), but is {v.shape}")


def _steps(refinement_steps):
    try:
        steps = operator.index(refinement_steps)
    except TypeError:
        raise TypeError(
            "refinement_steps must be an integer, not "
            f"{type(refinement_steps).__name__}") from None
    if steps < 0:
        raise ValueError(f"refinement_steps must be 0 or more, not {steps}")
    return steps


def _square_stack(c, name, check_finite, rule=_lapack_dtype):
    c = _stack(c, name, 3, "(B, n, n)", check_finite, rule)
    if c.shape[1] != c.shape[2]:
        raise ValueError(
            f"{name} must hold square matrices (B, n, n), but has shape {c.shape}")
    return c


def batched_syrk(a, d=None, *, check_finite=True):
    a = _stack(a, "a", 3, "(B, n, k)", check_finite)
    count, _, k = a.shape
    if d is None:
        d = np.ones((count, k), dtype=a.dtype)
    d = _stack(d, "d", 2, "(B, k)", check_finite)
    _batch_shape("d", d, (count, k), "one weight per column of each matrix of a")
    dtype = np.result_type(a.dtype, d.dtype)
    n = a.shape[1]
    if _no_problems(count, n) or k == 0:  # an empty sum over k: zeros, as syrk's
        return np.zeros((count, n, n), dtype=dtype)
    c = _native.batched_assemble(a.astype(dtype, copy=False), d.astype(dtype, copy=False))
    return c.astype(dtype, copy=False)


def batched_cholesky(c, lower=True, *, check_finite=True):
    # Both triangles are checked by the library's upload as it copies the stack (one pass).
    c = _square_stack(c, "c", False)
    if _no_problems(c.shape[0], c.shape[1]):
        return np.empty(c.shape, dtype=c.dtype), _empty_info(c.shape[0])
    with _checked_by_library(check_finite):
        l, info = _native.batched_cholesky(c, not lower, check_finite)
    return (l if lower else l.transpose(0, 2, 1)), info


def batched_solve(c, b, refinement_steps=1, *, lower=True, check_finite=True):
    steps = _steps(refinement_steps)
    # c (both triangles) and b are checked by the library's upload as it copies them.
    c = _square_stack(c, "c", False, _solve_dtype)
    count, n, _ = c.shape
    b = _stack(b, "b", 2, "(B, n)", False, _solve_dtype)
    _batch_shape("b", b, (count, n), "one right side of length n per matrix of c")
    dtype = np.result_type(c.dtype, b.dtype)
    if _no_problems(count, n):
        return np.empty((count, n), dtype=dtype), _empty_info(count)
    with _checked_by_library(check_finite):
        x, info = _native.batched_spd_solve(
            c.astype(dtype, copy=False), b.astype(dtype, copy=False), not lower, steps,
            check_finite)
    return x, info  # in dtype: the library rounds float32 stacks' x and marks what leaves it


def batched_weighted_lstsq(a, d, b, refinement_steps=1, *, check_finite=True):
    steps = _steps(refinement_steps)
    # a, d and b are checked by the library as it reads them (_checked_by_library).
    a = _stack(a, "a", 3, "(B, k, n) of observations x unknowns", False)
    count, k, n = a.shape
    d = _stack(d, "d", 2, "(B, k)", False)
    _batch_shape("d", d, (count, k), "one weight per observation, a row of a")
    b = _stack(b, "b", 2, "(B, k)", False)
    _batch_shape("b", b, (count, k), "one value per observation, a row of a")
    dtype = np.result_type(a.dtype, d.dtype, b.dtype)
    if _no_problems(count, n):
        _non_negative(d, check_finite)
        _finite(d, check_finite)
        _finite(b, check_finite)
        return np.empty((count, n), dtype=dtype), _empty_info(count)
    if k == 0:
        raise ValueError(
            f"a has shape {a.shape}: no observations (k = 0) cannot determine {n} unknowns; "
            "each problem needs at least as many observations as unknowns")
    # The weights' signs are checked by the binding while the GPU solves, and raised as
    # _non_negative raises them, before any error of the solve.
    with _checked_by_library(check_finite):
        x, info = _native.batched_least_squares(
            a.astype(dtype, copy=False), d.astype(dtype, copy=False),
            b.astype(dtype, copy=False), steps, check_finite)
    return x, info  # in dtype: the library rounds float32 stacks' x and marks what leaves it


# --- docstrings at run time, from the stub -----------------------------------------------------


def _attach_docstrings():
    """Gives the module and each function, class, method and property defined in the typed
    stub ``__init__.pyi`` the stub's docstring, so that ``help()`` and ``__doc__`` show the
    one text type checkers read too. A class's documented attributes (``x: T`` followed by a
    string) are appended to its docstring as an "Attributes" section."""
    import ast
    import inspect
    import pathlib

    try:
        tree = ast.parse(pathlib.Path(__file__).with_name("__init__.pyi").read_text("utf-8"))
    except OSError:  # an install without the stub: the docstrings written here stand
        return
    space = globals()
    space["__doc__"] = ast.get_docstring(tree) or space.get("__doc__")

    def attributes(body):
        lines = []
        for node, after in zip(body, body[1:] + [None]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                text = inspect.cleandoc(after.value.value).replace("\n", "\n    ")
                lines.append(f"{node.target.id}\n    {text}")
        return lines

    for node in tree.body:
        name = getattr(node, "name", None)
        # LinAlgWarning is scipy's where scipy is installed: the stub documents ours
        obj = space.get("_LinAlgWarning" if name == "LinAlgWarning" else name)
        if obj is None or not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        doc = ast.get_docstring(node)
        if isinstance(node, ast.ClassDef):
            extra = attributes(node.body)
            if extra:
                doc = (doc or "") + "\n\nAttributes\n----------\n" + "\n".join(extra)
            for item in node.body:
                member = item.name if isinstance(item, ast.FunctionDef) else None
                text = ast.get_docstring(item) if member else None
                target = obj.__dict__.get(member) if member else None
                if text and target is not None:
                    if isinstance(target, property):
                        setattr(obj, member, property(target.fget, target.fset, target.fdel,
                                                      text))
                    else:
                        target.__doc__ = text
        if doc:
            obj.__doc__ = doc


_attach_docstrings()
_device.from_environment()
