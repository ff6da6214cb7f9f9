"""Stacks for the scipy-named functions and ``weighted_lstsq``: arrays with leading (batch)
dimensions, broadcast against each other as numpy broadcasts them, with scipy's (≥ 1.15)
shapes and dtypes.

The public functions in ``__init__.py`` hand their arguments here when one of them has batch
dimensions (or ``return_info=True`` is given). Two ways to compute a stack:

- the batched kernels (``_native.batched_*``: one GPU launch for many problems of one order
  n ≤ ``BATCH_MAX_ORDER``, computed in float32), where their result can be made as accurate
  as the single path's: the solves refine each member here in float64 (the residual
  b − C·x from the caller's float64 data, the correction from another batched launch, until
  the normwise backward error reaches √n·ε of the result's dtype);
- one member at a time through the public single-problem function (the same code a 2-D call
  runs), for large orders, the options the batched kernels do not run, and every member the
  batched kernels could not finish: INFO ≠ 0, or refinement that did not converge.

A member that fails raises the single path's exception with the member's index in the stack
(``.problem``, an int for one batch dimension, else a tuple); with ``return_info=True`` it
does not raise: its output is NaN and INFO (an int32 array of the batch shape) says why, as
LAPACK's: 0 solved, k > 0 column k − 1 (0-based) not positive definite or singular, −1 any
other numerical failure (out of range, too ill-conditioned).
"""

import math

import numpy as np
from numpy.linalg import LinAlgError

import symraster as _sr  # the package: its helpers and single-problem functions, at call time

from . import _native
from ._errors import NotPositiveDefiniteError, NumericalError

# Host memory a batched launch's copies of the inputs may take; larger stacks run in chunks.
_CHUNK_BYTES = 1 << 26
# Refinement rounds (batched launches) before a member is handed to the single path.
_ROUNDS = 8
# Refinement steps inside each batched launch (residuals on the GPU, against the data as
# rounded to float32).
_GPU_STEPS = 1
# Members whose equilibrated matrix's float32 Cholesky pivots spread more than this (a lower
# bound of its condition number, κ₂ ≥ (max lᵢᵢ / min lᵢᵢ)²) go to the single path: float32
# refinement converges slowly or not at all there, and a matrix singular to working precision
# can look solved where its right side is consistent (least squares' always is).
_CONDITION_SCREEN = 2.0 ** 20
# inv(assume_a="pos") of a stack solves for the identity's n columns, n batched problems per
# member: up to this order (above it one member at a time is faster on llvmpipe).
_INV_BATCH_MAX = 16


# --- shapes and members ----------------------------------------------------------------------


def _where(p, batch_shape):
    """Member p (flat) of a batch as its index: an int for one batch dimension, else a tuple."""
    if len(batch_shape) == 1:
        return int(p)
    return tuple(int(i) for i in np.unravel_index(p, batch_shape))


def _index(p, batch_shape):
    """Member p (flat) as a tuple to index a broadcast view with."""
    return tuple(int(i) for i in np.unravel_index(p, batch_shape)) if batch_shape else ()


def _take(view, batch_shape, lo, hi):
    """Members lo..hi of a broadcast view (batch_shape + core) as one contiguous copy
    (hi − lo, *core)."""
    if not batch_shape:
        return np.array(view[None])
    return view[np.unravel_index(np.arange(lo, hi), batch_shape)]


