"""The binding's overhead against the Rust API, at m = 2048 by default.

Each Python call is timed from the caller's side (``time.perf_counter`` around the call), and
the Rust library's own calls inside it are timed on the GPU worker thread
(``_native.take_api_seconds()``: the ``symraster::Gpu`` / ``Cholesky`` methods alone, as a
Rust program calling them sees them). The difference, measured within the same call, is what
the binding adds: argument checks, dtype handling, the copy into the library's matrix, the trip
to the worker thread, wrapping the result. Medians of --repeat runs.

Run: python benchmarks/overhead.py [--m 2048] [--repeat 5] [--count 100000]
"""

import argparse
import statistics
import time

import numpy as np

import symraster as la
from symraster import _native


def measure(f, repeat):
    walls, apis = [], []
    for _ in range(repeat):
        _native.take_api_seconds()
        start = time.perf_counter()
        result = f()
        walls.append(time.perf_counter() - start)
        apis.append(_native.take_api_seconds())
        # Freed after the clock: dropping a large result is the caller's cost in either
        # language, not the binding's.
        del result
    return statistics.median(walls), statistics.median(apis), statistics.median(
        [w - a for w, a in zip(walls, apis)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--count", type=int, default=100000,
                        help="problems in the batched calls' stacks")
    args = parser.parse_args()
    m = args.m
    rng = np.random.default_rng(1)
    g = rng.standard_normal((m, m))
    a = g @ g.T / m + np.eye(m)
    af = np.asfortranarray(a)
    a32 = a.astype(np.float32)
    b = rng.standard_normal(m)
    b32 = b.astype(np.float32)
    x = rng.uniform(0, 1, (2 * m, m))
    w = rng.uniform(0, 1, 2 * m)
    y = rng.uniform(0, 1, 2 * m)
    count = args.count
    cs = rng.uniform(-1, 1, (count, 16, 16)).astype(np.float32)
    cs += cs.transpose(0, 2, 1)
    cs[:, np.arange(16), np.arange(16)] = 16
    bs = rng.uniform(0, 1, (count, 16)).astype(np.float32)
    xs = rng.uniform(-1, 1, (count, 16, 8)).astype(np.float32)
    ws = rng.uniform(0.5, 1.5, (count, 16)).astype(np.float32)
    ys = rng.uniform(0, 1, (count, 16)).astype(np.float32)
    print(la.info())
    print(f"m = {m}, median of {args.repeat} runs; overhead = Python call − Rust API calls "
          "within it")
    la.solve(a[:64, :64], b[:64], assume_a="pos")  # open the GPU, compile the kernels
    factor = la.Cholesky(a32, lower=True)
    cases = [
        ("solve(a, b, assume_a='pos', lower=True)  f64 C",
         lambda: la.solve(a, b, lower=True, assume_a="pos")),
        ("solve(a, b, assume_a='pos')  f64 C, upper", lambda: la.solve(a, b, assume_a="pos")),
        ("solve(a, b, assume_a='pos')  f64 Fortran", lambda: la.solve(af, b, assume_a="pos")),
        ("solve(a, b, assume_a='pos')  f32 C", lambda: la.solve(a32, b32, assume_a="pos")),
        ("cholesky(a, lower=True)  f32 C", lambda: la.cholesky(a32, lower=True)),
        ("cholesky(a)  f64 C", lambda: la.cholesky(a)),
        ("cho_solve(cho_factor(a), b)  f64 C", lambda: la.cho_solve(la.cho_factor(a), b)),
        ("weighted_lstsq(x, y, w)  f64, 2m x m",
         lambda: la.weighted_lstsq(x, y, w)),
        (f"batched_cholesky(c)  f32, {args.count} x 16 x 16", lambda: la.batched_cholesky(cs)),
        (f"batched_solve(c, b)  f32, {args.count} x 16", lambda: la.batched_solve(cs, bs)),
        (f"batched_weighted_lstsq  f32, {args.count} x 16 x 8",
         lambda: la.batched_weighted_lstsq(xs, ws, ys)),
        (f"Cholesky.solve(b)  f32, kept {factor.method} factor", lambda: factor.solve(b32)),
    ]
    print(f"{'call':<48} {'Python':>9} {'Rust API':>9} {'overhead':>9} {'':>8}")
    for name, f in cases:
        wall, api, over = measure(f, args.repeat)
        print(f"{name:<48} {wall:8.4f}s {api:8.4f}s {over:+8.4f}s {100 * over / api:+7.2f}%")
    factor.close()


if __name__ == "__main__":
    main()
