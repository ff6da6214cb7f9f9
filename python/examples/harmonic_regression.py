"""Per-pixel weighted harmonic regression of an image time series, with xarray and Dask.

A satellite revisits a scene every few days for two years. Each pixel's reflectance follows a
seasonal cycle: a mean, a linear trend and annual and semi-annual harmonics,

    y(t) = β₀ + β₁·t + β₂·cos(2πt) + β₃·sin(2πt) + β₄·cos(4πt) + β₅·sin(4πt)   (t in years),

whose coefficients vary smoothly across the scene. Clouds hide part of every acquisition (their
pixels read bright garbage): they get weight 0, clear pixels 1/σ² with the noise σ of the
acquisition's sensor (two sensors of different noise). Every pixel is one small weighted
least-squares problem (6 unknowns, one observation per acquisition), so the whole scene is a
stack of them: held in an xarray DataArray (time, y, x) in Dask chunks of pixels, fitted by
``xarray.apply_ufunc(..., dask="parallelized")`` with ``symraster.weighted_lstsq``, which takes
a chunk's (y, x, time) block as one stack: the normal equations of every pixel assembled and
factored on the GPU in one batched launch, refined in float64.

The fit is checked against numpy's ``lstsq`` pixel by pixel (on a sample of pixels), and the
script prints the pixels fitted per second by symraster and by the numpy loop. With
``--workers N`` the chunks run on a ``dask.distributed.LocalCluster`` of N worker processes
(one GPU context each; ``--devices 0,1`` gives them EGL devices in turn), else on Dask's
threaded scheduler in this process (one GPU context, shared).

Run: python examples/harmonic_regression.py [--size 256] [--chunk 64] [--out harmonics.png]
Needs xarray and dask (``pip install symraster[dask]``); matplotlib for the figure.
"""

import argparse
import time

import numpy as np

import symraster as la

NAMES = ["mean", "trend", "cos 1/yr", "sin 1/yr", "cos 2/yr", "sin 2/yr"]


def design(t):
    """The harmonic model's design matrix, acquisitions × 6 coefficients (t in years)."""
    w = 2 * np.pi * t
    return np.stack([np.ones_like(t), t, np.cos(w), np.sin(w), np.cos(2 * w), np.sin(2 * w)], 1)


def smooth_field(rng, shape, coarse=4):
    """A smooth random field on `shape` in [0, 1]: a coarse grid, interpolated bilinearly."""
    grid = rng.random((coarse + 1, coarse + 1))
    yy = np.linspace(0, coarse, shape[0])
    xx = np.linspace(0, coarse, shape[1])
    y0 = np.minimum(yy.astype(int), coarse - 1)
    x0 = np.minimum(xx.astype(int), coarse - 1)
    fy = (yy - y0)[:, None]
    fx = (xx - x0)[None, :]
    g = grid
    return ((1 - fy) * (1 - fx) * g[y0][:, x0] + (1 - fy) * fx * g[y0][:, x0 + 1]
            + fy * (1 - fx) * g[y0 + 1][:, x0] + fy * fx * g[y0 + 1][:, x0 + 1])


