"""The batched functions (batched_syrk, batched_cholesky, batched_solve, batched_weighted_lstsq)
and cholesky of a stack, each problem against numpy's float64 reference: every order around
the kernels' tiles, both dtypes, C/Fortran/strided layouts, batches with failing members (their
INFO and NaN outputs, the others right) and the error messages."""

import pickle

import numpy as np
import pytest

import symraster as la
from conftest import DTYPES, rel

EPS32 = np.finfo(np.float32).eps

# Orders around the batched kernels' widths (4-column factor steps, 8-row solve blocks, the
# shared-memory limits), up to past 128.
ORDERS = [1, 2, 3, 7, 8, 16, 31, 64, 129]
LAYOUTS = ["C", "F", "strided", "transposed"]
B = 4


def laid_out(x, layout):
    """x (any ndim ≥ 2) with the same values in another memory layout: C order, Fortran
    order, a strided (every other element, reversed batch axis) view, or each problem stored
    transposed (a view of the swapped copy)."""
    if layout == "C":
        return np.ascontiguousarray(x)
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "strided":
        big = np.full(tuple(2 * s for s in x.shape), np.nan, dtype=x.dtype)
        view = big[tuple(slice(None, None, 2) for _ in x.shape)][::-1]
        view[...] = x
        return view
    swapped = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    return np.swapaxes(swapped, -1, -2)


def spd_stack(rng, n, count=B, dtype=np.float64):
    """count well-conditioned SPD matrices (κ below about 10), f64 values exact in dtype."""
    g = rng.standard_normal((count, n, n))
    c = g @ g.transpose(0, 2, 1) / n + np.eye(n)
    return c.astype(dtype)


def tol_factor(n, kappa):
    """A float32 factor or solve from float32-rounded data: κ·ε₃₂ times a factor growing
    with n."""
    return 32 * np.sqrt(n) * max(kappa, 1.0) * EPS32


def make_indefinite(c, p, column):
    """Problem p's pivot at `column` becomes negative (its leading minors before stay)."""
    c[p, column, column] = -1.0
    return c


# --- batched_syrk ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", ORDERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_syrk(rng, n, dtype, layout):
    k = n + 5
    a = rng.standard_normal((B, n, k)).astype(dtype)
    d = rng.uniform(0.5, 2.0, (B, k)).astype(dtype)
    c = la.batched_syrk(laid_out(a, layout), laid_out(d, layout))
    assert c.shape == (B, n, n) and c.dtype == dtype
    for p in range(B):
        a64, d64 = a[p].astype(np.float64), d[p].astype(np.float64)
        ref = np.tril(a64 @ np.diag(d64) @ a64.T)
        assert rel(c[p], ref) < 64 * np.sqrt(k) * EPS32, p
        assert np.all(np.triu(c[p], 1) == 0)


def test_batched_syrk_default_weights_and_strided(rng):
    a = rng.standard_normal((3, 5, 9))
    c = la.batched_syrk(laid_out(a, "strided"))
    for p in range(3):
        assert rel(c[p], np.tril(a[p] @ a[p].T)) < 64 * 3 * EPS32


# --- batched_cholesky -----------------------------------------------------------------------


