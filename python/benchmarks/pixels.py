"""Pixels per second of the per-pixel weighted harmonic regression (issue 44, item 3).

The problem of python/examples/harmonic_regression.py, flattened: P pixels x T acquisitions
over two years (t in years), the 6 coefficients of a mean, a trend and the annual and
semi-annual harmonics, two sensors of noise 0.03 and 0.01 (weights 1/σ²), clouds (a third of
the acquisitions, at random per pixel) as zero weights over bright garbage. Every method fits
the same arrays, from numpy arrays on the host to numpy coefficients on the host:

  symraster            ``la.weighted_lstsq(x, y, w)`` on the (pixels, time) stack, as the
                       example's chunks call it, in calls of --chunk pixels
  xarray_dask          the example's path: ``xarray.apply_ufunc(..., dask="parallelized")``
                       over Dask chunks of --chunk pixels, Dask's threaded scheduler
  numpy_lstsq_loop     ``np.linalg.lstsq`` pixel by pixel (float64 SVD), timed on
                       --loop-pixels pixels and extrapolated to P
  numpy_normal_eq      the normal equations batched in float64 (x^T diag(w) x for every pixel,
                       ``np.linalg.solve``), timed on --numpy-pixels pixels, extrapolated
  torch_f64, torch_f32 torch on the GPU: y, w and x copied to the device, x^T W x and x^T W y by
                       ``torch.bmm``, ``torch.linalg.cholesky`` and ``torch.cholesky_solve``,
                       the coefficients copied back (synchronised: transfers
                       included)
  xarray_polyfit_deg2  ``xarray.DataArray.polyfit(deg=2)``: polyfit fits polynomials, not
                       harmonics, so this is the closest built-in per-pixel fit, not the same
                       model: clouds as NaN with skipna=True, the sensors' 1/σ as its (per-time)
                       w; xarray then fits pixel by pixel, so it is timed on --loop-pixels and
                       extrapolated. Checked against numpy's lstsq of the same polynomial model.

Each time is the best of --repeat runs after a warm-up (a run past --cap seconds is not
repeated). rel_err is the largest ‖β − β_numpy‖/‖β_numpy‖ over the first --check pixels, the
reference numpy's lstsq pixel by pixel. A method whose module is missing is skipped with a note.

Writes CSV (method,pixels,times,seconds,pixels_per_s,rel_err,timed_pixels,note) to --out and
stdout; seconds and pixels_per_s are for all P pixels (extrapolated where timed_pixels < P).

Run: python benchmarks/pixels.py [--pixels 1000000] [--times 60] [--out pixels.csv]
"""

import argparse
import contextlib
import csv
import importlib.util
import sys
import time

import numpy as np


def design(t):
    """The example's design matrix, acquisitions x 6 coefficients (t in years)."""
    w = 2 * np.pi * t
    return np.stack([np.ones_like(t), t, np.cos(w), np.sin(w), np.cos(2 * w), np.sin(2 * w)], 1)


def problem(pixels, times, seed=7):
    """t (times,), x (times, 6), y and w (pixels, times) float64, clear (pixels, times)."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 2, times))
    x = design(t)
    beta = np.array([0.3, 0.01, 0.05, 0.0, 0.01, 0.0]) \
        + np.array([0.1, 0.01, 0.05, 0.03, 0.01, 0.01]) * rng.standard_normal((pixels, 6))
    sigma = np.where(np.arange(times) % 3 == 0, 0.03, 0.01)          # two sensors
    y = beta @ x.T + sigma * rng.standard_normal((pixels, times))
    clear = rng.random((pixels, times)) > 0.33
    few = clear.sum(1) < 2 * x.shape[1]                               # keep every fit posed
    clear[few] = True
    y = np.where(clear, y, 0.9 + 0.1 * rng.random((pixels, times)))   # clouds: bright garbage
    w = np.where(clear, 1.0 / sigma**2, 0.0)
    return t, x, y, w, clear, sigma


def have(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def best(f, repeat, cap):
    """(the best seconds of up to `repeat` runs of f, its last result); stops past `cap` s."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
        if sum(times) > cap:
            break
    return min(times), out


def rel_err(beta, ref):
    beta = np.asarray(beta)[: len(ref)]
    return float(np.max(np.linalg.norm(beta - ref, axis=1) / np.linalg.norm(ref, axis=1)))


def lstsq_loop(x, y, w):
    out = np.empty((len(y), x.shape[1]))
    for i in range(len(y)):
        s = np.sqrt(w[i])
        out[i] = np.linalg.lstsq(x * s[:, None], y[i] * s, rcond=None)[0]
    return out


