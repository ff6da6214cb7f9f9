"""Stacks in the scipy-named functions and weighted_lstsq: arrays with leading (batch)
dimensions broadcast as numpy broadcasts them, with scipy's (≥ 1.15) shapes and dtypes.

The first part ports the cases of scipy's own batch tests (scipy/linalg/tests/test_batch.py:
cholesky, cho_factor, inv, solve and cho_solve, their shapes, data and checks) for real
dtypes: the stacked call against the member-by-member calls to scipy's rtol of 1e-7 (a small
float32 matrix alone is factored by the batched kernel as a stack of one, so the two agree
bit for bit) and scipy's shapes and dtypes, each member against scipy's (or numpy's) result
by relative error. Their complex cases are left out (symraster refuses complex input with
TypeError). The rest: orders on both sides of
BATCH_MAX_ORDER, broadcasting, float64 accuracy where the batched kernels' float32 is not
enough (equilibration, the per-member fallback), failing members (the exception naming the
member, or INFO with return_info=True), empty batches, dtypes and errors.

Members that run one at a time are the single function's own results (compared with it
exactly); the accuracy checked here against numpy is the batched path's."""

import pickle

import numpy as np
import pytest
import scipy
import scipy.linalg as sl

import symraster as la
from conftest import DTYPES, rel, spd, tol

SCIPY_BATCHES = tuple(int(v) for v in scipy.__version__.split(".")[:2]) >= (1, 15)


def scipy_rng():
    """The generator scipy's batch tests seed, so that the ported cases draw their data."""
    return np.random.default_rng(8342310302941288912051)


def random(rng, shape, dtype):
    """Uniform [0, 1) entries, as scipy's batch tests draw them."""
    return rng.random(shape).astype(dtype)


def symmetric(rng, shape, dtype, shift):
    """A + Aᵀ + shift·I for uniform A (drawn as scipy's Hermitian cases draw theirs, noise
    of size 0 included): SPD for shift ≥ the order."""
    a = rng.random(shape).astype(dtype)
    rng.standard_normal(size=shape)  # scipy's noise, times 0
    return a + np.swapaxes(a, -1, -2) + shift * np.eye(shape[-1], dtype=dtype)


def members(batch_shape):
    return list(np.ndindex(*batch_shape))


def assert_like_scipy(ours, theirs):
    """The same shape and dtype as scipy's batched result."""
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype


def close(x, reference, dtype, n, factor=1.0, refined=True):
    """x against the float64 reference within the accuracy its dtype promises."""
    return rel(x, reference) < factor * tol(np.dtype(dtype), n, refined)


def like_single(stacked, single, dtype):
    """A member of a stack against the single call on it to scipy's rtol of 1e-7 (float64:
    the same code, or float64-accurate both; float32: the same batched kernel)."""
    rtol = 1e-7
    np.testing.assert_allclose(stacked, single, rtol=rtol, atol=rtol * np.max(np.abs(single)))


