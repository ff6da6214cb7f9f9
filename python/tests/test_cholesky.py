"""cholesky, cho_factor, cho_solve and the Cholesky object against scipy."""

import numpy as np
import pytest
import scipy.linalg as sla

import symraster as la
from conftest import DTYPES, SIZES, rel, spd, tol, tol32


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_matches_scipy(rng, m, dtype, lower):
    a = spd(rng, m, dtype)
    ours, theirs = la.cholesky(a, lower=lower), sla.cholesky(a, lower=lower)
    assert ours.dtype == theirs.dtype == dtype
    assert ours.shape == (m, m)
    assert rel(ours, theirs) < tol32(m)
    other = np.triu(ours, 1) if lower else np.tril(ours, -1)
    assert not other.any(), "the other triangle is zero"


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("m", [20, 330])  # the host's float64 factor, and the GPU's
def test_cholesky_reads_only_its_triangle(rng, lower, m):
    a = spd(rng, m)
    garbage = a.copy()
    if lower:
        garbage[np.triu_indices(m, 1)] = np.nan
    else:
        garbage[np.tril_indices(m, -1)] = 1e30
    ours = la.cholesky(garbage, lower=lower, check_finite=False)
    assert rel(ours, sla.cholesky(a, lower=lower)) < tol32(m)


@pytest.mark.parametrize("order", ["C", "F", "strided", "negative"])
@pytest.mark.parametrize("m", [33, 330])
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_any_layout(rng, order, m, lower):
    """cholesky and cho_factor of any layout (from order 256 the GPU's float64 factor, which
    cho_factor writes into its result while a's other triangle is copied beside it)."""
    a = spd(rng, m)
    if order == "F":
        given = np.asfortranarray(a)
    elif order == "strided":
        big = np.zeros((2 * m, 3 * m))
        big[::2, ::3] = a
        given = big[::2, ::3]
    elif order == "negative":
        given = a[::-1, ::-1].copy()[::-1, ::-1]  # a view with negative strides
        assert given.strides[0] < 0
    else:
        given = a
    want = sla.cholesky(a, lower=lower)
    assert rel(la.cholesky(given, lower=lower), want) < tol32(m)
    c, low = la.cho_factor(given, lower=lower)
    mask = np.tri(m, dtype=bool) if lower else np.tri(m, dtype=bool).T
    assert low == lower and c.dtype == np.float64
    assert rel(c[mask], want[mask]) < 1e-13
    assert np.array_equal(c[~mask], a[~mask]), "the other triangle keeps a's entries"


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64,
                                   np.float16, bool])
def test_dtype_conversion_as_scipy(dtype):
    a = (np.eye(3) * 4 + 1).astype(dtype) if dtype is not bool else np.eye(3, dtype=bool)
    ours, theirs = la.cholesky(a), sla.cholesky(a)
    assert ours.dtype == theirs.dtype
    assert rel(ours, theirs) < tol32(3)


