"""The binding's overhead against the Rust API, at m = 2048 by default.

Each Python call is timed from the caller's side (``time.perf_counter`` around the call), and
the Rust library's own calls inside it are timed on the GPU worker thread
(``_native.take_api_seconds()``: the ``symraster::Gpu`` / ``Cholesky`` methods alone, as a
Rust program calling them sees them). The difference, measured within the same call, is what
the binding adds: argument checks, dtype handling, the copy into the library's matrix, the trip
to the worker thread, wrapping the result. Medians of --repeat runs.

Run: python benchmarks/overhead.py [--m 2048] [--repeat 5]
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
        f()
        walls.append(time.perf_counter() - start)
        apis.append(_native.take_api_seconds())
    return statistics.median(walls), statistics.median(apis), statistics.median(
        [w - a for w, a in zip(walls, apis)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    m = args.m
    rng = np.random.default_rng(1)
    g = rng.standard_normal((m, m))
    a = g @ g.T / m + np.eye(m)
    af = np.asfortranarray(a)
    a32 = a.astype(np.float32)
    b = rng.standard_normal(m)
    b32 = b.astype(np.float32)
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
        (f"Cholesky.solve(b)  f32, kept {factor.method} factor", lambda: factor.solve(b32)),
    ]
    print(f"{'call':<48} {'Python':>9} {'Rust API':>9} {'overhead':>9} {'':>8}")
    for name, f in cases:
        wall, api, over = measure(f, args.repeat)
        print(f"{name:<48} {wall:8.4f}s {api:8.4f}s {over:+8.4f}s {100 * over / api:+7.2f}%")
    factor.close()


if __name__ == "__main__":
    main()
