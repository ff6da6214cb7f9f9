"""signm, solve_continuous_lyapunov, syrk, weighted_lstsq, info, threads and panics."""

import concurrent.futures
import threading

import numpy as np
import pytest
import scipy.linalg as sla

import symraster as la
from conftest import DTYPES, SIZES, SMALL_SIZES, rel, spd, stable, tol, tol32


@pytest.mark.parametrize("m", SMALL_SIZES + [64])
@pytest.mark.parametrize("dtype", DTYPES)
def test_signm(rng, m, dtype):
    # eigenvalues well away from the imaginary axis on both sides
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    lam = rng.uniform(1, 4, m) * rng.choice([-1.0, 1.0], m)
    a = (q @ np.diag(lam) @ q.T + rng.standard_normal((m, m)) * 0.05 / np.sqrt(m)).astype(dtype)
    s = la.signm(a)
    want = sla.signm(a)
    # float32 in, float32 out; scipy's own signm returns float64 for float32 input whenever
    # its funm estimate is poor and it falls back to a Newton iteration, so its dtype depends
    # on the data
    assert s.dtype == dtype
    assert rel(s, want) < (1e-9 if dtype == np.float64 else 1e-4)
    s2, errest = la.signm(a, disp=False)
    assert np.array_equal(s2, s) and errest < 1e-6


def test_signm_on_the_axis():
    with pytest.raises(la.NumericalError):
        la.signm(np.array([[0.0, 1.0], [-1.0, 0.0]]))


@pytest.mark.parametrize("m", SMALL_SIZES + [64])
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_continuous_lyapunov(rng, m, dtype):
    a = stable(rng, m, dtype)
    g = rng.standard_normal((m, m))
    q = (g @ g.T).astype(dtype)
    x = la.solve_continuous_lyapunov(a, q)
    want = sla.solve_continuous_lyapunov(a, q)
    assert x.dtype == want.dtype
    assert rel(x, want) < (1e-9 if dtype == np.float64 else 1e-4)


