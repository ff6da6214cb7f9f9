"""scipy's conventions: docstrings at run time, LstsqResult.fallback's names, LinAlgWarning where
scipy warns, messages in the caller's names and shapes, zero-size stacks as numpy's."""

import ast
import inspect
import pathlib
import warnings

import numpy as np
import pytest

import symraster as la


def spd_with_condition(n, condition, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    c = q @ np.diag(np.logspace(0, -np.log10(condition), n)) @ q.T
    return ((c + c.T) / 2).astype(dtype)


# --- 1. docstrings at run time -----------------------------------------------------------------


def test_every_public_function_and_class_has_a_docstring():
    for name in la.__all__:
        obj = getattr(la, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name


def test_docstrings_are_the_stubs():
    stub = pathlib.Path(la.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text("utf-8"))
    seen = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
            assert getattr(la, node.name).__doc__ == ast.get_docstring(node), node.name
            seen += 1
        elif isinstance(node, ast.ClassDef) and ast.get_docstring(node):
            cls = la._LinAlgWarning if node.name == "LinAlgWarning" else getattr(la, node.name)
            assert cls.__doc__.startswith(ast.get_docstring(node)), node.name
            seen += 1
    assert seen >= 20
    assert la.__doc__ == ast.get_docstring(tree)
    assert "Attributes" in la.LstsqResult.__doc__ and "fallback_at" in la.LstsqResult.__doc__
    assert la.Cholesky.solve.__doc__ and la.Cholesky.factor.__doc__
    assert "scipy.linalg.solve" in la.solve.__doc__


def test_help_shows_the_docstring():
    import pydoc
    assert "assume_a" in pydoc.render_doc(la.solve, renderer=pydoc.plaintext)


# --- 2. LstsqResult.fallback -------------------------------------------------------------------

FALLBACKS = {None, "stagnated", "iteration_limit", "single_factor_failed"}


def test_fallback_none_for_a_well_conditioned_problem(rng):
    x = rng.standard_normal((40, 5))
    r = la.weighted_lstsq(x, rng.standard_normal(40))
    assert r.fallback is None and r.fallback_at is None and not r.fallback_ran


def test_fallback_is_a_documented_name(rng):
    # two nearly equal columns: κ(xᵀx) ≈ 1e10, past what a float32 factor handles (packed
    # storage factors in float32; full storage at this order factors in float64 and needs no
    # fallback)
    x = rng.standard_normal((60, 6))
    x[:, 5] = x[:, 4] + 1e-5 * rng.standard_normal(60)
    y = rng.standard_normal(60)
    r = la.weighted_lstsq(x, y, storage="packed")
    assert r.fallback in FALLBACKS - {None}, r.fallback
    assert isinstance(r.fallback, str) and "{" not in r.fallback
    assert r.fallback_ran
    if r.fallback in ("stagnated", "single_factor_failed"):
        assert isinstance(r.fallback_at, int) and r.fallback_at >= 0
        if r.fallback == "single_factor_failed":
            assert r.fallback_at < x.shape[1]
    else:
        assert r.fallback_at is None
    np.testing.assert_allclose(r.x, np.linalg.lstsq(x, y, rcond=None)[0], rtol=1e-4)
    for name in FALLBACKS - {None}:
        assert f'"{name}"' in la.LstsqResult.__doc__
    assert f"fallback={r.fallback!r}" in repr(r)
    # full storage: the float64 factor solves it on the GPU
    full = la.weighted_lstsq(x, y)
    assert full.fallback is None and full.converged
    np.testing.assert_allclose(full.x, np.linalg.lstsq(x, y, rcond=None)[0], rtol=1e-4)


# --- 3. LinAlgWarning ------------------------------------------------------------------------------


def test_linalg_warning_is_scipys_where_scipy_is_installed():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    assert la.LinAlgWarning is scipy_linalg.LinAlgWarning
    assert issubclass(la.LinAlgWarning, RuntimeWarning)


def test_linalg_warning_without_scipy(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)  # import scipy.linalg fails
    cls = la.LinAlgWarning
    assert issubclass(cls, RuntimeWarning) and cls.__name__ == "LinAlgWarning"
    with pytest.warns(cls, match=r"Ill-conditioned matrix \(rcond="):
        la.solve(spd_with_condition(8, 1e10, dtype=np.float32), np.ones(8, np.float32),
                 assume_a="pos")


@pytest.mark.parametrize("b_shape", [(8,), (8, 3)])
def test_pos_solve_warns_for_an_ill_conditioned_float32_matrix(b_shape):
    # float32: scipy warns where rcond < eps32 ≈ 1.2e-7; κ ≈ 1e10 is well past it
    a = spd_with_condition(8, 1e10, dtype=np.float32)
    b = np.ones(b_shape, np.float32)
    with pytest.warns(la.LinAlgWarning, match=r"Ill-conditioned matrix \(rcond=.*\): result "
                                              r"may not be accurate\."):
        x = la.solve(a, b, assume_a="pos")
    assert x.dtype == np.float32 and x.shape == b_shape


def test_ill_conditioned_float64_pos_raises_where_scipy_warns():
    # κ ≈ 1e17 > 1/ε: scipy warns and returns; symraster's SPD solve refuses with a
    # NumericalError (never a silent wrong answer), in the caller's names
    a = spd_with_condition(6, 1e17)
    with pytest.raises(la.NumericalError, match=r"^a is singular to double precision") as e:
        la.solve(a, np.ones(6), assume_a="pos")
    assert "AD²Aᵀ" not in str(e.value) and "row rank" not in str(e.value)
    assert e.value.column is not None
    sl = pytest.importorskip("scipy.linalg")
    with pytest.warns(sl.LinAlgWarning):
        sl.solve(a, np.ones(6), assume_a="pos")


def test_general_solve_and_inv_warn_or_raise_when_ill_conditioned():
    a = spd_with_condition(6, 3e16)
    for call in (lambda: la.solve(a, np.ones(6)), lambda: la.inv(a),
                 lambda: la.solve(a, np.ones((6, 2)), assume_a="sym")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
            except la.NumericalError:
                continue  # refused: no silent wrong answer either
        assert any(issubclass(w.category, la.LinAlgWarning) for w in caught)


def test_inv_warns_for_an_ill_conditioned_float32_matrix():
    a = spd_with_condition(8, 1e9, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            la.inv(a)
        except la.NumericalError:
            return
    assert any(issubclass(w.category, la.LinAlgWarning) for w in caught)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("assume_a", [None, "sym", "pos"])
@pytest.mark.parametrize("b_shape", [(10,), (10, 3)])
def test_well_conditioned_solves_do_not_warn(dtype, assume_a, b_shape):
    a = spd_with_condition(10, 1e3, dtype=dtype)
    b = np.ones(b_shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = la.solve(a, b, assume_a=assume_a)
        la.inv(a, assume_a=assume_a if assume_a != "sym" else None)
    np.testing.assert_allclose(a.astype(np.float64) @ x, b, atol=1e-3)


# --- 4. messages in the caller's names -----------------------------------------------------------


def test_weighted_lstsq_shape_message_names_x(rng):
    # a 3x5 design (3 observations, 5 unknowns): the library's A is its 5x3 transpose
    with pytest.raises(la.NumericalError) as e:
        la.weighted_lstsq(rng.standard_normal((3, 5)), np.ones(3))
    message = str(e.value)
    assert message.startswith("the normal matrix xᵀ·diag(w)·x is singular: x is 3x5")
    assert "3 observations cannot determine 5 unknowns" in message
    assert "AD²Aᵀ" not in message and "A is" not in message


def test_weighted_lstsq_weights_message_names_w(rng):
    w = np.zeros(10)
    w[:2] = 1.0
    with pytest.raises(la.NumericalError, match=r"only 2 of the 10 weights w are non-zero, "
                                                r"fewer than the 4 unknowns \(columns of x\)"):
        la.weighted_lstsq(rng.standard_normal((10, 4)), np.ones(10), w)


def test_weighted_lstsq_rank_message_names_x(rng):
    x = rng.standard_normal((20, 4))
    x[:, 3] = x[:, 1]  # dependent columns: singular normal matrix
    with pytest.raises(la.NumericalError) as e:
        la.weighted_lstsq(x, rng.standard_normal(20))
    message = str(e.value)
    assert message.startswith("the normal matrix xᵀ·diag(w)·x is singular to double precision")
    assert "full column rank" in message and "of x" in message
    assert "AD²Aᵀ" not in message and "row rank" not in message
    assert e.value.column is not None


def test_weighted_lstsq_out_of_range_names_the_normal_matrix():
    x = np.ones((4, 2))
    x[3, 1] = 1e300  # C's diagonal spans more than float32's range
    with pytest.raises(la.NumericalError) as e:
        la.weighted_lstsq(x, np.ones(4))
    message = str(e.value)
    assert message.startswith("the normal matrix xᵀ·diag(w)·x leaves single precision's range")
    assert "scale the columns of x" in message
    assert "A·diag(d)" not in message and "rows of A" not in message


def test_weighted_lstsq_non_finite_names_x_in_its_own_shape():
    x = np.ones((4, 2))
    x[3, 1] = np.nan  # check_finite=False: the library finds it, in its transpose
    with pytest.raises(ValueError, match=r"input x holds a non-finite value \(NaN\) at row 3, "
                                         r"column 1 \(0-based\)"):
        la.weighted_lstsq(x, np.ones(4), check_finite=False)


# --- 5. zero-size stacks -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 0, 0), (0, 3, 3), (0, 0, 0), (2, 3, 0, 0), (0, 2, 2, 2)])
def test_cholesky_zero_size_stacks_as_numpy(shape):
    a = np.zeros(shape)
    expected = np.linalg.cholesky(a)
    for lower in (True, False):
        got = la.cholesky(a, lower=lower)
        assert got.shape == expected.shape and got.dtype == expected.dtype
    assert la.cholesky(np.zeros(shape, np.float32)).dtype == np.float32


@pytest.mark.parametrize("count, n", [(0, 3), (2, 0), (0, 0)])
def test_batched_zero_size_as_numpy(count, n):
    c = np.zeros((count, n, n))
    l, info = la.batched_cholesky(c)
    assert l.shape == np.linalg.cholesky(c).shape and info.shape == (count,)
    assert info.dtype == np.int32 and not info.any()
    b = np.zeros((count, n))
    x, info = la.batched_solve(c, b)
    assert x.shape == np.linalg.solve(c, b[..., None])[..., 0].shape == (count, n)
    assert info.shape == (count,) and not info.any()
    a = np.zeros((count, n, 4))
    s = la.batched_syrk(a, np.ones((count, 4)))
    assert s.shape == (a @ a.transpose(0, 2, 1)).shape
    x, info = la.batched_weighted_lstsq(np.zeros((count, 4, n)), np.ones((count, 4)),
                                        np.ones((count, 4)))
    assert x.shape == (count, n) and info.shape == (count,) and not info.any()


def test_batched_syrk_no_columns_is_zeros():
    s = la.batched_syrk(np.zeros((2, 3, 0)))
    assert s.shape == (2, 3, 3) and not s.any()


def test_batched_lstsq_without_observations_raises():
    with pytest.raises(ValueError, match="no observations"):
        la.batched_weighted_lstsq(np.zeros((2, 0, 3)), np.ones((2, 0)), np.ones((2, 0)))
