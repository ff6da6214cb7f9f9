"""Calls at small m with the check beside the GPU call on and off, to run under several thread
settings (RAYON_NUM_THREADS, OPENBLAS_NUM_THREADS): medians of 41 calls after a warm-up, each
result freed after its clock, and the library's own time inside the call."""
import os, statistics as st, sys, time
import numpy as np
import symraster as la
from symraster import _native

m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
runs = 41
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m)
b = rng.uniform(0, 1, m)
c32, b32 = c.astype(np.float32), b.astype(np.float32)


def timed(fn):
    fn(); walls, apis = [], []
    for _ in range(runs):
        _native.take_api_seconds()
        s = time.perf_counter(); r = fn(); walls.append((time.perf_counter() - s) * 1e3)
        apis.append(_native.take_api_seconds() * 1e3); del r
    return st.median(walls), st.median(apis), min(walls)


cases = [
    ("solve f64", lambda: la.solve(c, b, assume_a="pos")),
    ("solve f64 unchecked", lambda: la.solve(c, b, assume_a="pos", check_finite=False)),
    ("solve f32", lambda: la.solve(c32, b32, assume_a="pos")),
    ("solve f32 unchecked", lambda: la.solve(c32, b32, assume_a="pos", check_finite=False)),
    ("cholesky f64", lambda: la.cholesky(c, lower=True)),
    ("cholesky f64 unchecked", lambda: la.cholesky(c, lower=True, check_finite=False)),
    ("cholesky f32", lambda: la.cholesky(c32, lower=True)),
    ("cholesky f32 unchecked", lambda: la.cholesky(c32, lower=True, check_finite=False)),
    ("inv f64", lambda: la.inv(c, assume_a="pos")),
]
setting = " ".join(f"{k}={os.environ[k]}" for k in ("RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS")
                   if k in os.environ) or "default"
print(f"# m={m} {setting} runs={runs}")
print(f"{'call':24s} {'median':>8s} {'library':>8s} {'min':>8s}")
for name, fn in cases:
    w, a, lo = timed(fn)
    print(f"{name:24s} {w:8.3f} {a:8.3f} {lo:8.3f}", flush=True)
