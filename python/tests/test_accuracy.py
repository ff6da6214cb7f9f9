"""float64 in, float64-accurate out: every scipy-named function against scipy on SPD matrices
of condition up to 1e12, random and graded (rows and columns in different units), by forward
error (or residual, for factors and inverses) within 10x of scipy's own."""

import numpy as np
import pytest
import scipy.linalg as sla

import symraster as la

CONDITIONS = [1e2, 1e6, 1e9, 1e12]


def spd(m, condition, seed, graded=False):
    """Q·diag(λ)·Qᵀ with λ log-spaced from 1 to ``condition``; graded: D·C·D with D spanning
    1e-4..1e4."""
    r = np.random.default_rng(seed)
    q, _ = np.linalg.qr(r.standard_normal((m, m)))
    c = (q * np.logspace(0, np.log10(condition), m)) @ q.T
    c = (c + c.T) / 2
    if graded:
        d = np.logspace(-4, 4, m)
        c = d[:, None] * c * d[None, :]
    return c


def forward(x, reference):
    """max |x − x*| / max |x*| (max-norms: no overflow for entries near f64's largest)."""
    return np.max(np.abs(x - reference)) / np.max(np.abs(reference))


def _cases():
    for condition in CONDITIONS:
        for graded in (False, True):
            yield pytest.param(condition, graded, id=f"cond{condition:.0e}-{'graded' if graded else 'random'}")


CASES = list(_cases())


def exact_solution(c, b):
    """x in extended care: the float64 solution refined once with a residual in long double
    where numpy has it (the yardstick both libraries are measured against)."""
    x = sla.solve(c, b, assume_a="pos")
    r = (b.astype(np.longdouble) - c.astype(np.longdouble) @ x.astype(np.longdouble))
    return x + sla.solve(c, r.astype(np.float64), assume_a="pos")


def within_ten_of_scipy(ours, scipys, floor=1e-15):
    return ours <= 10 * max(scipys, floor)


@pytest.mark.parametrize("condition,graded", CASES)
def test_solve_pos(condition, graded):
    m = 100
    c = spd(m, condition, 1, graded)
    b = np.random.default_rng(2).standard_normal(m)
    x_true = exact_solution(c, b)
    ours = forward(la.solve(c, b, assume_a="pos"), x_true)
    scipys = forward(sla.solve(c, b, assume_a="pos"), x_true)
    assert within_ten_of_scipy(ours, scipys), (ours, scipys)


@pytest.mark.parametrize("condition,graded", CASES)
def test_cho_factor_then_cho_solve(condition, graded):
    m = 100
    c = spd(m, condition, 3, graded)
    b = np.random.default_rng(4).standard_normal((m, 2))
    x_true = np.column_stack([exact_solution(c, b[:, j]) for j in range(2)])
    for lower in (False, True):
        ours = forward(la.cho_solve(la.cho_factor(c, lower=lower), b), x_true)
        scipys = forward(sla.cho_solve(sla.cho_factor(c, lower=lower), b), x_true)
        assert within_ten_of_scipy(ours, scipys), (lower, ours, scipys)
    # A factor from scipy through our cho_solve, and ours through scipy's.
    ours = forward(la.cho_solve(sla.cho_factor(c), b), x_true)
    theirs = forward(sla.cho_solve(la.cho_factor(c), b), x_true)
    scipys = forward(sla.cho_solve(sla.cho_factor(c), b), x_true)
    assert within_ten_of_scipy(ours, scipys) and within_ten_of_scipy(theirs, scipys)


@pytest.mark.parametrize("condition,graded", CASES)
def test_cholesky_factor_itself(condition, graded):
    m = 100
    c = spd(m, condition, 5, graded)
    for lower in (False, True):
        f = la.cholesky(c, lower=lower)
        assert f.dtype == np.float64
        l = f if lower else f.T
        ours = np.linalg.norm(l @ l.T - c) / np.linalg.norm(c)
        s = sla.cholesky(c, lower=True)
        scipys = np.linalg.norm(s @ s.T - c) / np.linalg.norm(c)
        assert within_ten_of_scipy(ours, scipys, floor=1e-16), (ours, scipys)


@pytest.mark.parametrize("condition,graded", CASES)
def test_inv_pos(condition, graded):
    m = 100
    c = spd(m, condition, 6, graded)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = la.inv(c, assume_a="pos")
            s = sla.inv(c)
    ours = np.linalg.norm(c @ x - np.eye(m)) / condition
    scipys = np.linalg.norm(c @ s - np.eye(m)) / condition
    assert within_ten_of_scipy(ours, scipys, floor=1e-16), (ours, scipys)


