"""solve and inv against scipy, every assume_a, and their errors."""

import numpy as np
import pytest
import scipy.linalg as sla

import symraster as la
from conftest import DTYPES, SIZES, general, rel, spd, tol


@pytest.mark.parametrize("method", ["auto", "gje", "lu"])
def test_general_inverse_by_each_method_is_float64_accurate(rng, method):
    """Every general method, refined on the GPU, reaches float64's accuracy; a method the
    library has not is refused."""
    for m in (1, 33, 130):
        a = general(rng, m, np.float64)
        x, d = la._native.invert(a, False, False, method)
        assert rel(x, np.linalg.inv(a)) < 1e-12, (m, method, d["residuals"])
        assert d["fallback"] is None
    with pytest.raises(ValueError, match="method must be 'auto', 'gje' or 'lu'"):
        la._native.invert(a, False, False, "qr")


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("k", [None, 1, 3])
def test_solve_pos(rng, m, dtype, lower, k):
    a = spd(rng, m, dtype)
    b = rng.standard_normal(m if k is None else (m, k)).astype(dtype)
    x = la.solve(a, b, lower=lower, assume_a="pos")
    want = sla.solve(a, b, lower=lower, assume_a="pos")
    assert x.dtype == want.dtype == dtype and x.shape == b.shape
    exact = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    assert rel(x, exact) < tol(dtype, m)


def test_solve_pos_reads_its_triangle(rng):
    a = spd(rng, 30)
    b = rng.standard_normal(30)
    upper_only = np.triu(a)
    upper_only[np.tril_indices(30, -1)] = 7.0  # garbage below: not read
    assert rel(la.solve(upper_only, b, assume_a="pos"), np.linalg.solve(a, b)) < 1e-12
    assert rel(la.solve(upper_only.T, b, lower=True, assume_a="pos"),
               np.linalg.solve(a, b)) < 1e-12


def test_solve_pos_f64_accuracy_beyond_f32(rng):
    # κ ≈ 1e5: float32 alone gives about 1e-3; the refinement gives float64's accuracy.
    m = 64
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    a = q @ np.diag(np.logspace(0, 5, m)) @ q.T
    a = (a + a.T) / 2
    b = rng.standard_normal((m, 2))
    exact = np.linalg.solve(a, b)
    assert rel(la.solve(a, b[:, 0], assume_a="pos"), exact[:, 0]) < 1e-10
    assert rel(la.solve(a, b, assume_a="pos"), exact) < 1e-10


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("assume_a", [None, "gen", "general"])
def test_solve_general(rng, m, dtype, assume_a):
    a = general(rng, m, dtype)
    b = rng.standard_normal((m, 2)).astype(dtype)
    x = la.solve(a, b, assume_a=assume_a)
    want = sla.solve(a, b, assume_a=assume_a)
    assert x.dtype == want.dtype and x.shape == want.shape
    assert rel(x, np.linalg.solve(a.astype(np.float64), b.astype(np.float64))) < tol(dtype, m)


def test_solve_transposed_and_symmetric(rng):
    m = 17
    a, b = general(rng, m), rng.standard_normal(m)
    assert rel(la.solve(a, b, transposed=True), np.linalg.solve(a.T, b)) < 1e-12
    s = a + a.T  # symmetric indefinite
    for assume_a in ("sym", "her"):
        for lower in (False, True):
            half = np.tril(s) if lower else np.triu(s)
            x = la.solve(half, b, lower=lower, assume_a=assume_a)
            assert rel(x, sla.solve(half, b, lower=lower, assume_a=assume_a)) < 1e-11


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.float16, bool])
def test_solve_dtype_conversion_as_scipy(dtype):
    a = (np.eye(3) * 4 + 1).astype(dtype) if dtype is not bool else np.eye(3, dtype=bool)
    b = np.ones(3, dtype=dtype)
    ours, theirs = la.solve(a, b), sla.solve(a, b)
    assert ours.dtype == theirs.dtype
    assert rel(ours, theirs) < 1e-3
    assert la.solve(a, b, assume_a="pos").dtype == sla.solve(a, b, assume_a="pos").dtype


def test_solve_mixed_dtypes(rng):
    a = spd(rng, 5, np.float32)
    b = rng.standard_normal(5)
    assert la.solve(a, b).dtype == sla.solve(a, b).dtype == np.float64
    assert la.solve(a, b, assume_a="pos").dtype == np.float64