def normal_equations(x, y, w):
    c = x.T @ (w[:, :, None] * x)                  # (p, 6, 6)
    g = (w * y) @ x                                # (p, 6)
    return np.linalg.solve(c, g[..., None])[..., 0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pixels", type=int, default=1_000_000)
    parser.add_argument("--times", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=131072,
                        help="pixels per symraster call and per Dask chunk")
    parser.add_argument("--loop-pixels", type=int, default=5000,
                        help="pixels timed in the pixel-by-pixel loops (numpy lstsq, polyfit)")
    parser.add_argument("--numpy-pixels", type=int, default=200_000,
                        help="pixels timed in numpy's batched normal equations")
    parser.add_argument("--check", type=int, default=1000, help="pixels checked against numpy")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cap", type=float, default=15.0,
                        help="no further repeats once a method's runs took this many seconds")
    parser.add_argument("--methods", default="all",
                        help="comma-separated subset of the methods (default all)")
    parser.add_argument("--out", default="", help="the CSV file (stdout always)")
    args = parser.parse_args(argv)

    P, T = args.pixels, args.times
    t, x, y, w, clear, sigma = problem(P, T)
    k = x.shape[1]
    check = min(args.check, P, args.loop_pixels)
    wanted = None if args.methods == "all" else set(args.methods.split(","))
    rows = []
    fields = ["method", "pixels", "times", "seconds", "pixels_per_s", "rel_err",
              "timed_pixels", "note"]
    out = csv.writer(sys.stdout)
    out.writerow(fields)

    def row(method, seconds, timed, err, note=""):
        total = seconds * P / timed if timed else float("nan")
        r = [method, P, T, f"{total:.6g}", f"{P / total:.6g}" if timed else "",
             "" if err is None else f"{err:.2e}", timed, note]
        rows.append(r)
        out.writerow(r)
        sys.stdout.flush()

    def skip(method, note):
        r = [method, P, T, "", "", "", 0, note]
        rows.append(r)
        out.writerow(r)
        sys.stdout.flush()

    def want(method):
        return wanted is None or method in wanted

    @contextlib.contextmanager
    def guarded(method):
        """A method that raises gets a row saying so; the others go on."""
        try:
            yield
        except Exception as e:  # noqa: BLE001
            skip(method, f"failed: {type(e).__name__}: {e}"[:300].replace("\n", " "))

    print(f"# {P} pixels x {T} acquisitions, {k} coefficients, "
          f"{100 * (1 - clear.mean()):.0f}% cloudy (zero weights)", file=sys.stderr)

    # the reference: numpy's lstsq pixel by pixel (the first --loop-pixels pixels)
    n_loop = min(args.loop_pixels, P)
    seconds, ref_loop = best(lambda: lstsq_loop(x, y[:n_loop], w[:n_loop]), 1, args.cap)
    ref = ref_loop[:check]
    if want("numpy_lstsq_loop"):
        row("numpy_lstsq_loop", seconds, n_loop, 0.0,
            f"float64 SVD per pixel; timed on {n_loop} pixels, extrapolated; the reference")

    with guarded("numpy_normal_eq"):
        if want("numpy_normal_eq"):
            n = min(args.numpy_pixels, P)
            normal_equations(x, y[:64], w[:64])
            seconds, beta = best(lambda: normal_equations(x, y[:n], w[:n]), args.repeat,
                                 args.cap)
            row("numpy_normal_eq", seconds, n, rel_err(beta, ref),
                "float64 batched normal equations + np.linalg.solve"
                + (f"; timed on {n} pixels, extrapolated" if n < P else ""))

    la = None
    if want("symraster") or want("xarray_dask"):
        try:
            import symraster as la
        except ImportError as e:
            for m in ("symraster", "xarray_dask"):
                if want(m):
                    skip(m, f"symraster missing: {e}")
    if la is not None:
        print(f"# {la.info()}", file=sys.stderr)
        try:
            la.weighted_lstsq(x, y[:8], w[:8])     # open the GPU, compile the kernels
        except Exception as e:  # noqa: BLE001
            skip("symraster", f"failed: {type(e).__name__}: {e}"[:300].replace("\n", " "))
            la = None

    with guarded("symraster"):
        if la is not None and want("symraster"):
            def ours():
                return np.concatenate([la.weighted_lstsq(x, y[i:i + args.chunk],
                                                         w[i:i + args.chunk]).x
                                       for i in range(0, P, args.chunk)])
            seconds, beta = best(ours, args.repeat, args.cap)
            row("symraster", seconds, P, rel_err(beta, ref),
                f"la.weighted_lstsq on stacks of {min(args.chunk, P)} pixels, shared x")

    with guarded("xarray_dask"):
        if la is not None and want("xarray_dask"):
            if not (have("xarray") and have("dask")):
                skip("xarray_dask", "xarray or dask missing")
            else:
                import dask
                import xarray as xr

                obs = xr.DataArray(y, dims=("pixel", "time"), coords={"time": t})
                wts = xr.DataArray(w, dims=("pixel", "time"), coords={"time": t})

                def fit(yb, wb):
                    return la.weighted_lstsq(x, yb, wb).x

                def via_xarray():
                    o = obs.chunk({"pixel": args.chunk, "time": -1})
                    ww = wts.chunk({"pixel": args.chunk, "time": -1})
                    coefficients = xr.apply_ufunc(
                        fit, o, ww, input_core_dims=[["time"], ["time"]],
                        output_core_dims=[["coefficient"]], dask="parallelized",
                        output_dtypes=[np.float64],
                        dask_gufunc_kwargs={"output_sizes": {"coefficient": k}})
                    with dask.config.set(scheduler="threads"):
                        return coefficients.compute().values
                seconds, beta = best(via_xarray, args.repeat, args.cap)
                row("xarray_dask", seconds, P, rel_err(beta, ref),
                    f"the example's apply_ufunc(dask='parallelized'), chunks of "
                    f"{min(args.chunk, P)} pixels, threaded scheduler; xarray {xr.__version__}, "
                    f"dask {dask.__version__}")

    for dtype_name in ("f64", "f32"):
        method = f"torch_{dtype_name}"
        if not want(method):
            continue
        with guarded(method):
            if not have("torch"):
                skip(method, "torch missing")
                continue
            import torch

            if not torch.cuda.is_available():
                skip(method, "torch without CUDA")
                continue
            dtype = torch.float64 if dtype_name == "f64" else torch.float32
            dev = torch.device("cuda")

            def via_torch(yh, wh, dtype=dtype):
                xd = torch.from_numpy(x).to(dev, dtype)
                yd = torch.from_numpy(yh).to(dev, dtype)
                wd = torch.from_numpy(wh).to(dev, dtype)
                a = (wd.unsqueeze(2) * xd).transpose(1, 2)                  # (p, k, T): x^T W
                c = torch.bmm(a, xd.expand(len(yh), -1, -1))               # (p, k, k)
                g = torch.bmm(a, yd.unsqueeze(2))                           # (p, k, 1)
                beta = torch.cholesky_solve(g, torch.linalg.cholesky(c))[..., 0]
                out = beta.to(torch.float64).cpu().numpy()                  # synchronises
                torch.cuda.synchronize()
                return out
            via_torch(y[:64], w[:64])
            seconds, beta = best(lambda: via_torch(y, w), args.repeat, args.cap)
            row(method, seconds, P, rel_err(beta, ref),
                f"bmm normal equations + linalg.cholesky + cholesky_solve in "
                f"{dtype_name}, host arrays in and out; torch {torch.__version__}, "
                f"{torch.cuda.get_device_name()}")

    with guarded("xarray_polyfit_deg2"):
        if want("xarray_polyfit_deg2"):
            if not have("xarray"):
                skip("xarray_polyfit_deg2", "xarray missing")
            else:
                import xarray as xr

                n = min(args.loop_pixels, P)
                nan_y = np.where(clear[:n], y[:n], np.nan)
                obs = xr.DataArray(nan_y, dims=("pixel", "time"), coords={"time": t})
                inv_sigma = 1.0 / sigma

                def polyfit():
                    fitted = obs.polyfit("time", deg=2, skipna=True, w=inv_sigma)
                    return fitted.polyfit_coefficients.transpose("pixel", "degree") \
                        .sortby("degree").values                           # [1, t, t²]
                polyfit()
                seconds, beta = best(polyfit, args.repeat, args.cap)
                xp = np.stack([np.ones_like(t), t, t * t], 1)
                ref_poly = lstsq_loop(xp, y[:check], w[:check])
                row("xarray_polyfit_deg2", seconds, n, rel_err(beta, ref_poly),
                    f"NOT the harmonic model: the closest built-in per-pixel fit, a quadratic "
                    f"in t (3 coefficients), clouds NaN + skipna, w = 1/σ per time; timed on {n} "
                    f"pixels, extrapolated; rel_err against numpy lstsq of the quadratic; "
                    f"xarray {xr.__version__}")

    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(fields)
            writer.writerows(rows)


if __name__ == "__main__":
    main()