def test_lyapunov_errors():
    with pytest.raises(ValueError):
        la.solve_continuous_lyapunov(np.eye(3), np.eye(2))
    with pytest.raises(la.NumericalError):
        la.solve_continuous_lyapunov(np.eye(3), np.eye(3))  # not stable


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", ["1", "half", "double"])
def test_syrk(rng, m, dtype, n):
    n = {"1": 1, "half": max(1, m // 2), "double": 2 * m}[n]
    a = rng.standard_normal((m, n)).astype(dtype)
    d = rng.uniform(0.5, 2.0, n).astype(dtype)
    c = la.syrk(a, d)
    want = np.tril((a.astype(np.float64) * d) @ a.T.astype(np.float64))
    assert c.dtype == dtype and c.shape == (m, m)
    assert rel(c, want) < tol32(n)
    assert not np.triu(c, 1).any()
    up = la.syrk(np.asfortranarray(a), lower=False)
    assert rel(up, np.triu(a.astype(np.float64) @ a.T.astype(np.float64))) < tol32(n)


def test_syrk_errors():
    with pytest.raises(ValueError, match="d needs 3"):
        la.syrk(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.syrk(np.array([[1.0, np.nan]]))


@pytest.mark.parametrize("m", [1, 2, 3, 7, 16, 33, 120])
@pytest.mark.parametrize("dtype", DTYPES)
def test_weighted_lstsq(rng, m, dtype):
    n = 3 * m + 2
    x = rng.standard_normal((n, m)).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    w = rng.uniform(0.1, 3.0, n).astype(dtype)
    r = la.weighted_lstsq(x, y, w)
    sw = np.sqrt(w.astype(np.float64))
    want = sla.lstsq(x.astype(np.float64) * sw[:, None], y * sw)[0]
    assert r.x.dtype == dtype and r.x.shape == (m,)
    assert rel(r.x, want) < tol(dtype, m)
    # The library's test is η ≤ √m·2⁻⁵³; at m = 1 rounding can leave η a hair above it
    # (1.13e-16 against 1.11e-16) with x right, and `converged` then says so honestly.
    assert r.backward_error < 1e-15 and (r.converged or m == 1)
    assert r.iterations >= 0
    assert r.condition > 0.99 and r.fallback_ran is (r.fallback is not None)


@pytest.mark.parametrize("m", [1, 3, 17, 63, 65, 130])
@pytest.mark.parametrize("square", [False, True])
def test_weighted_lstsq_reads_x_where_it_lies(rng, m, square):
    """x in C order, Fortran order, as rows of a wider array (NaN in the columns left out), and
    float32 in C and Fortran order: the same β to rounding, float64 accurate against scipy;
    reversed (a negative stride, copied) too."""
    n = m if square else 2 * m
    x = rng.standard_normal((n, m)) + (3.0 * np.eye(n, m) if square else 0.0)
    y = rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    sw = np.sqrt(w)
    want = sla.lstsq(x * sw[:, None], y * sw)[0]
    base = la.weighted_lstsq(x, y, w).x
    assert rel(base, want) < 1e-10
    wide = np.full((n, m + 3), np.nan)
    wide[:, 1:m + 1] = x
    for layout in (np.asfortranarray(x), wide[:, 1:m + 1], x[::-1][::-1]):
        assert rel(la.weighted_lstsq(layout, y, w).x, base) < 1e-14, layout.strides
    # The observations in reverse order: another order of summation, the same problem.
    assert rel(la.weighted_lstsq(x[::-1], y[::-1], w[::-1]).x, want) < 1e-10
    single = la.weighted_lstsq(x.astype(np.float32), y.astype(np.float32), w.astype(np.float32))
    fortran = la.weighted_lstsq(np.asfortranarray(x.astype(np.float32)), y.astype(np.float32),
                                w.astype(np.float32))
    assert single.x.dtype == np.float32 and np.array_equal(single.x, fortran.x)
    x32, y32, w32 = (v.astype(np.float32).astype(np.float64) for v in (x, y, w))
    want32 = sla.lstsq(x32 * np.sqrt(w32)[:, None], y32 * np.sqrt(w32))[0]
    assert rel(single.x, want32) < 1e-6


def test_weighted_lstsq_checks_x_once_with_scipys_message(rng):
    x = rng.standard_normal((8, 3))
    x[5, 2] = np.inf
    for layout in (x, np.asfortranarray(x)):
        with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
            la.weighted_lstsq(layout, np.ones(8))
        with pytest.raises(ValueError, match=r"input x holds a non-finite value \(inf\) at row 5, "
                                             r"column 2 \(0-based\)"):
            la.weighted_lstsq(layout, np.ones(8), check_finite=False)


def test_weighted_lstsq_errors(rng):
    with pytest.raises(ValueError, match="y needs 5"):
        la.weighted_lstsq(np.ones((5, 2)), np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        la.weighted_lstsq(np.ones((5, 2)), np.ones(5), -np.ones(5))
    with pytest.raises(la.NumericalError):  # fewer observations than unknowns
        la.weighted_lstsq(rng.standard_normal((2, 4)), np.ones(2))


def test_info_and_version():
    i = la.info()
    assert i["methods"] and i["auto"] == i["methods"][0]
    assert len(i["gl_version"]) == 2 and i["gl_version"][0] >= 3
    assert "GL_RENDERER" in str(i)
    assert isinstance(la.__version__, str) and la.__version__.count(".") == 2


def test_panic_becomes_exception():
    with pytest.raises(RuntimeError, match="panic"):
        la._native._panic_for_tests()
    assert la.cholesky(np.eye(2) * 4)[0, 0] == 2.0  # the worker lives on


def test_threads(rng):
    """Several Python threads at once: every answer right (one worker serves them in turn)."""
    problems = []
    for i in range(12):
        m = [5, 33, 64, 100][i % 4]
        problems.append((np.random.default_rng(i).standard_normal((m, m)), i))

    def work(problem):
        g, i = problem
        m = g.shape[0]
        a = g @ g.T / m + np.eye(m)
        b = np.arange(m, dtype=float)
        kind = i % 3
        if kind == 0:
            x = la.solve(a, b, assume_a="pos")
            return rel(x, np.linalg.solve(a, b)) < 1e-11
        if kind == 1:
            return rel(la.cholesky(a, lower=True), np.linalg.cholesky(a)) < tol32(m)
        with la.Cholesky(a) as f:
            return rel(f.solve(b), np.linalg.solve(a, b)) < 1e-11

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(work, problems * 2))
    assert all(results)
    assert threading.active_count() >= 1


def test_gil_released_during_gpu_work(rng):
    """While one native call runs on the worker, another Python thread keeps running for
    most of it (with the GIL held it would get at most one switch interval, 5 ms)."""
    import time

    from symraster import _native

    a = spd(rng, 301)
    done = threading.Event()
    ticks = [0]

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)
        start, before = time.perf_counter(), ticks[0]
        time.sleep(0.1)
        rate = (ticks[0] - before) / (time.perf_counter() - start)  # loops per second
        start, before = time.perf_counter(), ticks[0]
        _native.invert(a, True, False, "auto")  # one native call
        seconds, during = time.perf_counter() - start, ticks[0] - before
    finally:
        done.set()
        counter.join()
    assert seconds > 0.02, "the call is long enough to tell"
    assert during > 0.3 * rate * seconds, (
        f"the other thread ran {during} loops in {seconds:.3f} s, at {rate:.0f}/s alone")


def test_fork_after_use_refuses_clearly():
    """A child forked after the GPU opened gets DeviceError, never a hang."""
    import multiprocessing

    la.cholesky(np.eye(2))  # the worker has started in this process
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child(q):
        try:
            la.cholesky(np.eye(2))
            q.put("ran")
        except la.DeviceError as e:
            q.put(f"DeviceError: {e}")

    p = ctx.Process(target=child, args=(queue,))
    p.start()
    p.join(60)
    if p.exitcode is None:
        p.kill()
    assert p.exitcode == 0
    assert queue.get(timeout=5).startswith("DeviceError: this process was forked")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 255, 256, 257, 1000, (1 << 16) + 5, (1 << 18) + 3])