def _chunks(count, bytes_each):
    """(lo, hi) ranges of members whose copies take about _CHUNK_BYTES at most."""
    step = max(1, _CHUNK_BYTES // max(1, bytes_each))
    return [(lo, min(count, lo + step)) for lo in range(0, count, step)]


def _at(e, where, kind):
    """The single path's exception ``e`` for member ``where`` of a stack: its class, its column,
    the member's index in its message and in ``.problem``."""
    message = f"{kind} {where} of the stack: {e}"
    column = getattr(e, "column", None)
    if isinstance(e, NotPositiveDefiniteError):
        return NotPositiveDefiniteError(message, column, where)
    if isinstance(e, NumericalError):
        return NumericalError(message, column, where)
    error = LinAlgError(message)
    error.problem = where
    return error


def _info_of(e):
    """INFO for the single path's exception: column + 1 where it names one, else −1."""
    column = getattr(e, "column", None)
    return int(column) + 1 if column is not None else -1


class _Members:
    """The members of a batch that the single path computes, and their INFO."""

    def __init__(self, batch_shape, return_info, kind):
        self.batch_shape = batch_shape
        self.return_info = return_info
        self.kind = kind
        self.info = np.zeros(batch_shape, dtype=np.int32)

    def run(self, p, call):
        """``call()`` for member p (flat): its result, or None where it failed and INFO is
        kept (``return_info``); else the failure raises naming the member."""
        try:
            return call()
        except LinAlgError as e:
            if not self.batch_shape:
                if not self.return_info:
                    raise
            elif not self.return_info:
                raise _at(e, _where(p, self.batch_shape), self.kind) from None
            self.info.flat[p] = _info_of(e)
            return None


def _finish(result, members):
    """``result``, with INFO where ``return_info`` asked for it."""
    return (result, members.info) if members.return_info else result


def _batched(n, method, storage):
    """Whether the batched kernels run problems of order n with these options."""
    return 0 < n <= _native.BATCH_MAX_ORDER and method in ("auto", "tiled") and storage == "full"


def _at_least(a, ndim, name, layout):
    if a.ndim < ndim:
        raise ValueError(
            f"expected an array of at least {ndim} dimensions {layout}, but {name} has shape "
            f"{a.shape}")


def _square_core(a, name):
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"Input array is expected to be square but has the shape: {a.shape}.")


def _symmetric(c, lower):
    """The symmetric matrices (float64) whose lower (else upper) triangles ``c`` holds."""
    c = c.astype(np.float64, copy=False)
    t = np.tril(c) if lower else np.triu(c)
    s = t + t.swapaxes(-1, -2)
    i = np.arange(c.shape[-1])
    s[..., i, i] = c[..., i, i]
    return s


def _tolerance(n, dtype):
    """The normwise backward error refinement stops at: √n·ε of the result's dtype."""
    return math.sqrt(n) * float(np.finfo(dtype).eps)


# --- the refined batched solves -------------------------------------------------------------


