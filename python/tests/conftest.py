"""Shared helpers: seeded random problems and the tolerances of float32 results."""

import os
import zlib

import numpy as np
import pytest

# Sizes of every comparison: tiny, odd, even, around the kernels' tile widths, and one of
# several hundred (kept modest: CI runs on llvmpipe, a CPU renderer, on 2 cores).
SIZES = [1, 2, 3, 7, 16, 33, 64, 301]
SMALL_SIZES = [1, 2, 3, 7, 16, 33]
DTYPES = [np.float32, np.float64]


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name, so that each test's data is fixed
    (SYMRASTER_TEST_SEED=N varies every test's data, to look for unlucky inputs)."""
    seed = zlib.crc32(request.node.name.encode()) ^ int(os.environ.get("SYMRASTER_TEST_SEED", 0))
    return np.random.default_rng(seed)


def spd(rng, m, dtype=np.float64):
    """A well-conditioned SPD matrix (κ below about 10)."""
    g = rng.standard_normal((m, m))
    return (g @ g.T / m + np.eye(m)).astype(dtype)


def general(rng, m, dtype=np.float64):
    """A well-conditioned general matrix that needs pivoting (a permuted diagonal)."""
    p = np.eye(m)[rng.permutation(m)]
    return (p * 3 + rng.standard_normal((m, m)) / np.sqrt(m)).astype(dtype)


def stable(rng, m, dtype=np.float64):
    """A stable matrix (eigenvalues in the left half plane, well away from the axis)."""
    return (rng.standard_normal((m, m)) / np.sqrt(m) - 3 * np.eye(m)).astype(dtype)


def rel(x, y):
    """The relative error of x against the reference y (Frobenius norms, in float64)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    scale = np.linalg.norm(y)
    return np.linalg.norm(x - y) / (scale if scale > 0 else 1.0)


def tol32(m):
    """float32 results: a few ulps times a factor growing with the size."""
    return 64 * np.sqrt(m) * np.finfo(np.float32).eps


def tol(dtype, m, refined=True):
    """The tolerance of a result in `dtype`: float64 results that were refined in float64 are
    held to float64's accuracy, everything else to float32's."""
    if dtype == np.float64 and refined:
        return 1e3 * np.sqrt(m) * np.finfo(np.float64).eps
    return tol32(m)