def test_all_finite_finds_a_non_finite_value_anywhere(dtype, n):
    """all_finite, tested in blocks and over all cores for large arrays, finds NaN and ±inf at
    the block edges, the first and the last value; the largest finite values are finite."""
    a = np.full(n, np.finfo(dtype).max, dtype)
    a[::2] *= -1
    assert la._native.all_finite(a)
    for at in {0, 255, 256, 257, (1 << 16) - 1, 1 << 16, n // 2, n - 1}:
        if at >= n:
            continue
        for value in (np.nan, np.inf, -np.inf):
            bad = a.copy()
            bad[at] = value
            assert not la._native.all_finite(bad), (at, value)
            assert not la._native.all_finite(bad[::-1]), (at, value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("triangle", [None, "lower", "upper"])
def test_norm_1_of_a_stored_triangle_matches_numpy(dtype, triangle):
    """‖a‖₁ (the condition check's norms) over all cores from the stored triangle alone, with
    garbage in the other, for C, Fortran and strided arrays."""
    rng = np.random.default_rng(11)
    m = 37
    a = rng.standard_normal((m, m))
    if triangle == "lower":
        full = np.tril(a) + np.tril(a, -1).T
    elif triangle == "upper":
        full = np.triu(a) + np.triu(a, 1).T
    else:
        full = a
    want = np.max(np.sum(np.abs(full), axis=0))
    held = a.copy()
    if triangle == "lower":
        held[np.triu_indices(m, 1)] = 1e30
    elif triangle == "upper":
        held[np.tril_indices(m, -1)] = 1e30
    for view in (held, np.asfortranarray(held), np.repeat(held, 2, axis=1)[:, ::2]):
        got = la._norm_1(view.astype(dtype), triangle)
        assert abs(got - want) <= 1e-5 * want
