"""The functions inside Dask and xarray: dask.array.map_blocks and xarray.apply_ufunc(...,
dask="parallelized") on the threaded scheduler and on a dask.distributed.LocalCluster of two
worker processes (one GPU context each, spawned by distributed's nanny), each giving exactly
the in-process result; the worker plugin that chooses each worker's device; the per-pixel
example at a tiny size. Skipped where dask, distributed or xarray are not installed
(``pip install symraster[dask]``; scripts/test installs them)."""

import pathlib
import sys

import numpy as np
import pytest

import symraster as la

da = pytest.importorskip("dask.array", reason="needs dask (pip install symraster[dask])")
dask = pytest.importorskip("dask")


def spd_stack(rng, count, n):
    g = rng.standard_normal((count, n, n))
    return g @ g.transpose(0, 2, 1) / n + np.eye(n)


def pixels(rng, shape, k=30, m=4):
    """A shared design (k observations, m unknowns) and a stack of observations and weights,
    a third of the weights zero."""
    t = np.linspace(0, 1, k)
    x = np.stack([t**j for j in range(m)], 1)
    y = rng.standard_normal(shape + (k,))
    w = rng.random(shape + (k,)) * (rng.random(shape + (k,)) > 0.3)
    return x, y, w


def solve_blocks(c, b):
    """The graph the tests compute: an SPD solve per chunk of a stack."""
    dc = da.from_array(c, chunks=(7, c.shape[1], c.shape[2]))
    db = da.from_array(b, chunks=(7, b.shape[1], b.shape[2]))
    return da.map_blocks(lambda ci, bi: la.solve(ci, bi, assume_a="pos"), dc, db,
                         dtype=np.float64)


def test_map_blocks_threads(rng):
    c = spd_stack(rng, 40, 6)
    b = rng.standard_normal((40, 6, 2))
    expected = la.solve(c, b, assume_a="pos")
    with dask.config.set(scheduler="threads"):
        got = solve_blocks(c, b).compute()
        factors = da.map_blocks(lambda ci: la.cholesky(ci, lower=True),
                                da.from_array(c, chunks=(9, 6, 6)), dtype=np.float64).compute()
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(factors, la.cholesky(c, lower=True))


def test_xarray_apply_ufunc(rng):
    xr = pytest.importorskip("xarray", reason="needs xarray (pip install symraster[dask])")
    x, y, w = pixels(rng, (12, 10))
    expected = la.weighted_lstsq(x, y, w).x
    obs = xr.DataArray(y, dims=("y", "x", "time")).chunk({"y": 5, "x": 4})
    weights = xr.DataArray(w, dims=("y", "x", "time")).chunk({"y": 5, "x": 4})
    fitted = xr.apply_ufunc(
        lambda yb, wb: la.weighted_lstsq(x, yb, wb).x, obs, weights,
        input_core_dims=[["time"], ["time"]], output_core_dims=[["coefficient"]],
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"coefficient": x.shape[1]}})
    with dask.config.set(scheduler="threads"):
        got = fitted.compute().values
    np.testing.assert_array_equal(got, expected)


def device_of_worker():
    import os

    return os.getpid(), la.info()["egl_device_index"]


def test_local_cluster_of_two_processes(rng):
    distributed = pytest.importorskip(
        "distributed", reason="needs dask.distributed (pip install symraster[dask])")
    from symraster.dask import DevicePerWorker

    c = spd_stack(rng, 40, 6)
    b = rng.standard_normal((40, 6, 2))
    expected = la.solve(c, b, assume_a="pos")  # this process's GPU context is open first
    device = la.info()["egl_device_index"]
    bad = c.copy()
    bad[23, 4, 4] = -1.0
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.register_plugin(DevicePerWorker([device]))
        got = solve_blocks(c, b).compute()
        workers = client.run(device_of_worker)
        # a failing member raises on the client as in-process, its index in its block
        with pytest.raises(la.NotPositiveDefiniteError) as e:
            solve_blocks(bad, b).compute()
    np.testing.assert_array_equal(got, expected)
    pids = {pid for pid, _ in workers.values()}
    assert len(pids) == 2 and not pids & {__import__("os").getpid()}
    assert {index for _, index in workers.values()} == {device}
    assert (e.value.problem, e.value.column) == (23 - 21, 4)


def test_worker_device():
    pytest.importorskip("distributed", reason="needs dask.distributed (pip install symraster[dask])")
    from symraster.dask import worker_device

    assert [worker_device(i, [0, 1]) for i in range(3)] == [0, 1, 0]
    assert worker_device("tcp-worker-3", [5, 6]) == 6
    with pytest.raises(ValueError, match="SYMRASTER_EGL_DEVICE"):
        worker_device("nameless", [0])


def test_harmonic_regression_example(tmp_path):
    """The per-pixel example at a tiny size: the fit agrees with numpy's per-pixel lstsq."""
    pytest.importorskip("xarray", reason="needs xarray (pip install symraster[dask])")
    examples = pathlib.Path(__file__).resolve().parents[1] / "examples"
    sys.path.insert(0, str(examples))
    try:
        import harmonic_regression
    finally:
        sys.path.remove(str(examples))
    out = tmp_path / "harmonics.png"
    result = harmonic_regression.main(
        ["--size", "16", "--times", "40", "--chunk", "8", "--check", "64", "--out", str(out)])
    assert result["error"] < 1e-10
    assert result["beta"].shape == (16, 16, 6)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert out.stat().st_size > 0


def test_multigpu_benchmark_two_workers():
    """python/benchmarks/multigpu.py's worker path at a tiny size: two worker processes on this
    process's device, each fitting the chunks placed on it, give exactly the in-process fit."""
    pytest.importorskip("distributed", reason="needs dask.distributed (pip install symraster[dask])")
    device = la.info()["egl_device_index"]
    # on the path while the workers start too: they unpickle the tasks' functions by reference
    benchmarks = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(benchmarks))
    try:
        import multigpu

        result = multigpu.main(
            ["--pixels", "96", "--times", "30", "--chunk", "24", "--check", "96",
             "--workers", "2", "--devices", str(device), "--repeat", "1",
             "--methods", "symraster_process,symraster_dask,torch_dask"])
    finally:
        sys.path.remove(str(benchmarks))
    rows = {(r[3], r[2]): dict(zip(multigpu.FIELDS, r)) for r in result["rows"]}
    beta = result["beta"]
    np.testing.assert_array_equal(beta[("symraster_dask", 2)], beta[("symraster_process", 0)])
    assert beta[("symraster_dask", 2)].shape == (96, 6)
    mine = rows[("symraster_dask", 2)]
    assert (mine["gpus"], float(mine["rel_err"]) < 1e-10) == (1, True)
    assert "4 tasks" in mine["note"] and "[%d, %d]" % (device, device) in mine["note"]
    assert ("torch_dask", 2) in rows          # a row either way: figures, or a note saying why