@pytest.mark.parametrize("condition", [1e2, 1e6, 1e10])
def test_cholesky_object_solve(condition):
    m = 100
    c = spd(m, condition, 7)
    b = np.random.default_rng(8).standard_normal(m)
    x_true = exact_solution(c, b)
    with la.Cholesky(c) as f:
        ours = forward(f.solve(b), x_true)
        l = f.factor
    scipys = forward(sla.cho_solve(sla.cho_factor(c), b), x_true)
    assert within_ten_of_scipy(ours, scipys), (ours, scipys)
    s = sla.cholesky(c)
    assert np.linalg.norm(l - s) <= 1e-10 * np.linalg.norm(s) * max(1, condition / 1e6)


def test_float32_keeps_float32_semantics():
    c = spd(40, 1e2, 9).astype(np.float32)
    assert la.cholesky(c).dtype == np.float32
    c_and_lower = la.cho_factor(c)
    assert c_and_lower[0].dtype == np.float32
    b = np.ones(40, dtype=np.float32)
    x = la.cho_solve(c_and_lower, b)
    assert x.dtype == np.float32
    x_true = np.linalg.solve(c.astype(np.float64), b.astype(np.float64))
    assert forward(x, x_true) < 1e-4


def test_an_spd_matrix_beyond_float32_factors_in_float64():
    # Order 30, smallest eigenvalue 1, condition 1e9: the float32 factor fails, scipy's works.
    c = spd(30, 1e9, 10)
    l = la.cholesky(c, lower=True)
    assert np.linalg.norm(l @ l.T - c) <= 1e-13 * np.linalg.norm(c)
    # "Not positive definite" for float32 input only where its values are not SPD in float64;
    # else a factor, or an error that says float32 is the reason.
    for seed in range(10, 16):
        c32 = spd(30, 1e8, seed).astype(np.float32)
        try:
            np.linalg.cholesky(c32.astype(np.float64))
            spd_in_float64 = True
        except np.linalg.LinAlgError:
            spd_in_float64 = False
        try:
            la.cholesky(c32)
        except la.NotPositiveDefiniteError:
            assert not spd_in_float64, seed
        except la.NumericalError as e:
            assert spd_in_float64 and "too ill-conditioned to factor in float32" in str(e), seed


def test_two_right_sides_of_a_tiny_matrix_solve_as_one_does():
    c = spd(8, 10.0, 11) * 1e-300
    b = np.random.default_rng(12).standard_normal((8, 2))
    x = la.solve(c, b, assume_a="pos")
    want = np.column_stack([la.solve(c, b[:, j], assume_a="pos") for j in range(2)])
    assert forward(x, want) < 1e-13
    assert forward(x, sla.solve(c, b, assume_a="pos")) < 1e-12


@pytest.mark.parametrize("layout", ["C", "F", "strided", "wide-rows"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_pos_reads_the_named_triangle_in_any_layout(layout, lower):
    m = 37
    c = spd(m, 1e3, 20)
    b = np.random.default_rng(21).standard_normal(m)
    # NaN in the triangle not named: it must never be read.
    stored = np.tril(c) if lower else np.triu(c)
    stored[~(np.tri(m, dtype=bool) if lower else np.tri(m, dtype=bool).T)] = np.nan
    if layout == "F":
        a = np.asfortranarray(stored)
    elif layout == "strided":
        big = np.full((m, 2 * m), np.inf)
        big[:, ::2] = stored
        a = big[:, ::2]  # columns two apart: copied, not lent
    elif layout == "wide-rows":
        big = np.full((m, m + 5), np.inf)
        big[:, :m] = stored
        a = big[:, :m]  # rows m + 5 apart: lent as they lie
    else:
        a = stored
    x = la.solve(a, b, lower=lower, assume_a="pos", check_finite=False)
    assert forward(x, exact_solution(c, b)) < 1e-12


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_a_non_finite_entry_is_named_where_the_caller_put_it(layout, lower):
    m = 6
    a = spd(m, 10.0, 22)
    i, j = (4, 1) if lower else (1, 4)
    a[i, j] = np.inf
    a = np.asfortranarray(a) if layout == "F" else a
    with pytest.raises(ValueError, match=rf"row {i}, column {j}"):
        la.solve(a, np.ones(m), lower=lower, assume_a="pos", check_finite=False)