def scene(size, times, seed=7):
    """A synthetic scene: (t in years, observations (time, y, x), weights, true coefficients
    (y, x, 6), clear-sky mask)."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 2, times))
    shape = (size, size)
    truth = np.stack([
        0.2 + 0.2 * smooth_field(rng, shape),            # mean reflectance
        0.02 * (smooth_field(rng, shape) - 0.5),          # trend per year
        0.1 * smooth_field(rng, shape),                   # annual cycle
        0.05 * (smooth_field(rng, shape) - 0.5),
        0.02 * smooth_field(rng, shape),                  # semi-annual
        0.02 * (smooth_field(rng, shape) - 0.5),
    ], -1)
    signal = np.einsum("tk,yxk->tyx", design(t), truth)
    sigma = np.where(np.arange(times) % 3 == 0, 0.03, 0.01)     # two sensors
    y = signal + sigma[:, None, None] * rng.standard_normal((times,) + shape)
    cover = np.stack([smooth_field(rng, shape, coarse=6) for _ in range(times)])
    clear = cover > rng.uniform(0.2, 0.6, times)[:, None, None]  # 20-60% cloudy
    y = np.where(clear, y, 0.9 + 0.1 * rng.random(y.shape))     # clouds: bright garbage
    w = np.where(clear, 1.0 / sigma[:, None, None] ** 2, 0.0)
    # every pixel keeps enough clear acquisitions for its 6 coefficients
    assert (clear.sum(0) >= 12).all(), "too cloudy: raise --times"
    return t, y, w, truth, clear


def fit_numpy(x, y, w):
    """One pixel's weighted fit with numpy's lstsq (float64 SVD), the reference."""
    s = np.sqrt(w)
    return np.linalg.lstsq(x * s[:, None], y * s, rcond=None)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="the scene is size × size pixels")
    parser.add_argument("--times", type=int, default=92, help="acquisitions over two years")
    parser.add_argument("--chunk", type=int, default=64, help="Dask chunks of chunk × chunk pixels")
    parser.add_argument("--check", type=int, default=2000, help="pixels checked against numpy")
    parser.add_argument("--workers", type=int, default=0,
                        help="worker processes of a LocalCluster (0: threads in this process)")
    parser.add_argument("--devices", default="",
                        help="EGL device indices for the workers in turn, e.g. 0,1")
    parser.add_argument("--out", default="harmonics.png", help="the figure ('' for none)")
    args = parser.parse_args(argv)

    import dask
    import xarray as xr

    t, y, w, truth, clear = scene(args.size, args.times)
    x = design(t)
    obs = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": t}, name="reflectance")
    weights = xr.DataArray(w, dims=("time", "y", "x"), coords={"time": t})
    chunks = {"time": -1, "y": args.chunk, "x": args.chunk}
    obs, weights = obs.chunk(chunks), weights.chunk(chunks)

    def fit(yb, wb):
        # yb, wb: one chunk, (y, x, time): a stack of pixels sharing the design x
        return la.weighted_lstsq(x, yb, wb).x

    coefficients = xr.apply_ufunc(
        fit, obs, weights, input_core_dims=[["time"], ["time"]],
        output_core_dims=[["coefficient"]], dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"coefficient": x.shape[1]}},
    ).assign_coords(coefficient=NAMES)

    client, scheduler = None, None
    if args.workers:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1,
                               dashboard_address=None)
        client = Client(cluster)
        if args.devices:
            from symraster.dask import DevicePerWorker

            client.register_plugin(DevicePerWorker(int(d) for d in args.devices.split(",")))
        client.run(lambda: la.weighted_lstsq(x, y[:, :2, :2].T, w[:, :2, :2].T))  # warm up
        where = f"{args.workers} worker processes"
    else:
        scheduler = "threads"
        la.weighted_lstsq(x, y[:, :2, :2].T, w[:, :2, :2].T)  # open the GPU, compile kernels
        where = "Dask's threads in this process"
    try:
        start = time.perf_counter()
        with dask.config.set(scheduler=scheduler):
            beta = coefficients.compute().values  # (y, x, 6)
        seconds = time.perf_counter() - start
    finally:
        if client is not None:
            client.close()
            cluster.close()
    pixels = args.size * args.size

    # numpy's lstsq, pixel by pixel, on a sample of pixels
    rng = np.random.default_rng(1)
    count = min(args.check, pixels)
    sample = rng.choice(pixels, size=count, replace=False)
    iy, ix = np.unravel_index(sample, (args.size, args.size))
    start = time.perf_counter()
    reference = np.array([fit_numpy(x, y[:, i, j], w[:, i, j]) for i, j in zip(iy, ix)])
    numpy_seconds = time.perf_counter() - start
    ours = beta[iy, ix]
    error = np.max(np.linalg.norm(ours - reference, axis=1) / np.linalg.norm(reference, axis=1))
    truth_error = np.sqrt(np.mean((beta - truth) ** 2, axis=(0, 1)))

    print(la.info())
    print(f"{pixels} pixels x {args.times} acquisitions ({100 * (1 - clear.mean()):.0f}% "
          f"cloudy), chunks of {args.chunk} x {args.chunk}, on {where}")
    print(f"symraster: {seconds:.3f} s, {pixels / seconds:,.0f} pixels/s")
    print(f"numpy lstsq per pixel: {count / numpy_seconds:,.0f} pixels/s ({count} pixels)")
    print(f"largest relative difference from numpy over {count} pixels: {error:.1e}")
    print("RMS error against the true coefficients: "
          + ", ".join(f"{n} {e:.1e}" for n, e in zip(NAMES, truth_error)))

    if args.out:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no figure")
        else:
            figure(args.out, t, x, y, clear, beta, truth)
            print(f"figure: {args.out}")
    return {"error": error, "pixels_per_second": pixels / seconds, "beta": beta,
            "truth": truth}


def figure(path, t, x, y, clear, beta, truth):
    import matplotlib.pyplot as plt

    size = beta.shape[0]
    i = j = size // 3
    fine = np.linspace(t.min(), t.max(), 400)
    amplitude = np.hypot(beta[..., 2], beta[..., 3])
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.2),
                                              gridspec_kw={"width_ratios": [2, 1, 1]})
    left.plot(t[clear[:, i, j]], y[clear[:, i, j], i, j], "o", ms=4, label="clear")
    left.plot(t[~clear[:, i, j]], y[~clear[:, i, j], i, j], "x", ms=4, color="0.6",
              label="cloud (weight 0)")
    left.plot(fine, design(fine) @ beta[i, j], "-", label="weighted harmonic fit")
    left.plot(fine, design(fine) @ truth[i, j], "--", color="k", lw=1, label="truth")
    left.set(xlabel="time (years)", ylabel="reflectance", title=f"pixel ({i}, {j})")
    left.legend(fontsize=8)
    for axis, data, title in ((middle, amplitude, "fitted annual amplitude"),
                              (right, np.hypot(truth[..., 2], truth[..., 3]), "true")):
        image = axis.imshow(data, vmin=amplitude.min(), vmax=amplitude.max())
        axis.set_title(title)
        axis.plot(j, i, "r+")
        fig.colorbar(image, ax=axis, shrink=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
