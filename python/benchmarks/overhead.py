"""The binding's overhead against the Rust API, at m = 2048 by default.

Each Python call is timed from the caller's side (``time.perf_counter`` around the call) and
the Rust library's own call is timed inside the GPU worker thread (``api_seconds``: the
`symraster::Gpu` method alone, as a Rust program calling it would see it). The difference is
what the binding adds: argument checks, dtype handling, the copy into the library's matrix,
the trip to the worker thread, wrapping the result. Runs are interleaved and the medians
compared.

Run: python benchmarks/overhead.py [--m 2048] [--repeat 5]
"""

import argparse
import statistics
import time

import numpy as np

import symraster as la
from symraster import _native


def timed(f):
    start = time.perf_counter()
    out = f()
    return time.perf_counter() - start, out


def report(name, walls, apis):
    wall, api = statistics.median(walls), statistics.median(apis)
    print(f"{name:<44} Python {wall:8.4f} s  Rust API {api:8.4f} s  "
          f"overhead {wall - api:+.4f} s ({100 * (wall - api) / api:+.2f}%)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    m = args.m
    rng = np.random.default_rng(1)
    g = rng.standard_normal((m, m))
    a = g @ g.T / m + np.eye(m)
    b = rng.standard_normal(m)
    print(la.info())
    print(f"m = {m}, {args.repeat} interleaved runs, medians")

    cases = {
        "solve(assume_a='pos', lower=True), f64 C": lambda: la.solve(
            a, b, lower=True, assume_a="pos"),
        "solve(assume_a='pos'), f64 C (upper read)": lambda: la.solve(a, b, assume_a="pos"),
        "solve(assume_a='pos'), f64 Fortran": lambda: la.solve(
            af, b, assume_a="pos"),
    }
    af = np.asfortranarray(a)
    # The Rust API's time for each case: the same call made through the native layer, which
    # returns the seconds of `Gpu::spd_solve` itself.
    native = {
        "solve(assume_a='pos', lower=True), f64 C": lambda: _native.spd_solve(
            a, b, False, "auto", "full"),
        "solve(assume_a='pos'), f64 C (upper read)": lambda: _native.spd_solve(
            a, b, True, "auto", "full"),
        "solve(assume_a='pos'), f64 Fortran": lambda: _native.spd_solve(
            af, b, True, "auto", "full"),
    }
    la.solve(a[:64, :64], b[:64], assume_a="pos")  # open the GPU, compile the kernels
    for name in cases:
        walls, apis = [], []
        for _ in range(args.repeat):
            wall, _ = timed(cases[name])
            _, (_, diagnostics) = timed(native[name])
            walls.append(wall)
            apis.append(diagnostics["api_seconds"])
        report(name, walls, apis)

    # A kept factor: the solve's own cost is small, so this shows the per-call cost.
    with la.Cholesky(a.astype(np.float32), lower=True) as f:
        b32 = b.astype(np.float32)[:, None]
        walls, apis = [], []
        for _ in range(args.repeat):
            wall, _ = timed(lambda: f.solve(b32))
            _, (_, api) = timed(lambda: _native.factor_solve(f._id, b32))
            walls.append(wall)
            apis.append(api)
        report(f"Cholesky.solve (float32, kept {f.method} factor)", walls, apis)


if __name__ == "__main__":
    main()