def test_complex_refused():
    with pytest.raises(TypeError, match="complex"):
        la.cholesky(np.eye(2, dtype=complex))
    with pytest.raises(TypeError, match="complex"):
        la.solve(np.eye(2), np.ones(2, dtype=np.complex64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_not_positive_definite(rng, dtype):
    m = 7
    a = spd(rng, m, dtype)
    a[4, 4] = -1.0  # the leading 5x5 minor fails first
    with pytest.raises(np.linalg.LinAlgError) as theirs:
        sla.cholesky(a, lower=True)
    with pytest.raises(la.NotPositiveDefiniteError) as ours:
        la.cholesky(a, lower=True)
    assert isinstance(ours.value, np.linalg.LinAlgError)
    # scipy: "5-th leading minor of the array is not positive definite" (INFO = 5)
    info = int(str(theirs.value).split("-th")[0])
    assert ours.value.column == info - 1 == 4
    for f in (lambda: la.cho_factor(a), lambda: la.Cholesky(a),
              lambda: la.solve(np.tril(a) + np.tril(a, -1).T, np.ones(m), assume_a="pos")):
        with pytest.raises(la.NotPositiveDefiniteError) as e:
            f()
        assert e.value.column == 4


def test_shape_and_finite_errors():
    with pytest.raises(ValueError, match="square"):
        la.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.cholesky(np.array([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.cholesky(np.array([[1.0, np.inf], [np.inf, 1.0]]))
    with pytest.raises(ValueError):
        # check_finite=False: the library still refuses a NaN in the triangle it reads
        la.cholesky(np.array([[np.nan, 0.0], [0.0, 1.0]]), check_finite=False)
    with pytest.raises(ValueError):
        la.cholesky(np.ones(3))
    with pytest.raises(ValueError, match="square"):
        la.cho_factor(np.ones((2, 3, 4)))  # stacks (..., n, n): test_stacks.py
    assert la.cholesky(np.zeros((0, 0))).shape == (0, 0)


@pytest.mark.parametrize("m", [7, 330])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_check_finite_error_comes_before_the_factors(rng, m, dtype, lower, order):
    """A non-finite entry in the triangle not read is scipy's ValueError even where the factor
    (which runs while the binding checks that triangle) fails on its own, as scipy checks
    before it factors: host and GPU float64 factors, the batched small float32 orders and the
    single path."""
    a = spd(rng, m, dtype)
    a[m // 2, m // 2] = -1.0
    i, j = (0, m - 1) if lower else (m - 1, 0)
    a[i, j] = np.nan
    a = np.array(a, order=order)
    for factor in (la.cholesky, la.cho_factor,
                   lambda a, lower: la.cho_factor(a.copy(), lower=lower, overwrite_a=True)):
        with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
            factor(a, lower=lower)
    with pytest.raises(la.NotPositiveDefiniteError):
        la.cholesky(a, lower=lower, check_finite=False)


@pytest.mark.parametrize("m", [2, 8, 17, 70, 330])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("read", [True, False])
def test_check_finite_either_triangle(rng, m, dtype, lower, order, read):
    """check_finite finds a NaN in the triangle the factor reads (checked by the library as it
    reads it) and in the other (checked by the binding) with scipy's message, for cholesky and
    cho_factor, C and Fortran arrays, the batched small orders and the single path."""
    a = np.array(spd(rng, m, dtype), order=order)
    i, j = (m - 1, 0) if read == lower else (0, m - 1)
    a[i, j] = np.nan
    for factor in (la.cholesky, la.cho_factor):
        with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
            factor(a, lower=lower)
    if not read:
        # Unchecked, the unread triangle is not looked at.
        good = la.cholesky(a, lower=lower, check_finite=False)
        ref = np.linalg.cholesky(np.where(np.isnan(a), a.T, a).astype(np.float64))
        assert rel(good if lower else good.T, ref) < tol32(m)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_and_solve(rng, m, dtype, lower):
    a = spd(rng, m, dtype)
    b = rng.standard_normal((m, 3)).astype(dtype)
    c, low = la.cho_factor(a, lower=lower)
    assert low == lower and c.dtype == dtype
    sc, _ = sla.cho_factor(a, lower=lower)
    mask = np.tri(m, dtype=bool) if lower else np.tri(m, dtype=bool).T
    assert rel(c[mask], sc[mask]) < tol32(m)
    assert np.array_equal(c[~mask], a[~mask]), "the other triangle keeps a's entries"
    x = la.cho_solve((c, low), b)
    assert x.dtype == dtype and x.shape == b.shape
    want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    assert rel(x, want) < tol32(m)
    # scipy's factor through our cho_solve: float64 accurate for float64
    x = la.cho_solve(sla.cho_factor(a, lower=lower), b[:, 0])
    assert x.shape == (m,)
    assert rel(x, sla.cho_solve(sla.cho_factor(a, lower=lower), b[:, 0])) < tol(dtype, m)


def test_cho_factor_overwrite_a(rng):
    a = spd(rng, 9)
    c, _ = la.cho_factor(a, overwrite_a=True)
    assert c is a
    c, _ = la.cho_factor(a.astype(np.float32), overwrite_a=True)
    assert c is not a


def test_cho_solve_shape_error(rng):
    c = la.cho_factor(spd(rng, 4))
    with pytest.raises(ValueError, match="incompatible dimensions"):
        la.cho_solve(c, np.ones(5))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_checks_all_of_c_first_as_scipy(rng, dtype, lower):
    """check_finite reads all of c (the binding checks it beside the float64 solve, on the
    pool where c fills its memory, else on the calling thread), its error before any other, as
    scipy's; unchecked, the triangle not read is not looked at."""
    m = 6
    c, _ = la.cho_factor(spd(rng, m, dtype), lower=lower)
    for i, j in ((4, 1), (1, 4), (3, 3)):
        bad = c.copy()
        bad[i, j] = np.inf if i == j else np.nan
        for order in ("C", "F", "strided"):
            # strided: a view into a wider array (its memory not filled by it)
            laid = (lambda v: np.pad(np.ascontiguousarray(v), ((0, 0), (0, 3)))[:, :m]) \
                if order == "strided" else (lambda v: np.array(v, order=order))
            layout = laid(bad)
            assert (order == "strided") == (layout.base is not None and not (
                layout.flags.c_contiguous or layout.flags.f_contiguous))
            want = la.cho_solve((laid(c), lower), np.ones(m))
            for b in (np.ones(m), np.ones(m, np.float32), np.ones((m, 2)), np.ones(m + 1),
                      np.ones((m, 0)), np.ones(m, complex)):
                with pytest.raises(ValueError,
                                   match="^array must not contain infs or NaNs$") as e:
                    la.cho_solve((layout, lower), b)
                assert e.value.__context__ is None or e.value.__suppress_context__
            if i != j and (i > j) != lower:
                x = la.cho_solve((layout, lower), np.ones(m), check_finite=False)
                assert np.array_equal(x, want)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_object(rng, m, dtype):
    a = spd(rng, m, dtype)
    with la.Cholesky(a, lower=True) as f:
        assert f.order == m and f.method in ("tiled", "blocked", "faithful")
        for k in (1, 4):
            b = rng.standard_normal((m, k)).astype(dtype)
            x = f.solve(b[:, 0] if k == 1 else b)
            want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
            assert x.dtype == dtype
            assert rel(x, want[:, 0] if k == 1 else want) < tol(dtype, m)
        assert rel(f.factor, sla.cholesky(a, lower=True)) < tol32(m)
        assert rel(f.inv(), np.linalg.inv(a.astype(np.float64))) < 10 * tol32(m)
    with pytest.raises(ValueError, match="released"):
        f.solve(np.ones(m))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("order", ["C", "F"])
def test_float64_factor_reads_only_its_triangle_where_it_lies(lower, order):
    """From order 256 the float64 factor is the GPU's, reading the array where it lies: NaN in
    the other triangle (check_finite off) is never read, in C and Fortran order."""
    m = 330
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, m))
    c = a @ a.T + m * np.eye(m)
    held = np.array(c, order=order)
    other = np.triu_indices(m, 1) if lower else np.tril_indices(m, -1)
    held[other] = np.nan
    ours = la.cholesky(held, lower=lower, check_finite=False)
    want = sla.cholesky(c, lower=lower)
    assert np.max(np.abs(ours - want)) <= 1e-14 * np.max(np.abs(want))
    factor, low = la.cho_factor(held, lower=lower, check_finite=False)
    x = la.cho_solve((factor, low), np.ones(m), check_finite=False)
    assert np.max(np.abs(c @ x - 1)) <= 1e-13


@pytest.mark.parametrize("m", [5, 70, 520])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_factors_of_any_order(rng, m, dtype, order, lower):
    """cholesky and cho_factor of C and Fortran arrays, each triangle (the copies read rows
    as slices or transpose in tiles, over all cores from m = 512): cholesky's other triangle
    zero, cho_factor's holding a's entries."""
    a = np.array(spd(rng, m, dtype), order=order)
    mask = np.tri(m, dtype=bool) if lower else np.tri(m, dtype=bool).T
    want = sla.cholesky(a, lower=lower)
    ours = la.cholesky(a, lower=lower)
    assert ours.dtype == dtype
    assert rel(ours, want) < tol32(m)
    assert not ours[~mask].any()
    c, low = la.cho_factor(a, lower=lower)
    assert low == lower and c.dtype == dtype
    assert rel(c[mask], want[mask]) < tol32(m)
    assert np.array_equal(c[~mask], a[~mask]), "the other triangle keeps a's entries"


@pytest.mark.parametrize("m", [63, 64, 65, 300])
@pytest.mark.parametrize("order", ["C", "F", "wide"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("storage", ["full", "packed"])
def test_float32_factor_reads_only_its_triangle_where_it_lies(m, order, lower, storage):
    """A float32 factor reads the array where it lies (C or Fortran order, a row stride past the
    order), either triangle: NaN in the other one (check_finite off) is never read. Against
    numpy's float64 factor of the same values."""
    rng = np.random.default_rng(m)
    g = rng.standard_normal((m, m))
    c = (g @ g.T / m + np.eye(m)).astype(np.float32)
    if order == "wide":
        held = np.full((m, m + 5), np.nan, dtype=np.float32)[:, :m]
        held[...] = c
    else:
        held = np.array(c, order=order)
    other = np.triu_indices(m, 1) if lower else np.tril_indices(m, -1)
    held[other] = np.nan
    ours = la.cholesky(held, lower=lower, check_finite=False, storage=storage)
    assert ours.dtype == np.float32
    want = np.linalg.cholesky(c.astype(np.float64))
    assert rel(ours, want if lower else want.T) < tol32(m)
    assert not (np.triu(ours, 1) if lower else np.tril(ours, -1)).any()
    factor, low = la.cho_factor(held, lower=lower, check_finite=False, storage=storage)
    assert low == lower
    mine = np.tril(factor) if lower else np.triu(factor)
    assert np.array_equal(mine, ours)


@pytest.mark.parametrize("lower", [True, False])
def test_float32_not_positive_definite_from_the_array(lower):
    m = 65
    c = spd(np.random.default_rng(3), m, np.float32)
    c[40, 40] = -1.0
    with pytest.raises(la.NotPositiveDefiniteError) as e:
        la.cholesky(np.asfortranarray(c), lower=lower, storage="packed")
    assert e.value.column == 40
    c[40, 40] = np.nan
    with pytest.raises(ValueError):
        la.cholesky(c, lower=lower, check_finite=False, storage="packed")