@pytest.mark.parametrize("n", ORDERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_cholesky(rng, n, dtype, layout):
    c = spd_stack(rng, n, dtype=dtype)
    l, info = la.batched_cholesky(laid_out(c, layout))
    assert l.shape == (B, n, n) and l.dtype == dtype
    assert info.dtype == np.int32 and info.shape == (B,) and not info.any()
    for p in range(B):
        c64 = c[p].astype(np.float64)
        ref = np.linalg.cholesky(c64)
        assert rel(l[p], ref) < tol_factor(n, np.linalg.cond(c64)), p
        assert np.all(np.triu(l[p], 1) == 0)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_cholesky_upper_reads_the_upper_triangles(rng, layout, dtype):
    n = 31
    c = spd_stack(rng, n, dtype=dtype)
    garbage = c.copy()
    garbage[:, np.tri(n, k=-1, dtype=bool)] = np.nan  # below the diagonal: never read
    u, info = la.batched_cholesky(laid_out(garbage, layout), lower=False, check_finite=False)
    assert u.dtype == dtype and not info.any()
    for p in range(B):
        ref = np.linalg.cholesky(c[p].astype(np.float64)).T
        assert rel(u[p], ref) < tol_factor(n, 10), p
        assert np.all(np.tril(u[p], -1) == 0)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 31, 129])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_cholesky_failing_members(rng, n, dtype):
    c = spd_stack(rng, n, count=5, dtype=dtype)
    make_indefinite(c, 1, n - 1)
    make_indefinite(c, 3, n // 2)
    l, info = la.batched_cholesky(c)
    assert list(info) == [0, n, 0, n // 2 + 1, 0]
    for p in (1, 3):
        assert np.isnan(l[p]).all()
    for p in (0, 2, 4):
        ref = np.linalg.cholesky(c[p].astype(np.float64))
        assert rel(l[p], ref) < tol_factor(n, 10), p


# --- batched_solve --------------------------------------------------------------------------


@pytest.mark.parametrize("n", ORDERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_solve(rng, n, dtype, layout):
    c = spd_stack(rng, n, dtype=dtype)
    b = rng.standard_normal((B, n)).astype(dtype)
    x, info = la.batched_solve(laid_out(c, layout), laid_out(b, layout))
    assert x.shape == (B, n) and x.dtype == dtype and not info.any()
    for p in range(B):
        c64, b64 = c[p].astype(np.float64), b[p].astype(np.float64)
        ref = np.linalg.solve(c64, b64)
        kappa = np.linalg.cond(c64)
        if dtype == np.float32:
            # the data is exact in float32: one refinement step leaves x far more accurate
            # than float32, so only x's own rounding to float32 remains
            assert rel(x[p], ref) < 4 * EPS32, p
        else:
            # the float64 data rounded to float32 once on its way: κ·2⁻²⁴ stays
            assert rel(x[p], ref) < tol_factor(n, kappa), p


@pytest.mark.parametrize("n", [3, 31, 129])
def test_batched_solve_refinement_beyond_float32(rng, n):
    """float64 data exact in float32: each refinement step (residual in float64) shrinks the
    error by about κ·2⁻²⁴, far below float32's accuracy after two."""
    c = spd_stack(rng, n, dtype=np.float32).astype(np.float64)
    b = rng.standard_normal((B, n)).astype(np.float32).astype(np.float64)
    ref = np.linalg.solve(c, b[..., None])[..., 0]
    x0, _ = la.batched_solve(c, b, refinement_steps=0)
    x2, info = la.batched_solve(c, b, refinement_steps=2)
    assert not info.any()
    for p in range(B):
        assert rel(x0[p], ref[p]) < tol_factor(n, 10), p
        assert rel(x0[p], ref[p]) > 1e-12, p  # unrefined: float32's accuracy
        assert rel(x2[p], ref[p]) < 1e-12, p


@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_solve_layouts_and_upper(rng, layout):
    n = 16
    c = spd_stack(rng, n)
    b = rng.standard_normal((B, n))
    garbage = c.copy()
    garbage[:, np.tri(n, k=-1, dtype=bool)] = 1e30  # below the diagonal: never read
    x, info = la.batched_solve(laid_out(garbage, layout), laid_out(b, layout), lower=False)
    assert not info.any()
    for p in range(B):
        assert rel(x[p], np.linalg.solve(c[p], b[p])) < tol_factor(n, 10), p


@pytest.mark.parametrize("n", [1, 3, 8, 64])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_solve_failing_members(rng, n, dtype):
    c = spd_stack(rng, n, count=4, dtype=dtype)
    b = rng.standard_normal((4, n)).astype(dtype)
    make_indefinite(c, 0, 0)
    make_indefinite(c, 2, n - 1)
    x, info = la.batched_solve(c, b)
    assert list(info) == [1, 0, n, 0]
    assert np.isnan(x[0]).all() and np.isnan(x[2]).all()
    for p in (1, 3):
        ref = np.linalg.solve(c[p].astype(np.float64), b[p].astype(np.float64))
        assert rel(x[p], ref) < tol_factor(n, 10), p


def test_batched_solve_scales_each_member_as_the_single_solve():
    # x = 1e60 and 3.3e-61 lie outside float32's range: each member is scaled by powers of two
    # and solved, in float64; in float32 such an x cannot be returned, and its INFO is -1.
    c = np.array([[[1e-30, 0.0], [0.0, 1e-30]], [[2.0, 1.0], [1.0, 2.0]], [[2e30, 1e30], [1e30, 2e30]]])
    b = np.array([[1e30, 2e30], [1.0, 2.0], [1e-30, 1e-30]])
    x, info = la.batched_solve(c, b)
    assert list(info) == [0, 0, 0]
    # The inputs are rounded to float32 once (after the scaling): float32-relative accuracy.
    np.testing.assert_allclose(x[0], [1e60, 2e60], rtol=1e-6)
    np.testing.assert_allclose(x[1], [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(x[2], [1e-60 / 3, 1e-60 / 3], rtol=1e-6)
    x32, info32 = la.batched_solve(c[:2].astype(np.float32), b[:2].astype(np.float32))
    assert list(info32) == [-1, 0] and x32.dtype == np.float32
    assert np.isnan(x32[0]).all() and np.allclose(x32[1], [0.0, 1.0], atol=1e-5)


def test_batched_solve_dtypes(rng):
    c = spd_stack(rng, 3, count=2)
    b = rng.standard_normal((2, 3))
    assert la.batched_solve(c.astype(np.float32), b.astype(np.float32))[0].dtype == np.float32
    assert la.batched_solve(c.astype(np.float32), b)[0].dtype == np.float64
    x, _ = la.batched_solve(np.round(c * 10).astype(np.int64), np.ones((2, 3), np.int32))
    assert x.dtype == np.float64


def repeated_unknown(rng, n):
    """An SPD matrix whose last unknown repeats its first but for 2⁻²¹·c[0, 0] on the diagonal:
    singular to working precision. Entries are multiples of 2⁻⁸ and c[0, 0] a power of two, so
    the float32 factor's elimination of the last row is exact: its last pivot is exactly
    2⁻²¹·c[0, 0] > 0, the factor passes, and x from it is noise."""
    g = np.floor(rng.uniform(-0.5, 0.5, (n, n)) * 256) / 256
    c = np.triu(g) + np.triu(g, 1).T
    np.fill_diagonal(c, n + 1.0)
    c[0, 0] = 2.0 ** (np.ceil(np.log2(n)) + 1)
    c[-1, :] = c[0, :]
    c[:, -1] = c[:, 0]
    c[-1, -1] = c[0, 0] * (1 + 2.0**-21)
    return c


@pytest.mark.parametrize("n", [2, 7, 16, 33, 129])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_solve_flags_a_member_singular_to_working_precision(rng, n, dtype):
    """INFO n + 1 (LAPACK's dposvx: rcond below machine precision) and NaN for the member
    whose float32 factor passes on a rounding-size pivot; INFO 0 and numpy's x for the
    others."""
    c = spd_stack(rng, n, count=4, dtype=dtype)
    c[1] = repeated_unknown(rng, n).astype(dtype)
    b = np.floor(rng.uniform(-1, 1, (4, n)) * 256).astype(dtype) / 256
    for steps in (0, 1):
        x, info = la.batched_solve(c, b, refinement_steps=steps)
        assert list(info) == [0, n + 1, 0, 0], steps
        assert np.isnan(x[1]).all()
        for p in (0, 2, 3):
            ref = np.linalg.solve(c[p].astype(np.float64), b[p].astype(np.float64))
            assert rel(x[p], ref) < tol_factor(n, 10), (steps, p)


# --- batched_weighted_lstsq -----------------------------------------------------------------


def weighted_reference(a, d, b):
    """β minimising ‖diag(√d)(b − a·β)‖₂ in float64, by numpy's lstsq (SVD)."""
    a, d, b = (np.asarray(v, np.float64) for v in (a, d, b))
    s = np.sqrt(d)
    return np.linalg.lstsq(s[:, None] * a, s * b, rcond=None)[0]


@pytest.mark.parametrize("n", ORDERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_weighted_lstsq(rng, n, dtype, layout):
    k = 2 * n + 3
    a = rng.standard_normal((B, k, n)).astype(dtype)  # observations x unknowns
    d = rng.uniform(0.5, 2.0, (B, k)).astype(dtype)
    b = rng.standard_normal((B, k)).astype(dtype)
    x, info = la.batched_weighted_lstsq(
        laid_out(a, layout), laid_out(d, layout), laid_out(b, layout))
    assert x.shape == (B, n) and x.dtype == dtype and not info.any()
    for p in range(B):
        ref = weighted_reference(a[p], d[p], b[p])
        a64 = a[p].astype(np.float64)
        kappa = np.linalg.cond(a64.T @ (d[p, :, None] * a64))
        # float32 data is exact on the GPU: after the refinement step only x's rounding to
        # float32 remains; float64 data keeps its rounding to float32 (κ·2⁻²⁴)
        bound = 4 * EPS32 if dtype == np.float32 else tol_factor(n, kappa)
        assert rel(x[p], ref) < bound, p


@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched_weighted_lstsq_layouts(rng, layout):
    n, k = 7, 20
    a = rng.standard_normal((B, k, n))
    d = rng.uniform(0.5, 2.0, (B, k))
    b = rng.standard_normal((B, k))
    x, info = la.batched_weighted_lstsq(laid_out(a, layout), laid_out(d, layout),
                                        laid_out(b, layout), refinement_steps=2)
    assert not info.any()
    for p in range(B):
        kappa = np.linalg.cond(a[p].T @ (d[p, :, None] * a[p]))
        assert rel(x[p], weighted_reference(a[p], d[p], b[p])) < tol_factor(n, kappa), p


def test_batched_inputs_are_lent_unchanged_and_give_a_copys_results(rng):
    """A dense stack (C order, Fortran order, each problem transposed) is lent to the library
    in place, any other is copied: every layout gives the same results bit for bit, on members
    far from 1 in magnitude too, and the caller's arrays are left as they were."""
    n, count = 6, 5
    scales = (2.0 ** np.array([0, 40, -40, 90, -90]))[:, None, None]
    c = (spd_stack(rng, n, count) * scales).astype(np.float32)
    b = rng.standard_normal((count, n)).astype(np.float32)
    x = rng.standard_normal((count, 2 * n, n)).astype(np.float32) * scales.astype(np.float32)
    w = (rng.random((count, 2 * n)) + 0.5).astype(np.float32)
    y = rng.standard_normal((count, 2 * n)).astype(np.float32)
    kept = [v.copy() for v in (c, b, x, w, y)]
    solved, info = la.batched_solve(c, b)
    fitted, fit_info = la.batched_weighted_lstsq(x, w, y)
    assert not info.any() and not fit_info.any()
    for layout in LAYOUTS:
        s2, i2 = la.batched_solve(laid_out(c, layout), laid_out(b, layout))
        np.testing.assert_array_equal(s2, solved, err_msg=layout)
        np.testing.assert_array_equal(i2, info)
        f2, j2 = la.batched_weighted_lstsq(
            laid_out(x, layout), laid_out(w, layout), laid_out(y, layout))
        np.testing.assert_array_equal(f2, fitted, err_msg=layout)
        np.testing.assert_array_equal(j2, fit_info)
    for before, after in zip(kept, (c, b, x, w, y)):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("n", [1, 7, 16, 31])
def test_batched_weighted_lstsq_failing_members(rng, n):
    """A member whose unknown j has no observation (column j of a zero) makes xᵀ·D·x
    singular at column j exactly: its INFO is j + 1, its x NaN, the others right."""
    k = 2 * n + 3
    a = rng.standard_normal((3, k, n))
    d = rng.uniform(0.5, 2.0, (3, k))
    b = rng.standard_normal((3, k))
    a[1, :, n - 1] = 0.0
    x, info = la.batched_weighted_lstsq(a, d, b)
    assert list(info) == [0, n, 0]
    assert np.isnan(x[1]).all()
    for p in (0, 2):
        kappa = np.linalg.cond(a[p].T @ (d[p, :, None] * a[p]))
        assert rel(x[p], weighted_reference(a[p], d[p], b[p])) < tol_factor(n, kappa), p


@pytest.mark.parametrize("n", [2, 7, 16, 33])
def test_batched_weighted_lstsq_flags_dependent_unknowns(rng, n):
    """Two unknowns whose columns of a are equal but for one observation of 2⁻⁹ (whole
    numbers elsewhere, unit weights: the normal matrix is exact in float32 and its last pivot
    2⁻²¹ of its first): INFO n + 1 and NaN for that member, the others right."""
    k = 2 * n + 10
    a = rng.standard_normal((3, k, n))
    d = rng.uniform(0.5, 2.0, (3, k))
    b = rng.standard_normal((3, k))
    m = np.clip(np.floor(rng.uniform(-0.5, 0.5, (k, n)) * 5), -2, 2)
    m[-1, :] = 0.0
    m[:, 0] = 0.0
    m[:8, 0] = np.where(rng.uniform(size=8) < 0.5, -1.0, 1.0)
    m[:, -1] = m[:, 0]
    m[-1, -1] = 2.0**-9
    a[1], d[1] = m, 1.0
    x, info = la.batched_weighted_lstsq(a, d, b)
    assert list(info) == [0, n + 1, 0]
    assert np.isnan(x[1]).all()
    for p in (0, 2):
        kappa = np.linalg.cond(a[p].T @ (d[p, :, None] * a[p]))
        assert rel(x[p], weighted_reference(a[p], d[p], b[p])) < tol_factor(n, kappa), p


# --- cholesky of a stack (numpy's and scipy's (..., n, n)) ----------------------------------


@pytest.mark.parametrize("n", [1, 3, 16, 129])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_of_a_stack(rng, n, dtype, lower):
    c = spd_stack(rng, n, count=6, dtype=dtype).reshape(2, 3, n, n)
    f = la.cholesky(c, lower=lower)
    assert f.shape == c.shape and f.dtype == dtype
    for i in range(2):
        for j in range(3):
            ref = np.linalg.cholesky(c[i, j].astype(np.float64))
            assert rel(f[i, j], ref if lower else ref.T) < tol_factor(n, 10), (i, j)


def test_cholesky_of_a_stack_names_the_first_failing_matrix(rng):
    c = spd_stack(rng, 8, count=5)
    make_indefinite(c, 3, 5)
    make_indefinite(c, 1, 2)
    with pytest.raises(la.NotPositiveDefiniteError, match="matrix 1 .*column 2") as e:
        la.cholesky(c)
    assert isinstance(e.value, np.linalg.LinAlgError)
    assert (e.value.problem, e.value.column) == (1, 2)
    copy = pickle.loads(pickle.dumps(e.value))
    assert (copy.problem, copy.column, str(copy)) == (1, 2, str(e.value))
    with pytest.raises(la.NotPositiveDefiniteError) as e:
        la.cholesky(c.reshape(5, 1, 8, 8))
    assert (e.value.problem, e.value.column) == ((1, 0), 2)


def test_cholesky_of_a_stack_one_at_a_time(rng):
    """Past BATCH_MAX_ORDER, or with a fragment method, the stack runs one matrix at a time,
    with the same results and errors."""
    n = la.BATCH_MAX_ORDER + 1
    c = spd_stack(rng, n, count=2)
    l = la.cholesky(c, lower=True)
    for p in range(2):
        assert rel(l[p], np.linalg.cholesky(c[p])) < tol_factor(n, 10), p
    small = make_indefinite(spd_stack(rng, 5, count=3), 2, 4)
    method = la.info()["methods"][-1]
    with pytest.raises(la.NotPositiveDefiniteError, match="matrix 2") as e:
        la.cholesky(small, method=method)
    assert (e.value.problem, e.value.column) == (2, 4)
    u = la.cholesky(small[:2], method=method)
    for p in range(2):
        assert rel(u[p], np.linalg.cholesky(small[p]).T) < tol_factor(5, 10), p


def test_cholesky_of_a_stack_errors():
    with pytest.raises(ValueError, match="square"):
        la.cholesky(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.cholesky(np.full((2, 2, 2), np.nan))
    assert la.cholesky(np.zeros((0, 3, 3))).shape == (0, 3, 3)


# --- errors ---------------------------------------------------------------------------------


def test_batched_shape_errors():
    c = np.tile(np.eye(3), (2, 1, 1))
    with pytest.raises(ValueError, match=r"c must be a 3-D array \(B, n, n\)"):
        la.batched_cholesky(np.eye(3))
    with pytest.raises(ValueError, match="square"):
        la.batched_cholesky(np.ones((2, 3, 4)))
    # empty batches and problems of order 0 give numpy's empty results (test_conventions.py)
    with pytest.raises(ValueError, match=r"shape mismatch: b must be \(2, 3\)"):
        la.batched_solve(c, np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"b must be a 2-D array"):
        la.batched_solve(c, np.ones(3))
    with pytest.raises(ValueError, match=r"shape mismatch: d must be \(2, 5\)"):
        la.batched_syrk(np.ones((2, 3, 5)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape mismatch: d must be \(2, 5\)"):
        la.batched_weighted_lstsq(np.ones((2, 5, 3)), np.ones((2, 3)), np.ones((2, 5)))
    with pytest.raises(ValueError, match=r"shape mismatch: b must be \(2, 5\)"):
        la.batched_weighted_lstsq(np.ones((2, 5, 3)), np.ones((2, 5)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="non-negative"):
        la.batched_weighted_lstsq(np.ones((1, 5, 3)), -np.ones((1, 5)), np.ones((1, 5)))
    with pytest.raises(TypeError, match="complex"):
        la.batched_cholesky(c.astype(complex))


def test_batched_non_finite_errors():
    c = np.tile(np.eye(3), (2, 1, 1))
    c[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.batched_cholesky(c)
    with pytest.raises(ValueError, match=r"non-finite value \(NaN\) at problem 1, row 2"):
        la.batched_cholesky(c, check_finite=False)
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.batched_solve(np.tile(np.eye(3), (2, 1, 1)), np.full((2, 3), np.inf))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.batched_syrk(np.full((1, 2, 2), np.inf), np.ones((1, 2)))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_finite_outside_each_matrixs_triangle(layout, dtype):
    """all_finite(stack, outside) reads, in every matrix of the stack, only the entries outside
    that triangle."""
    count, n = 3, 4
    for p in range(count):
        for i in range(n):
            for j in range(n):
                s = np.ones((count, n, n), dtype=dtype)
                s[p, i, j] = np.nan
                s = laid_out(s, layout)
                assert la._native.all_finite(s, "lower") == (j <= i), (p, i, j)
                assert la._native.all_finite(s, "upper") == (j >= i), (p, i, j)
    assert la._native.all_finite(np.empty((0, 3, 3), dtype=dtype), "lower")


@pytest.mark.parametrize("triangle", ["lower", "upper"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_finite_checks_in_one_pass(rng, triangle, lower, layout, dtype):
    """check_finite on batched_cholesky and batched_solve: a NaN in either triangle of one
    problem raises scipy's message (both triangles checked by the library's upload, which
    reads one). Unchecked, a NaN in the triangle not read passes unread (the results as without it),
    and one in the triangle read is the library's error naming its place."""
    n = 5
    c = spd_stack(rng, n, dtype=dtype)
    b = rng.standard_normal((B, n)).astype(dtype)
    bad = c.copy()
    bad[2, 3, 1] = np.nan
    if triangle == "upper":
        bad = bad.transpose(0, 2, 1).copy()
    bad = laid_out(bad, layout)
    calls = (lambda a, **k: la.batched_cholesky(a, lower=lower, **k),
             lambda a, **k: la.batched_solve(a, b, lower=lower, **k))
    for call in calls:
        with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
            call(bad)
        if (triangle == "lower") == lower:
            with pytest.raises(ValueError, match="holds a non-finite value"):
                call(bad, check_finite=False)
        else:
            got, want = call(bad, check_finite=False), call(laid_out(c, layout))
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_batched_limits():
    n = la.BATCH_MAX_ORDER + 1
    with pytest.raises(ValueError, match=f"up to {la.BATCH_MAX_ORDER}.*n = {n}"):
        la.batched_cholesky(np.tile(np.eye(n), (1, 1, 1)))
    with pytest.raises(ValueError, match=f"up to {la.BATCH_MAX_ORDER}"):
        la.batched_solve(np.tile(np.eye(n), (1, 1, 1)), np.ones((1, n)))
    c, b = np.tile(np.eye(2), (1, 1, 1)), np.ones((1, 2))
    with pytest.raises(ValueError, match="0 to 8 refinement steps, not 9"):
        la.batched_solve(c, b, refinement_steps=9)
    with pytest.raises(ValueError, match="0 or more"):
        la.batched_solve(c, b, refinement_steps=-1)
    with pytest.raises(TypeError, match="integer"):
        la.batched_weighted_lstsq(np.ones((1, 3, 2)), np.ones((1, 3)), np.ones((1, 3)),
                                  refinement_steps=1.5)


@pytest.mark.parametrize("name", ["a", "d", "b"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_lstsq_finite_checks_in_one_pass(name, value, dtype):
    """check_finite on batched_weighted_lstsq is the library's one pass over a, d and b, raised
    as scipy's error; unchecked, the library still refuses the value and names its place."""
    rng = np.random.default_rng(5)
    arrays = {"a": rng.standard_normal((6, 9, 4)).astype(dtype),
              "d": rng.uniform(0.5, 1.5, (6, 9)).astype(dtype),
              "b": rng.standard_normal((6, 9)).astype(dtype)}
    arrays[name].reshape(-1)[23] = value
    with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
        la.batched_weighted_lstsq(arrays["a"], arrays["d"], arrays["b"])
    unchecked = ("must be non-negative" if name == "d" and value < 0
                 else "holds a non-finite value")
    with pytest.raises(ValueError, match=unchecked):
        la.batched_weighted_lstsq(arrays["a"], arrays["d"], arrays["b"], check_finite=False)
    # Problems of order 0: nothing for the library to read, the weights and values still checked.
    if name != "a":
        empty = np.empty((6, 9, 0), dtype=dtype)
        with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
            la.batched_weighted_lstsq(empty, arrays["d"], arrays["b"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_batched_lstsq_negative_weights_are_refused_before_the_solves_errors(dtype, layout):
    """A negative weight is refused (the binding checks the weights' signs while the GPU
    solves) before any error of the solve, in every memory layout of d; a NaN weight is the
    finiteness check's, as numpy's minimum of weights holding a NaN is NaN."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((5, 9, 3)).astype(dtype)
    b = rng.standard_normal((5, 9)).astype(dtype)
    d = rng.uniform(0.5, 1.5, (5, 9)).astype(dtype)
    d[3, 4] = -0.25
    if layout == "F":
        d = np.asfortranarray(d)
    elif layout == "strided":
        d = np.repeat(d, 2, axis=1)[:, ::2]
    assert not d.flags.c_contiguous or layout == "C"
    for check in (True, False):
        with pytest.raises(ValueError, match="^weights d must be non-negative$"):
            la.batched_weighted_lstsq(a, d, b, check_finite=check)
    broken = a.copy()
    broken[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match="^weights d must be non-negative$"):
        la.batched_weighted_lstsq(broken, d, b)
    d_nan = np.array(d)
    d_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="^array must not contain infs or NaNs$"):
        la.batched_weighted_lstsq(a, d_nan, b)
    # The same stack with the weight mended solves, as test_batched_weighted_lstsq bounds it.
    d_ok = np.abs(d)
    x, info = la.batched_weighted_lstsq(a, d_ok, b)
    assert not info.any()
    for p in range(5):
        a64, d64 = a[p].astype(np.float64), d_ok[p].astype(np.float64)
        kappa = np.linalg.cond(a64.T @ (d64[:, None] * a64))
        bound = 4 * EPS32 if dtype == np.float32 else tol_factor(3, kappa)
        assert rel(x[p], weighted_reference(a[p], d_ok[p], b[p])) < bound, p