def test_solve_errors(rng):
    a = spd(rng, 4)
    with pytest.raises(ValueError, match="incompatible shapes"):
        la.solve(a, np.ones(5))
    with pytest.raises(ValueError, match="square"):
        la.solve(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.solve(a, np.array([1.0, np.nan, 0.0, 0.0]))
    for structure in ("banded", "tridiagonal", "diagonal", "upper triangular"):
        with pytest.raises(NotImplementedError, match="'gen'"):
            la.solve(a, np.ones(4), assume_a=structure)
    with pytest.raises(ValueError, match="not a recognized matrix structure"):
        la.solve(a, np.ones(4), assume_a="foo")
    with pytest.raises(np.linalg.LinAlgError):
        la.solve(np.zeros((3, 3)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        la.solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2))
    assert la.solve(np.zeros((0, 0)), np.ones(0)).shape == (0,)
    assert la.solve(a, np.ones((4, 0))).shape == (4, 0)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_inv(rng, m, dtype):
    a = general(rng, m, dtype)
    x = la.inv(a)
    want = sla.inv(a)
    assert x.dtype == want.dtype == dtype
    assert rel(x, np.linalg.inv(a.astype(np.float64))) < tol(dtype, m)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_inv_pos(rng, m, dtype, lower):
    a = spd(rng, m, dtype)
    half = np.tril(a) if lower else np.triu(a)
    x = la.inv(half, assume_a="pos", lower=lower)
    assert x.dtype == sla.inv(a).dtype  # (scipy < 1.16 has no assume_a)
    assert rel(x, np.linalg.inv(a.astype(np.float64))) < tol(dtype, m)


@pytest.mark.parametrize("m", [1, 2, 17, 63, 64, 65, 200])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_inv_pos_reads_its_triangle_where_it_lies(rng, m, order, lower):
    """A float64 a is inverted where it lies, in C and Fortran order: NaN in the triangle not
    read (check_finite off) is never read, and the inverse is float64 accurate."""
    a = spd(rng, m)
    held = np.array(a, order=order)
    held[np.triu_indices(m, 1) if lower else np.tril_indices(m, -1)] = np.nan
    x = la.inv(held, assume_a="pos", lower=lower, check_finite=False)
    assert x.dtype == np.float64 and x.shape == (m, m)
    assert rel(x, np.linalg.inv(a)) < 1e-12
    if m > 1:
        with pytest.raises(ValueError, match="infs or NaNs"):
            la.inv(held, assume_a="pos", lower=lower)  # scipy's check reads all of a


def test_inv_pos_lent_and_copied_agree(rng):
    """A float64 a the binding cannot lend (strided) is copied: the same inverse, bit for bit."""
    m = 70
    a = spd(rng, m)
    big = np.zeros((2 * m, 2 * m))
    big[::2, ::2] = a
    for lower in (True, False):
        lent = la.inv(a, assume_a="pos", lower=lower)
        copied = la.inv(big[::2, ::2], assume_a="pos", lower=lower)
        assert np.array_equal(lent, copied)


def test_inv_pos_checks_both_triangles_as_scipy(rng):
    # scipy's check_finite reads all of a; ours reads the unread triangle in Python and the
    # read one in the library: either place gives scipy's error.
    a = spd(rng, 6)
    for lower in (True, False):
        for i, j in ((4, 1), (1, 4), (3, 3)):
            bad = a.copy()
            bad[i, j] = np.inf if i == j else np.nan
            read = i == j or (i > j) == lower
            for layout in (bad, np.asfortranarray(bad)):
                with pytest.raises(ValueError, match="infs or NaNs"):
                    la.inv(layout, assume_a="pos", lower=lower)
                if read:
                    # Without the check the library's error names the place in a.
                    with pytest.raises(ValueError, match=f"at row {i}, column {j} "):
                        la.inv(layout, assume_a="pos", lower=lower, check_finite=False)
                else:
                    x = la.inv(layout, assume_a="pos", lower=lower, check_finite=False)
                    assert rel(x, np.linalg.inv(a)) < 1e-12


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_inv_pos_not_positive_definite(rng, order, lower):
    a = spd(rng, 9)
    a[5, 5] = -3.0
    with pytest.raises(np.linalg.LinAlgError) as e:
        la.inv(np.array(a, order=order), assume_a="pos", lower=lower)
    assert isinstance(e.value, la.NotPositiveDefiniteError) and e.value.column == 5


def test_inv_errors(rng):
    with pytest.raises(la.NumericalError) as e:
        la.inv(np.zeros((3, 3)))
    assert isinstance(e.value, np.linalg.LinAlgError)
    a = spd(rng, 6)
    a[2, 2] = -5.0
    with pytest.raises(la.NotPositiveDefiniteError) as e:
        la.inv(a, assume_a="pos", lower=True)
    assert e.value.column == 2
    with pytest.raises(ValueError, match="square"):
        la.inv(np.ones((2, 3)))
    with pytest.raises(NotImplementedError):
        la.inv(np.eye(3), assume_a="banded")
    assert la.inv(np.zeros((0, 0))).shape == (0, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pos_solve_checks_both_triangles_as_scipy(rng, dtype):
    # scipy's check_finite reads all of a; ours reads the unread triangle in Python and the
    # read one in the library's norm pass: either place gives scipy's error.
    a = spd(rng, 6, dtype)
    b = np.ones(6)
    for lower in (True, False):
        for i, j in ((4, 1), (1, 4), (3, 3)):
            bad = a.copy()
            bad[i, j] = np.inf if i == j else np.nan
            for layout in (bad, np.asfortranarray(bad)):
                with pytest.raises(ValueError, match="infs or NaNs"):
                    la.solve(layout, b, lower=lower, assume_a="pos")
            if (i > j and not lower) or (i < j and lower):
                # Outside the triangle read: unread without the check.
                x = la.solve(bad, b, lower=lower, assume_a="pos", check_finite=False)
                assert np.allclose(a.astype(np.float64) @ x, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F", "strided"])
@pytest.mark.parametrize("lower", [False, True])
def test_check_finite_error_comes_before_any_other(rng, dtype, order, lower):
    """A non-finite entry in the triangle of a the library does not read (checked by the
    binding while the solve or inverse runs) is scipy's ValueError before the library's own
    errors and before b's, as scipy checks a first."""
    m = 9
    a = spd(rng, m, dtype)
    a[5, 5] = -3.0
    i, j = (0, m - 1) if lower else (m - 1, 0)
    a[i, j] = np.nan
    if order == "strided":
        held = np.zeros((2 * m, 2 * m), dtype)
        held[::2, ::2] = a
        a = held[::2, ::2]
    else:
        a = np.array(a, order=order)
    nan = "^array must not contain infs or NaNs$"
    for b in (np.ones(m), np.ones((m, 1)), np.ones(m + 1), np.ones(m, complex), np.full(m, np.inf)):
        with pytest.raises(ValueError, match=nan) as e:
            la.solve(a, b, lower=lower, assume_a="pos")
        assert e.value.__context__ is None or e.value.__suppress_context__
    with pytest.raises(ValueError, match=nan):
        la.solve(a, np.ones(m), lower=lower, assume_a="pos", method="nonesuch")
    with pytest.raises(ValueError, match=nan):
        la.inv(a, assume_a="pos", lower=lower)
    with pytest.raises(la.NotPositiveDefiniteError):
        la.inv(a, assume_a="pos", lower=lower, check_finite=False)
    with pytest.raises(ValueError, match="incompatible shapes"):
        la.solve(a, np.ones(m + 1), lower=lower, assume_a="pos", check_finite=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_spd_inverse_norm_1_from_the_triangle_read(rng, dtype, upper):
    """invert's ‖a‖₁ (for inv's condition warning), worked out while the inverse runs, from
    the triangle the inverse reads alone: C, Fortran and strided arrays, garbage in the other
    triangle; NaN where that triangle holds a NaN."""
    m = 37
    signs = rng.choice([-1.0, 1.0], m)
    a = signs[:, None] * spd(rng, m) * signs  # negative entries too
    want = np.max(np.sum(np.abs(a), axis=0))
    held = a.copy()
    held[np.tril_indices(m, -1) if upper else np.triu_indices(m, 1)] = 1e30
    held = held.astype(dtype)
    strided = np.zeros((m, 2 * m), dtype)
    strided[:, ::2] = held
    for layout in (held, np.asfortranarray(held), strided[:, ::2]):
        _, d = la._native.invert(layout, True, upper, "auto")
        assert abs(d["norm_1"] - want) <= 1e-6 * want
    held[3, 3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        la._native.invert(held, True, upper, "auto")


@pytest.mark.parametrize("m", [1, 7, 33, 100])
@pytest.mark.parametrize("lower", [False, True])
def test_pos_solve_float32_is_the_float64_solve_of_its_widening(rng, m, lower):
    """A float32 a (lent as it lies, C or Fortran order, or copied where strided) gives the
    float64 solve of a widened, bit for bit, whatever its unread triangle holds; float32 in
    gives float32 out."""
    a = spd(rng, m, np.float32)
    unread = np.triu_indices(m, 1) if lower else np.tril_indices(m, -1)
    a[unread] = np.nan
    b = rng.standard_normal(m).astype(np.float32)
    strided = np.zeros((2 * m, 2 * m), np.float32)
    strided[::2, ::2] = a
    for layout in (a, np.asfortranarray(a), strided[::2, ::2]):
        wide = layout.astype(np.float64)
        for rhs in (b, b.astype(np.float64)):
            x = la.solve(layout, rhs, lower=lower, assume_a="pos", check_finite=False)
            want = la.solve(wide, rhs.astype(np.float64), lower=lower, assume_a="pos",
                            check_finite=False)
            assert x.dtype == rhs.dtype
            assert np.array_equal(x, want.astype(rhs.dtype))
        # The library's float64 x and diagnostics themselves.
        x, d = la._native.spd_solve(layout, b, not lower, "auto", "full")
        x64, d64 = la._native.spd_solve(wide, b.astype(np.float64), not lower, "auto", "full")
        assert np.array_equal(x, x64)
        assert {k: v for k, v in d.items() if "time" not in k and "seconds" not in k} == \
            {k: v for k, v in d64.items() if "time" not in k and "seconds" not in k}
