"""The package's public calls with the GPU worker's and the calling thread's polling windows
on and off (``_native._set_polls``, a wheel built with the feature ``bench``), one process,
the settings taken in turn round after round: none (both sides wait asleep at once), worker
(the worker polls for the next job after each), caller (the caller polls for its answer),
both (the defaults). The calls as python/benchmarks/frontdoor.py makes them (its matrices),
at M (default 1024), at BIG (4096) for two of them, and batched at n = 8, B = COUNT (100000); a near-empty
call (``cholesky`` of a 2 x 2 matrix). CSV round,setting,call,median_ms,api_ms,min_ms on
stdout (wall ms over RUNS calls after one first call; api_ms the library's own time on the
worker). The environment (OPENBLAS_NUM_THREADS=1, ...) is the caller's to set."""
import os
import statistics as st
import time

import numpy as np
import symraster as la
from symraster import _native

runs = int(os.environ.get("RUNS", "15"))
rounds = int(os.environ.get("ROUNDS", "3"))
m = int(os.environ.get("M", "1024"))
big = int(os.environ.get("BIG", "4096"))
settings = {"none": (0, 0), "worker": (2000, 0), "caller": (0, 20000), "both": (2000, 20000)}
rng = np.random.default_rng(1)


def spd(order):
    c = rng.uniform(-1, 1, (order, order))
    c = (c + c.T) / 2
    np.fill_diagonal(c, order)
    return c


c, c4 = spd(m), spd(big)
c32, c4_32 = c.astype(np.float32), c4.astype(np.float32)
b, b4 = rng.uniform(0, 1, m), rng.uniform(0, 1, big)
x, w, y = rng.uniform(0, 1, (2 * m, m)), rng.uniform(0, 1, 2 * m), rng.uniform(0, 1, 2 * m)
count, n = int(os.environ.get("COUNT", "100000")), 8
cs = rng.uniform(-1, 1, (count, n, n)).astype(np.float32)
cs += cs.transpose(0, 2, 1)
cs[:, np.arange(n), np.arange(n)] = n
bs = rng.uniform(0, 1, (count, n)).astype(np.float32)
tiny = np.array([[4.0, 2.0], [2.0, 3.0]])

cases = [
    ("tiny", lambda: la.cholesky(tiny)),
    (f"solve_pos_f64_{m}", lambda: la.solve(c, b, assume_a="pos")),
    (f"cholesky_f64_{m}", lambda: la.cholesky(c, lower=True)),
    (f"cholesky_f32_{m}", lambda: la.cholesky(c32, lower=True)),
    (f"cho_factor_solve_{m}", lambda: la.cho_solve(la.cho_factor(c), b)),
    (f"inv_pos_{m}", lambda: la.inv(c, assume_a="pos")),
    (f"weighted_lstsq_{m}", lambda: la.weighted_lstsq(x, y, w)),
    ("batched_cholesky_8", lambda: la.batched_cholesky(cs)),
    ("batched_solve_8", lambda: la.batched_solve(cs, bs)),
    (f"solve_pos_f64_{big}", lambda: la.solve(c4, b4, assume_a="pos")),
    (f"cholesky_f32_{big}", lambda: la.cholesky(c4_32, lower=True)),
]
print("round,setting,call,median_ms,api_ms,min_ms", flush=True)
for name, fn in cases:
    fn()
for r in range(rounds):
    order = list(settings)
    order = order[r % len(order):] + order[:r % len(order)]
    for setting in order:
        _native._set_polls(*settings[setting])
        for name, fn in cases:
            fn()
            walls, apis = [], []
            for _ in range(runs):
                _native.take_api_seconds()
                s = time.perf_counter()
                fn()
                walls.append((time.perf_counter() - s) * 1e3)
                apis.append(_native.take_api_seconds() * 1e3)
            print(f"{r + 1},{setting},{name},{st.median(walls):.3f},{st.median(apis):.3f},"
                  f"{min(walls):.3f}", flush=True)
