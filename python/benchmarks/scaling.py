"""What scaling out costs: per-pixel weighted least squares (the harmonic example's problem:
6 unknowns, --times observations, a third of the weights zero) in one call, through Dask's
threaded scheduler in chunks, and on a dask.distributed.LocalCluster of 1 and 2 worker
processes, beside numpy (lstsq pixel by pixel, and the normal equations batched in float64).

Each throughput is the best of --repeat runs after a warm-up (the GPU opened, the kernels
compiled, the workers started); the cluster's start and its first call are timed apart.

Run: python benchmarks/scaling.py [--pixels 16384] [--times 92] [--chunk 4096] [--repeat 3]
Needs dask, distributed and xarray (pip install symraster[dask]).
"""

import argparse
import time
import warnings

import numpy as np

import symraster as la


def problem(pixels, times, seed=3):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 2, times))
    w2 = 2 * np.pi * t
    x = np.stack([np.ones_like(t), t, np.cos(w2), np.sin(w2), np.cos(2 * w2), np.sin(2 * w2)], 1)
    beta = rng.standard_normal((pixels, 6))
    y = beta @ x.T + 0.01 * rng.standard_normal((pixels, times))
    w = (rng.random((pixels, times)) > 0.33) * 1e4
    return x, y, w


def best(f, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pixels", type=int, default=16384)
    parser.add_argument("--times", type=int, default=92)
    parser.add_argument("--chunk", type=int, default=4096, help="pixels per Dask chunk")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    # "data sent" sends the stacks with the graph on purpose (distributed warns of it)
    warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph", category=UserWarning)

    x, y, w = problem(args.pixels, args.times)
    p = args.pixels
    print(la.info())
    print(f"{p} pixels x {args.times} observations, 6 unknowns; chunks of {args.chunk} pixels; "
          f"best of {args.repeat}")
    rows = []

    def row(name, seconds, note=""):
        rows.append((name, seconds, note))
        print(f"{name:<52} {seconds:8.3f} s {p / seconds:10,.0f} px/s  {note}", flush=True)

    la.weighted_lstsq(x, y[:8], w[:8])  # open the GPU, compile the kernels
    row("symraster, one call on the whole stack", best(lambda: la.weighted_lstsq(x, y, w),
                                                       args.repeat))

    dy = da.from_array(y, chunks=(args.chunk, -1))
    dw = da.from_array(w, chunks=(args.chunk, -1))
    graph = da.map_blocks(lambda yb, wb: la.weighted_lstsq(x, yb, wb).x, dy, dw,
                          dtype=np.float64, chunks=(args.chunk, 6))
    with dask.config.set(scheduler="threads"):
        row("Dask threads in this process (one GPU context)",
            best(graph.compute, args.repeat))

    for workers in (1, 2):
        start = time.perf_counter()
        with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            up = time.perf_counter() - start
            start = time.perf_counter()
            graph.compute()
            first = time.perf_counter() - start
            # the data already on the workers: only the fits
            dy_p, dw_p = client.persist([dy, dw])
            on_workers = da.map_blocks(lambda yb, wb: la.weighted_lstsq(x, yb, wb).x, dy_p,
                                       dw_p, dtype=np.float64, chunks=(args.chunk, 6))
            on_workers.compute()
            row(f"LocalCluster, {workers} worker process(es), data sent",
                best(graph.compute, args.repeat),
                f"(start {up:.1f} s, first call {first:.1f} s)")
            row(f"LocalCluster, {workers} worker process(es), data on workers",
                best(on_workers.compute, args.repeat))

    sample = min(p, 2000)
    seconds = best(lambda: [np.linalg.lstsq(x * np.sqrt(w[i])[:, None], y[i] * np.sqrt(w[i]),
                                            rcond=None) for i in range(sample)], 1)
    row("numpy lstsq, pixel by pixel (float64 SVD)", seconds * p / sample,
        f"(timed on {sample} pixels)")

    def normal_equations():
        c = x.T @ (w[:, :, None] * x)             # (p, 6, 6) float64
        g = (w * y) @ x
        return np.linalg.solve(c, g[..., None])

    row("numpy normal equations, batched (float64)", best(normal_equations, args.repeat))


if __name__ == "__main__":
    main()