# --- scipy's batch cases ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["cholesky", "cho_factor"])
def test_scipy_case_cholesky(dtype, name):
    a = symmetric(scipy_rng(), (5, 3, 4, 4), dtype, 4.0)
    ours = getattr(la, name)(a)
    by_keyword = getattr(la, name)(a=a)
    c = ours[0] if name == "cho_factor" else ours
    np.testing.assert_array_equal(c, by_keyword[0] if name == "cho_factor" else by_keyword)
    if name == "cho_factor":
        flags = ours[1]
        assert flags.shape == (5, 3) and flags.dtype == bool and not flags.any()
    for i in members((5, 3)):
        single = getattr(la, name)(a[i])
        like_single(np.triu(c[i]), np.triu(single[0] if name == "cho_factor" else single), dtype)
        ref = sl.cholesky(a[i].astype(np.float64))
        assert close(np.triu(c[i]), ref, dtype, 4, refined=False), i
        if name == "cho_factor":  # the other triangle keeps a's entries, as scipy's
            np.testing.assert_array_equal(np.tril(c[i], -1), np.tril(a[i], -1))
    if SCIPY_BATCHES:
        theirs = getattr(sl, name)(a)
        assert_like_scipy(c, theirs[0] if name == "cho_factor" else theirs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scipy_case_inv(dtype):
    a = random(scipy_rng(), (5, 3, 4, 4), dtype)
    x = la.inv(a)
    np.testing.assert_array_equal(x, la.inv(a=a))
    for i in members((5, 3)):
        single = la.inv(a[i])
        like_single(x[i], single, dtype)
        assert x[i].shape == single.shape
    if SCIPY_BATCHES:
        assert_like_scipy(x, sl.inv(a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bdim", [(5,), (5, 4), (2, 3, 5, 4)])
@pytest.mark.parametrize("assume_a", [None, "pos"])
def test_scipy_case_solve(dtype, bdim, assume_a):
    """scipy's case (general a) and the same with an SPD a and assume_a="pos"."""
    rng = scipy_rng()
    if assume_a == "pos":
        a = symmetric(rng, (2, 3, 5, 5), dtype, 5.0)
    else:
        a = random(rng, (2, 3, 5, 5), dtype)
    b = random(rng, bdim, dtype)
    x = la.solve(a, b, assume_a=assume_a)
    np.testing.assert_array_equal(x, la.solve(a=a, b=b, assume_a=assume_a))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    b2 = b64[..., None] if len(bdim) == 1 else b64
    x2 = x[..., None] if len(bdim) == 1 else x
    ref = np.linalg.solve(a64, b2)
    # scipy's checks: the residual and numpy's solution, absolutely
    np.testing.assert_allclose(a64 @ x2 - b2, 0, atol=2e-6)
    np.testing.assert_allclose(x2, ref, atol=3e-6)
    ref = ref[..., 0] if len(bdim) == 1 else ref
    for i in members((2, 3)):
        kappa = np.linalg.cond(a64[i], 1)
        if assume_a == "pos":  # the batched path's own accuracy
            assert close(x[i], ref[i], dtype, 5, kappa), i
        else:  # one member at a time: the single function's result
            bi = b if len(bdim) < 4 else b[i]
            like_single(x[i], la.solve(a[i], bi, assume_a=assume_a), dtype)
    if SCIPY_BATCHES:
        assert_like_scipy(x, sl.solve(a, b, assume_a=assume_a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bdim", [(5,), (5, 4), (2, 3, 5, 4)])
def test_scipy_case_cho_solve(dtype, bdim):
    rng = scipy_rng()
    a = symmetric(rng, (2, 3, 5, 5), dtype, 5.0)
    c_and_lower = la.cho_factor(a)
    b = random(rng, bdim, dtype)
    x = la.cho_solve(c_and_lower, b)
    np.testing.assert_array_equal(x, la.cho_solve(c_and_lower=c_and_lower, b=b))
    a64 = a.astype(np.float64)
    b2 = b.astype(np.float64)[..., None] if len(bdim) == 1 else b.astype(np.float64)
    x2 = x[..., None] if len(bdim) == 1 else x
    # scipy's checks: the residual and numpy's solution, absolutely
    np.testing.assert_allclose(a64 @ x2 - b2, 0, atol=1e-6)
    ref = np.linalg.solve(a64, b2)
    np.testing.assert_allclose(x2, ref, atol=2e-6)
    ref = ref[..., 0] if len(bdim) == 1 else ref
    c, lower = c_and_lower
    for i in members((2, 3)):
        bi = b if len(bdim) < 4 else b[i]
        single = la.cho_solve((c[i], bool(lower[i])), bi)
        if dtype == np.float32:  # the batched path: float32's accuracy for the factor's L·Lᵀ
            l = np.triu(c[i]).astype(np.float64)
            exact = np.linalg.solve(l.T @ l, b2[i] if len(bdim) == 4 else b2)
            assert close(x2[i], exact, dtype, 5, 10), i
        else:
            like_single(x[i], single, dtype)
    if SCIPY_BATCHES:
        assert_like_scipy(x, sl.cho_solve(sl.cho_factor(a), b))
    # scipy's factors work too (their flags, an array of the batch shape)
    x3 = la.cho_solve(sl.cho_factor(a64), b.astype(np.float64))
    assert rel(x3, ref) < tol(np.float64, 5) * 10


# --- orders, broadcasting, layouts ---------------------------------------------------------


def spd_stack(rng, shape, n, kappa=10.0, dtype=np.float64):
    """SPD matrices of condition κ (eigenvalues log-spaced over [1, κ])."""
    count = int(np.prod(shape))
    q, _ = np.linalg.qr(rng.standard_normal((count, n, n)))
    ev = np.logspace(0, np.log10(kappa), n)
    c = (q * ev) @ np.swapaxes(q, -1, -2)
    c = (c + np.swapaxes(c, -1, -2)) / 2
    return c.reshape(shape + (n, n)).astype(dtype)


@pytest.mark.parametrize("n", [1, 3, 8, 33, la.BATCH_MAX_ORDER + 1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pos_solve_orders(rng, n, dtype):
    """Both sides of BATCH_MAX_ORDER (the batched kernels below, one member at a time past
    it), both triangles."""
    count = 2 if n > 64 else 5
    a = spd_stack(rng, (count,), n, 100.0, dtype)
    b = rng.standard_normal((count, n, 2)).astype(dtype)
    for lower in (False, True):
        half = np.tril(a) if lower else np.triu(a)  # the other triangle is not read
        x = la.solve(half, b, assume_a="pos", lower=lower)
        assert x.dtype == dtype and x.shape == b.shape
        for p in range(count):
            ref = np.linalg.solve(a[p].astype(np.float64), b[p].astype(np.float64))
            assert close(x[p], ref, dtype, n, 100), (p, lower)


def test_broadcasting(rng):
    """Leading dimensions broadcast as numpy's: a (3, 1, n, n) with b (1, 4, n, k)."""
    n = 4
    a = spd_stack(rng, (3, 1), n)
    b = rng.standard_normal((1, 4, n, 2))
    x = la.solve(a, b, assume_a="pos")
    assert x.shape == (3, 4, n, 2)
    ref = np.linalg.solve(a, b)
    assert rel(x, ref) < tol(np.float64, n)
    # a 2-D a shared by a stack of right sides
    x = la.solve(a[0, 0], b, assume_a="pos")
    assert x.shape == (1, 4, n, 2) and rel(x, np.linalg.solve(a[0, 0], b)) < tol(np.float64, n)
    with pytest.raises(ValueError):
        la.solve(a, np.ones((2, 5, n, 1)), assume_a="pos")  # batch shapes that don't broadcast


@pytest.mark.parametrize("assume_a", [None, "sym", "pos"])
def test_solve_structures(rng, assume_a):
    n = 6
    a = spd_stack(rng, (4,), n)
    b = rng.standard_normal((4, n, 3))
    x = la.solve(a, b, assume_a=assume_a, lower=True)
    assert rel(x, np.linalg.solve(a, b)) < tol(np.float64, n)
    g = a + rng.standard_normal(a.shape)
    xt = la.solve(g, b, transposed=True)
    assert rel(xt, np.linalg.solve(np.swapaxes(g, -1, -2), b)) < tol(np.float64, n, ) * 100


@pytest.mark.parametrize("dtype", DTYPES)
def test_inv_pos_and_general(rng, dtype):
    for n in (3, 20):  # the batched kernels solve for I's columns up to 16, one at a time past
        a = spd_stack(rng, (2, 3), n, 50.0, dtype)
        for assume_a in (None, "pos"):
            x = la.inv(a, assume_a=assume_a)
            assert x.shape == a.shape and x.dtype == dtype
            if assume_a == "pos" and n <= 16:  # the batched path's own accuracy
                assert close(x, np.linalg.inv(a.astype(np.float64)), dtype, n, 50), n
            else:
                for i in members((2, 3)):
                    like_single(x[i], la.inv(a[i], assume_a=assume_a), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_orders(rng, dtype):
    for n in (2, 17, la.BATCH_MAX_ORDER + 1):
        a = spd_stack(rng, (2,), n, 10.0, dtype)
        for lower in (False, True):
            f = la.cholesky(a, lower=lower)
            ref = np.linalg.cholesky(a.astype(np.float64))
            ref = ref if lower else np.swapaxes(ref, -1, -2)
            assert close(f, ref, dtype, n, 10, refined=False), n
            for p in range(2):
                like_single(f[p], la.cholesky(a[p], lower=lower), dtype)


def test_cho_factor_flags_and_overwrite(rng):
    a = spd_stack(rng, (2, 2), 5)
    c, lower = la.cho_factor(a, lower=True)
    assert lower.shape == (2, 2) and lower.all()
    b = rng.standard_normal((2, 2, 5))
    x = la.cho_solve((c, lower), b[..., None])[..., 0]
    for i in members((2, 2)):
        like_single(x[i], la.cho_solve((c[i], True), b[i]), np.float64)
    # flags that differ by member: each member's triangle as its flag says
    u, _ = la.cho_factor(a, lower=False)
    mixed = np.where(np.array([[True], [False]])[..., None, None], c, u)
    flags = np.array([[True, True], [False, False]])
    x = la.cho_solve((mixed, flags), b[..., None])[..., 0]
    for i in members((2, 2)):
        like_single(x[i], la.cho_solve((mixed[i], bool(flags[i])), b[i]), np.float64)
    given = a.copy()
    c2, _ = la.cho_factor(given, overwrite_a=True)
    assert c2 is given


# --- float64 accuracy beyond the batched kernels' float32 --------------------------------------


def test_pos_solve_float64_accuracy_past_float32(rng):
    """Members the float32 factor cannot refine (condition 1e9, near float32's 1/ε) or that
    are graded over 1e12 are solved to float64 accuracy (the single path's fallback, or the
    batched solve of the equilibrated matrix)."""
    n = 12
    a = spd_stack(rng, (4,), n, 10.0)
    a[1] = spd_stack(rng, (1,), n, 1e9)[0]
    d = np.logspace(-6, 6, n)
    a[2] = a[2] * d[:, None] * d[None, :]
    b = rng.standard_normal((4, n, 1))
    x = la.solve(a, b, assume_a="pos")
    for p in range(4):
        e = d if p == 2 else np.ones(n)  # the graded member's reference from its scaled form
        ref = np.linalg.solve(a[p] / e[:, None] / e[None, :], b[p] / e[:, None]) / e[:, None]
        kappa = np.linalg.cond(a[p], 1) if p == 1 else 10.0
        assert rel(x[p], ref) < 10 * kappa * n * np.finfo(np.float64).eps, p


def test_weighted_lstsq_stack(rng):
    """Per-pixel fits: one design shared by a stack of observations and weights (zeros where
    a pixel is clouded), against numpy's lstsq per member."""
    k, m = 40, 5
    t = np.linspace(0, 1, k)
    x = np.stack([np.ones(k), t, np.cos(2 * np.pi * t), np.sin(2 * np.pi * t), t * t], 1)
    y = rng.standard_normal((3, 4, k))
    w = rng.random((3, 4, k)) * (rng.random((3, 4, k)) > 0.3)
    r = la.weighted_lstsq(x, y, w)
    assert isinstance(r, la.StackedLstsqResult)
    assert r.x.shape == (3, 4, m) and r.x.dtype == np.float64
    assert r.backward_error.shape == (3, 4) and r.converged.all()
    for i in members((3, 4)):
        s = np.sqrt(w[i])
        ref = np.linalg.lstsq(x * s[:, None], y[i] * s, rcond=None)[0]
        assert rel(r.x[i], ref) < tol(np.float64, m) * np.linalg.cond(x * s[:, None]) ** 2
    # a stack of designs, no weights; float32 in, float32 out
    xs = rng.standard_normal((6, k, m)).astype(np.float32)
    ys = rng.standard_normal((6, k)).astype(np.float32)
    r = la.weighted_lstsq(xs, ys)
    assert r.x.dtype == np.float32 and r.x.shape == (6, m)
    for p in range(6):
        ref = np.linalg.lstsq(xs[p].astype(np.float64), ys[p].astype(np.float64), rcond=None)[0]
        assert rel(r.x[p], ref) < tol(np.float32, m), p
    # past BATCH_MAX_ORDER unknowns: one member at a time
    big = la.BATCH_MAX_ORDER + 1
    xb = rng.standard_normal((2, big + 10, big))
    yb = rng.standard_normal((2, big + 10))
    r = la.weighted_lstsq(xb, yb)
    assert r.single.all() and r.converged.all()
    for p in range(2):
        assert rel(r.x[p], np.linalg.lstsq(xb[p], yb[p], rcond=None)[0]) < 1e-10


def test_weighted_lstsq_unknowns_in_different_units(rng):
    """Columns of x over 1e-4 to 1e4 (unknowns in different units): equilibrated, solved to
    float64 accuracy on the batched path."""
    k, m = 30, 4
    x = rng.standard_normal((3, k, m)) * np.logspace(-4, 4, m)
    y = rng.standard_normal((3, k))
    r = la.weighted_lstsq(x, y)
    assert not r.single.any() and r.converged.all()
    for p in range(3):
        ref = np.linalg.lstsq(x[p], y[p], rcond=None)[0]
        s = np.logspace(-4, 4, m)
        assert rel(r.x[p] * s, ref * s) < tol(np.float64, m) * 100, p


# --- failing members -------------------------------------------------------------------------


def indefinite_at(a, where, column):
    a[where][column, column] = -1.0
    return a


@pytest.mark.parametrize("dtype", DTYPES)
def test_failing_member_raises_naming_it(rng, dtype):
    n = 6
    a = spd_stack(rng, (2, 3), n, 10.0, dtype)
    indefinite_at(a, (1, 2), 3)
    b = np.ones(n, dtype=dtype)
    for call in (lambda: la.solve(a, b, assume_a="pos"), lambda: la.cholesky(a),
                 lambda: la.cho_factor(a, lower=True), lambda: la.inv(a, assume_a="pos")):
        with pytest.raises(la.NotPositiveDefiniteError, match=r"matrix \(1, 2\) of the stack") as e:
            call()
        assert isinstance(e.value, np.linalg.LinAlgError)
        assert (e.value.problem, e.value.column) == ((1, 2), 3)
        copy = pickle.loads(pickle.dumps(e.value))  # as Dask carries it back from a worker
        assert (copy.problem, copy.column, str(copy)) == ((1, 2), 3, str(e.value))


def test_return_info(rng):
    n = 5
    a = spd_stack(rng, (4,), n)
    indefinite_at(a, (2,), 1)
    b = rng.standard_normal((4, n))
    x, info = la.solve(a, b[..., None], assume_a="pos", return_info=True)
    assert info.dtype == np.int32 and info.tolist() == [0, 0, 2, 0]
    assert np.isnan(x[2]).all()
    good = [0, 1, 3]
    assert rel(x[good, :, 0], np.linalg.solve(a[good], b[good][..., None])[..., 0]) < tol(
        np.float64, n)
    f, info = la.cholesky(a, return_info=True)
    assert info.tolist() == [0, 0, 2, 0] and np.isnan(f[2]).all()
    (c, lower), info = la.cho_factor(a, return_info=True)
    assert info.tolist() == [0, 0, 2, 0] and lower.shape == (4,)
    inverse, info = la.inv(a, assume_a="pos", return_info=True)
    assert info.tolist() == [0, 0, 2, 0] and np.isnan(inverse[2]).all()
    # a singular general member: INFO names its column
    g = spd_stack(rng, (3,), n)
    g[1] = 0.0
    inverse, info = la.inv(g, return_info=True)
    assert info[1] != 0 and info[[0, 2]].tolist() == [0, 0] and np.isnan(inverse[1]).all()
    # one 2-D problem: INFO of shape ()
    x, info = la.solve(a[2], b[2], assume_a="pos", return_info=True)
    assert info.shape == () and int(info) == 2 and np.isnan(x).all()
    x, info = la.solve(a[0], b[0], assume_a="pos", return_info=True)
    assert int(info) == 0 and rel(x, np.linalg.solve(a[0], b[0])) < tol(np.float64, n)


def test_weighted_lstsq_failing_member(rng):
    k, m = 12, 3
    x = rng.standard_normal((k, m))
    y = rng.standard_normal((2, 3, k))
    w = np.ones((2, 3, k))
    w[0, 1, 2:] = 0.0  # two observations for three unknowns
    with pytest.raises(la.NumericalError) as e:
        la.weighted_lstsq(x, y, w)
    assert e.value.problem == (0, 1) and "problem (0, 1) of the stack" in str(e.value)
    copy = pickle.loads(pickle.dumps(e.value))
    assert copy.problem == (0, 1)
    r, info = la.weighted_lstsq(x, y, w, return_info=True)
    assert info.shape == (2, 3) and info[0, 1] != 0 and np.count_nonzero(info) == 1
    assert np.isnan(r.x[0, 1]).all() and np.isfinite(np.delete(r.x.reshape(6, m), 1, 0)).all()
    # a design without full column rank (two equal columns) in one member: singular, however
    # consistent its right side is
    xs = np.repeat(x[None], 4, axis=0)
    xs[2, :, 2] = xs[2, :, 1]
    with pytest.raises(la.NumericalError) as e:
        la.weighted_lstsq(xs, y[0, 0])
    assert e.value.problem == 2


# --- empty stacks, dtypes, errors -----------------------------------------------------------------


def test_empty_stacks():
    assert la.solve(np.zeros((0, 3, 3)), np.ones(3)).shape == (0, 3)
    assert la.solve(np.zeros((2, 3, 3)), np.ones((2, 3, 0))).shape == (2, 3, 0)
    x, info = la.solve(np.zeros((0, 3, 3)), np.ones((0, 3, 1)), return_info=True)
    assert x.shape == (0, 3, 1) and info.shape == (0,)
    assert la.inv(np.zeros((2, 0, 0))).shape == (2, 0, 0)
    assert la.cholesky(np.zeros((0, 3, 3))).shape == (0, 3, 3)
    c, lower = la.cho_factor(np.zeros((0, 2, 2)))
    assert c.shape == (0, 2, 2) and lower.shape == (0,)
    assert la.cho_solve((np.zeros((0, 2, 2)), False), np.ones(2)).shape == (0, 2)
    r = la.weighted_lstsq(np.zeros((0, 4, 2)), np.zeros((0, 4)))
    assert r.x.shape == (0, 2)


def test_dtypes(rng):
    a = spd_stack(rng, (2,), 3)
    b = np.ones((2, 3, 1))
    assert la.solve(a.astype(np.float32), b.astype(np.float32), assume_a="pos").dtype == np.float32
    assert la.solve(a.astype(np.float32), b, assume_a="pos").dtype == np.float64
    assert la.solve(np.round(a * 10).astype(np.int64), b.astype(np.int32)).dtype == np.float64
    assert la.inv(a.astype(np.float16)).dtype == np.float32
    assert la.cholesky(a.astype(np.float32)).dtype == np.float32
    with pytest.raises(TypeError, match="complex"):
        la.solve(a.astype(np.complex128), b)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        la.solve(np.ones((2, 3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="incompatible shapes"):
        la.solve(np.ones((2, 3, 3)), np.ones((2, 4, 1)))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.solve(np.full((2, 2, 2), np.nan), np.ones(2))
    with pytest.raises(ValueError, match="square"):
        la.inv(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="incompatible dimensions"):
        la.cho_solve((np.ones((2, 3, 3)), False), np.ones(4))
    with pytest.raises(ValueError, match="shape mismatch"):
        la.weighted_lstsq(np.ones((2, 5, 2)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="non-negative"):
        la.weighted_lstsq(np.ones((2, 5, 2)), np.ones((2, 5)), -np.ones((2, 5)))
    with pytest.raises(NotImplementedError):
        la.solve(np.ones((2, 3, 3)), np.ones(3), assume_a="banded")