def _pow2(top):
    """Powers of two that bring the magnitudes ``top`` into [1, 2) (1 where top is 0 or not
    finite): exact scalings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(top))
    e = np.where(np.isfinite(e), e, 0.0)
    return np.ldexp(1.0, -e.astype(np.int64))


def _spd_launch(s, members, rhs, steps):
    """Batched GPU solves S[members[i]]·x_i = rhs[i] (rhs (len, n)): (x float64, INFO)."""
    n = s.shape[-1]
    x = np.empty(rhs.shape, dtype=np.float64)
    info = np.empty(rhs.shape[0], dtype=np.int32)
    for lo, hi in _chunks(rhs.shape[0], 8 * n * (n + 1)):
        x[lo:hi], info[lo:hi] = _native.batched_spd_solve(
            s[members[lo:hi]], np.ascontiguousarray(rhs[lo:hi]), False, steps)
    return x, info


def _refined(residual, scaled, scale, b, tol, steps=_GPU_STEPS):
    """Mixed-precision iterative refinement of S_p·X_p = B_p for every member p at once
    (B (P, n, k) float64), LAPACK dsposv's loop: corrections from batched GPU solves with the
    symmetric ``scaled`` (P, n, n) = D·S·D (D = diag(``scale``) (P, n), powers of two that
    equilibrate it), residuals B − S·X in float64 through ``residual(members, X)``; each column
    stops when the normwise backward error of the equilibrated system (scaled·Y = D·B,
    X = D·Y), ‖D·R‖∞ / (‖scaled‖∞·‖D⁻¹·X‖∞ + ‖D·B‖∞), is at most ``tol`` (as LAPACK's expert
    drivers judge an equilibrated solve: graded matrices converge in their own terms).
    Returns (X, ok, backward errors (P,), launches (P,)): ok is False for the members the
    condition screen turns away (``_screened``), whose launch failed (INFO ≠ 0), whose
    corrections stopped shrinking or that did not converge in _ROUNDS launches."""
    count, n, k = b.shape
    x = np.zeros_like(b)
    ok = _screened(scaled)
    s_norm = np.max(np.sum(np.abs(scaled), axis=2), axis=1)
    b_norm = np.max(np.abs(b * scale[:, :, None]), axis=1)
    r = b.copy()
    eta = np.full((count, k), np.inf)
    launches = np.zeros(count, dtype=np.int64)
    active = np.repeat(ok[:, None], k, axis=1)
    previous = np.full((count, k), np.inf)
    for _ in range(_ROUNDS):
        p, j = np.nonzero(active)
        if p.size == 0:
            break
        dx, info = _spd_launch(scaled, p, r[p, :, j] * scale[p], steps)
        dx *= scale[p]
        launches[np.unique(p)] += 1
        with np.errstate(invalid="ignore"):
            size = np.max(np.abs(dx), axis=1)
            bad = (info != 0) | ~(size < 0.5 * previous[p, j])
        if bad.any():
            ok[p[bad]] = False
            active[p[bad]] = False
        good = ~bad & active[p, j]
        p, j, dx = p[good], j[good], dx[good]
        x[p, :, j] += dx
        previous[p, j] = size[good]
        live = np.flatnonzero(active.any(axis=1))
        if live.size == 0:
            break
        r[live] = residual(live, x[live])
        d = scale[live][:, :, None]
        eta[live] = np.max(np.abs(r[live] * d), axis=1) / (
            s_norm[live, None] * np.max(np.abs(x[live] / d), axis=1) + b_norm[live] + 1e-300)
        active[live] &= ~(eta[live] <= tol)
    ok &= ~active.any(axis=1)
    return x, ok, np.max(eta, axis=1), launches


def _screened(scaled):
    """Which members of the equilibrated stack ``scaled`` (P, n, n) the batched refinement
    takes: their float32 Cholesky (one batched launch) succeeds with pivots spread less than
    _CONDITION_SCREEN."""
    count, n, _ = scaled.shape
    ok = np.empty(count, dtype=bool)
    i = np.arange(n)
    for lo, hi in _chunks(count, 8 * n * n):
        l, info = _native.batched_cholesky(scaled[lo:hi], False)
        pivots = np.abs(l[:, i, i])
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = (np.max(pivots, axis=1) / np.min(pivots, axis=1)) ** 2
        ok[lo:hi] = (info == 0) & (spread < _CONDITION_SCREEN)
    return ok


def _spd_refined(s, b, tol):
    """X with S_p·X_p = B_p for symmetric S (P, n, n) and B (P, n, k), float64, through
    ``_refined``, S equilibrated by its diagonal (D = diag(c_ii)^(-1/2) rounded to powers of
    two, LAPACK's dpoequ). Returns (X, ok)."""
    i = np.arange(s.shape[-1])
    diagonal = s[:, i, i]
    scale = np.where(diagonal > 0, _pow2(np.sqrt(np.abs(diagonal))), 1.0)
    scaled = s * scale[:, :, None] * scale[:, None, :]
    x, ok, _, _ = _refined(lambda live, xs: b[live] - s[live] @ xs, scaled, scale, b, tol)
    return x, ok


def _lstsq_refined(a, w, y, tol):
    """β_p minimising ‖diag(√w_p)(y_p − a_p·β_p)‖₂ for a (P, k, m), w and y (P, k), float64:
    the normal equations aᵀ·diag(w)·a·β = aᵀ·diag(w)·y, their matrix assembled on the GPU
    (float32, a's columns and w scaled by powers of two first) and refined in float64 by
    ``_refined`` (the residual aᵀ·diag(w)·(y − a·β) from the data in float64). Returns (β, ok,
    backward error, launches); every member of a chunk the assembly refuses is not ok."""
    count, k, m = a.shape
    column = _pow2(np.max(np.abs(a), axis=1))                  # (P, m)
    omega = _pow2(np.max(w, axis=1))                           # (P,)
    try:
        lower = _native.batched_assemble(
            np.ascontiguousarray((a * column[:, None, :]).swapaxes(1, 2)), w * omega[:, None])
    except (NumericalError, ValueError):
        return (np.full((count, m), np.nan), np.zeros(count, dtype=bool),
                np.full(count, np.nan), np.zeros(count, dtype=np.int64))
    lower = lower.astype(np.float64) / omega[:, None, None]   # exact: ω a power of two
    i = np.arange(m)
    diagonal = lower[:, i, i]
    equilibrate = np.where(diagonal > 0, _pow2(np.sqrt(diagonal)), 1.0)
    column = column * equilibrate
    lower = lower * equilibrate[:, :, None] * equilibrate[:, None, :]
    scaled = lower + np.tril(lower, -1).swapaxes(1, 2)        # D·aᵀ·diag(w)·a·D
    g = a.swapaxes(1, 2) @ (w * y)[..., None]                  # aᵀ·diag(w)·y, (P, m, 1)

    def residual(live, beta):
        """aᵀ·diag(w)·(y − a·β) for members ``live``."""
        r = y[live] - (a[live] @ beta)[..., 0]
        return a[live].swapaxes(1, 2) @ (w[live] * r)[..., None]

    beta, ok, eta, launches = _refined(residual, scaled, column, g, tol, steps=0)
    return beta[..., 0], ok, eta, launches


def _lstsq_shared(x, w, y, tol):
    """``_lstsq_refined`` for one x (k, m) shared by every member (a design broadcast over the
    stack, as per-pixel fits have): the normal equations' matrices xᵀ·diag(w_p)·x formed in
    float64 on the host for all members at once, as one product of w (P, k) with x's column
    products (k, m·m), with no copy of x per member; then solved on the GPU and refined in
    float64 by ``_refined`` (the residual xᵀ·diag(w)·(y − x·β) from the data)."""
    count, k = w.shape
    m = x.shape[1]
    pairs = (x[:, :, None] * x[:, None, :]).reshape(k, m * m)
    c = (w @ pairs).reshape(count, m, m)
    g = ((w * y) @ x)[..., None]
    i = np.arange(m)
    diagonal = c[:, i, i]
    equilibrate = np.where(diagonal > 0, _pow2(np.sqrt(np.abs(diagonal))), 1.0)
    scaled = c * equilibrate[:, :, None] * equilibrate[:, None, :]

    def residual(live, beta):
        """xᵀ·diag(w)·(y − x·β) for members ``live``."""
        r = y[live] - beta[..., 0] @ x.T
        return ((w[live] * r) @ x)[..., None]

    beta, ok, eta, launches = _refined(residual, scaled, equilibrate, g, tol, steps=0)
    return beta[..., 0], ok, eta, launches


# --- Cholesky ----------------------------------------------------------------------------------


def _factors(a, lower, check_finite, method, storage, return_info, single):
    """The stack's factors (P, n, n) in a's dtype (the other triangle zero) and the members'
    bookkeeping: float32 stacks on the batched kernels (members that fail there go to the
    single path), float64 ones member by member through ``single`` (the single path's
    float64 treatment: the batched kernels compute in float32 only)."""
    _at_least(a, 2, "a", "(..., n, n)")
    _square_core(a, "a")
    method, storage = _sr._options(method, storage)
    _sr._finite(a, check_finite)
    batch_shape, n = a.shape[:-2], a.shape[-1]
    members = _Members(batch_shape, return_info, "matrix")
    count = math.prod(batch_shape)
    stack = a.reshape((count, n, n))
    factors = np.zeros(stack.shape, dtype=a.dtype)
    if count == 0 or n == 0:
        return factors, members
    if a.dtype == np.float32 and _batched(n, method, storage):
        rest = []
        for lo, hi in _chunks(count, 4 * n * n):
            l, info = _native.batched_cholesky(stack[lo:hi], not lower)
            factors[lo:hi] = l if lower else l.transpose(0, 2, 1)
            rest.extend(lo + np.flatnonzero(info))
    else:
        rest = range(count)
    for p in rest:
        f = members.run(p, lambda: single(stack[p]))
        factors[p] = np.nan if f is None else f
    return factors, members


def cholesky(a, lower, check_finite, method, storage, return_info):
    a = _sr._real(a, "a")
    factors, members = _factors(
        a, lower, check_finite, method, storage, return_info,
        lambda m: _sr.cholesky(m, lower, check_finite=False, method=method, storage=storage))
    return _finish(factors.reshape(a.shape), members)


def cho_factor(a, lower, overwrite_a, check_finite, method, storage, return_info):
    given = a
    a = _sr._real(a, "a")

    def single(m):
        c, _ = _sr.cho_factor(m, lower, check_finite=False, method=method, storage=storage)
        return np.tril(c) if lower else np.triu(c)

    factors, members = _factors(a, lower, check_finite, method, storage, return_info, single)
    factors = factors.reshape(a.shape)
    if overwrite_a and a is given and a.flags.writeable:
        c = a
    else:
        c = np.array(a, dtype=a.dtype, order="C", copy=True)
    if a.size:
        n = a.shape[-1]
        mask = np.tri(n, dtype=bool)
        np.copyto(c, factors, where=mask if lower else mask.T)
        failed = members.info != 0
        if failed.any():
            c[failed] = np.nan
    flags = bool(lower) if not a.shape[:-2] else np.full(a.shape[:-2], bool(lower))
    return _finish((c, flags), members)


# --- solves ---------------------------------------------------------------------------------


def _right_sides(b, n, a_shape, message):
    """b as (..., n, k) (a 1-D b a column, as scipy reads it) and whether it was 1-D."""
    if b.ndim == 0:
        raise ValueError(message(a_shape, b.shape))
    vector = b.ndim == 1
    b1 = b[:, None] if vector else b
    if b1.shape[-2] != n:
        raise ValueError(message(a_shape, b1.shape))
    return b1, vector


def _empty(shape, dtype, members):
    return _finish(np.empty(shape, dtype=dtype), members)


def _solve_stack(a_view, b_view, batch_shape, vector, dtype, members, s_of, single, batched):
    """x (batch, n, k) for a_view (batch, n, n) and b_view (batch, n, k): with ``batched``,
    through the refined batched solve of S = s_of(members lo..hi of a, lo), and the members it
    did not finish (or all, without ``batched``) through ``single(p, a_member, b_member)``."""
    n, k = b_view.shape[-2:]
    count = math.prod(batch_shape)
    x = np.empty((count, n, k), dtype=np.float64)
    if batched:
        rest = []
        for lo, hi in _chunks(count, 8 * n * (3 * n + 3 * k)):
            s = s_of(_take(a_view, batch_shape, lo, hi), lo)
            bc = _take(b_view, batch_shape, lo, hi).astype(np.float64, copy=False)
            x[lo:hi], ok = _spd_refined(s, bc, _tolerance(n, dtype))
            if dtype != np.float64:  # an x the result's dtype cannot hold: the single path's
                with np.errstate(over="ignore"):
                    ok &= np.isfinite(x[lo:hi].astype(dtype)).all(axis=(1, 2))
            rest.extend(lo + np.flatnonzero(~ok))
    else:
        rest = range(count)
    for p in rest:
        i = _index(p, batch_shape)
        bm = b_view[i][:, 0] if vector else b_view[i]
        xm = members.run(p, lambda: single(p, a_view[i], bm))
        x[p] = np.nan if xm is None else np.asarray(xm, dtype=np.float64).reshape(n, k)
    x = x.reshape(batch_shape + (n, k))
    if vector:
        x = x[..., 0]
    with np.errstate(over="ignore", under="ignore"):
        return x.astype(dtype, copy=False)


def solve(a, b, lower, overwrite_a, overwrite_b, check_finite, assume_a, transposed, method,
          storage, return_info):
    structure = _sr._structure(assume_a, "solve")
    a = _sr._real(a, "a", _sr._solve_dtype)
    b = _sr._real(b, "b", _sr._solve_dtype)
    _at_least(a, 2, "a", "(..., n, n)")
    _square_core(a, "a")
    n = a.shape[-1]
    b1, vector = _right_sides(
        b, n, a.shape, lambda s, t: f"incompatible shapes: a1.shape={s} and b1.shape={t}")
    batch_shape = np.broadcast_shapes(a.shape[:-2], b1.shape[:-2])
    _sr._finite(a, check_finite)
    _sr._finite(b, check_finite)
    method, storage = _sr._options(method, storage)
    dtype = np.result_type(a.dtype, b.dtype)
    members = _Members(batch_shape, return_info, "matrix")
    k = b1.shape[-1]
    if math.prod(batch_shape) == 0 or n == 0 or k == 0:
        shape = batch_shape + ((n,) if vector else (n, k))
        return _empty(shape, dtype, members)
    a_view = np.broadcast_to(a, batch_shape + (n, n))
    b_view = np.broadcast_to(b1, batch_shape + (n, k))

    def single(p, am, bm):
        return _sr.solve(am, bm, lower=lower, check_finite=False, assume_a=assume_a,
                         transposed=transposed, method=method, storage=storage)

    x = _solve_stack(a_view, b_view, batch_shape, vector, dtype, members,
                     lambda c, lo: _symmetric(c, lower), single,
                     structure == "pos" and _batched(n, method, storage))
    return _finish(x, members)


def cho_solve(c_and_lower, b, overwrite_b, check_finite, return_info):
    (c, lower) = c_and_lower
    c = _sr._real(c, "c")
    b = _sr._real(b, "b")
    _at_least(c, 2, "c", "(..., n, n)")
    _square_core(c, "c")
    n = c.shape[-1]
    b1, vector = _right_sides(
        b, n, c.shape[-2:], lambda s, t: f"incompatible dimensions ({s} and {t})")
    lower = np.asarray(lower, dtype=bool)
    batch_shape = np.broadcast_shapes(c.shape[:-2], b1.shape[:-2], lower.shape)
    _sr._finite(c, check_finite)
    _sr._finite(b, check_finite)
    dtype = np.result_type(c.dtype, b.dtype)
    members = _Members(batch_shape, return_info, "factor")
    k = b1.shape[-1]
    if math.prod(batch_shape) == 0 or n == 0 or k == 0:
        shape = batch_shape + ((n,) if vector else (n, k))
        return _empty(shape, dtype, members)
    c_view = np.broadcast_to(c, batch_shape + (n, n))
    b_view = np.broadcast_to(b1, batch_shape + (n, k))
    count = math.prod(batch_shape)
    flags = np.broadcast_to(lower, batch_shape).reshape(count)

    def products(cs, lo):
        """C = L·Lᵀ in float64 for members lo.. of the factors (each flag names its
        triangle)."""
        cs = cs.astype(np.float64, copy=False)
        below = flags[lo:lo + cs.shape[0], None, None]
        l = np.where(below, np.tril(cs), np.triu(cs).swapaxes(-1, -2))
        return l @ l.swapaxes(-1, -2)

    def single(p, cm, bm):
        return _sr.cho_solve((cm, bool(flags[p])), bm, check_finite=False)

    # float64: the single path's solve with the factor as given (dpotrs on the host) member
    # by member; float32: the batched solve with C = L·Lᵀ.
    x = _solve_stack(c_view, b_view, batch_shape, vector, dtype, members, products, single,
                     dtype == np.float32 and n <= _native.BATCH_MAX_ORDER)
    return _finish(x, members)


def inv(a, overwrite_a, check_finite, assume_a, lower, return_info):
    structure = _sr._structure(assume_a, "inv")
    a = _sr._real(a, "a")
    _at_least(a, 2, "a", "(..., n, n)")
    _square_core(a, "a")
    _sr._finite(a, check_finite)
    batch_shape, n = a.shape[:-2], a.shape[-1]
    members = _Members(batch_shape, return_info, "matrix")
    if a.size == 0:
        return _empty(a.shape, a.dtype, members)
    eye = np.broadcast_to(np.eye(n), batch_shape + (n, n))

    def single(p, am, _):
        return _sr.inv(am, check_finite=False, assume_a=assume_a, lower=lower)

    x = _solve_stack(a, eye, batch_shape, False, a.dtype, members,
                     lambda c, lo: _symmetric(c, lower), single,
                     structure == "pos" and n <= _INV_BATCH_MAX)
    return _finish(x, members)


# --- weighted least squares ---------------------------------------------------------------------


class StackedLstsqResult:
    """What ``weighted_lstsq`` returns for a stack: ``x`` and per-member diagnostics."""

    __slots__ = ("x", "backward_error", "iterations", "converged", "single")

    def __init__(self, x, backward_error, iterations, converged, single):
        self.x = x
        self.backward_error = backward_error
        self.iterations = iterations
        self.converged = converged
        self.single = single

    def __repr__(self):
        return (f"StackedLstsqResult(x=<{self.x.shape} values>, "
                f"converged={int(np.count_nonzero(self.converged))} of {self.converged.size}, "
                f"single={int(np.count_nonzero(self.single))})")


def weighted_lstsq(x, y, w, method, storage, check_finite, return_info):
    x = _sr._real(x, "x")
    y = _sr._real(y, "y")
    _at_least(x, 2, "x", "(..., observations, unknowns)")
    k, m = x.shape[-2:]
    if y.ndim < 1 or y.shape[-1] != k:
        raise ValueError(
            f"shape mismatch: x is {k}x{m} (observations x unknowns) per problem, so y needs "
            f"{k} entries per problem, but has shape {y.shape}")
    w = np.ones(k, dtype=x.dtype) if w is None else _sr._real(w, "w")
    if w.ndim < 1 or w.shape[-1] != k:
        raise ValueError(
            f"shape mismatch: x is {k}x{m} per problem, so w needs {k} weights per problem, "
            f"but has shape {w.shape}")
    batch_shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-1], w.shape[:-1])
    for v in (x, y, w):
        _sr._finite(v, check_finite)
    if np.any(w < 0):
        raise ValueError("weights w must be non-negative")
    method, storage = _sr._options(method, storage)
    dtype = np.result_type(x.dtype, y.dtype, w.dtype)
    members = _Members(batch_shape, return_info, "problem")
    count = math.prod(batch_shape)
    beta = np.full((count, m), np.nan)
    eta = np.full(count, np.nan)
    iterations = np.zeros(count, dtype=np.int64)
    converged = np.zeros(count, dtype=bool)
    single = np.zeros(count, dtype=bool)
    x_view = np.broadcast_to(x, batch_shape + (k, m))
    y_view = np.broadcast_to(y, batch_shape + (k,))
    w_view = np.broadcast_to(w, batch_shape + (k,))
    if count and m:
        if k == 0:
            raise ValueError(
                f"x has shape {x.shape}: no observations cannot determine {m} unknowns")
        if _batched(m, method, storage):
            rest = []
            shared = x.ndim == 2 and np.all(np.isfinite(x))
            x64 = x.astype(np.float64, copy=False)
            for lo, hi in _chunks(count, 8 * k * (2 * m + 4)):
                yc = _take(y_view, batch_shape, lo, hi).astype(np.float64, copy=False)
                wc = _take(w_view, batch_shape, lo, hi).astype(np.float64, copy=False)
                if shared:
                    b, ok, e, launches = _lstsq_shared(x64, wc, yc, _tolerance(m, dtype))
                else:
                    a = _take(x_view, batch_shape, lo, hi).astype(np.float64, copy=False)
                    b, ok, e, launches = _lstsq_refined(a, wc, yc, _tolerance(m, dtype))
                beta[lo:hi], eta[lo:hi], iterations[lo:hi] = b, e, launches
                converged[lo:hi] = ok
                rest.extend(lo + np.flatnonzero(~ok))
        else:
            rest = range(count)
        for p in rest:
            i = _index(p, batch_shape)
            r = members.run(p, lambda: _sr.weighted_lstsq(
                x_view[i], y_view[i], w_view[i], method=method, storage=storage,
                check_finite=False))
            single[p] = True
            if r is None:
                beta[p], eta[p], iterations[p], converged[p] = np.nan, np.nan, 0, False
            else:
                beta[p], eta[p] = r.x, r.backward_error
                iterations[p], converged[p] = r.iterations, r.converged
    elif count:
        eta[:], converged[:] = 0.0, True
    with np.errstate(over="ignore", under="ignore"):
        beta = beta.reshape(batch_shape + (m,)).astype(dtype, copy=False)
    result = StackedLstsqResult(beta, eta.reshape(batch_shape),
                                iterations.reshape(batch_shape),
                                converged.reshape(batch_shape), single.reshape(batch_shape))
    return _finish(result, members)
