"""The native calls that bench/src/bin/frontdoor makes, timed from Python at m = 1024 (and the
batched Cholesky at n = 8, B = 100000): wall time and the library's own time on the worker
(take_api_seconds), median and min of RUNS after one first call, as CSV on stdout. With
`--log` the library's debug log goes to stderr (a wheel built with the feature `bench`; set
RUST_LOG=symraster=debug) for its phases. The environment (NUMPY_MADVISE_HUGEPAGE=0,
OPENBLAS_NUM_THREADS=1, ...) is the caller's to set."""
import os, statistics as st, sys, time
import numpy as np
from symraster import _native

label = os.environ.get("LABEL", "python")
runs = int(os.environ.get("RUNS", "25"))
m = int(os.environ.get("M", "1024"))
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m)
c32 = c.astype(np.float32)
b = rng.uniform(0, 1, m)
count, n = int(os.environ.get("COUNT", "100000")), 8
cs = rng.uniform(-1, 1, (count, n, n)).astype(np.float32); cs += cs.transpose(0, 2, 1)
cs[:, np.arange(n), np.arange(n)] = n
if os.environ.get("TORCH"):
    import torch; torch.zeros(1, device="cuda"); torch.cuda.synchronize()
if "--log" in sys.argv:
    _native._log_init()

cases = [
    ("cholesky_f64", lambda: _native.cholesky(c, False, "auto", "full")),
    ("cholesky_f32", lambda: _native.cholesky(c32, False, "auto", "full")),
    ("spd_solve_f64", lambda: _native.spd_solve(c, b, False, "auto", "full")),
    ("batched_cholesky_8", lambda: _native.batched_cholesky(cs, False)),
]
print("label,call,median_ms,api_ms,min_ms")
for name, fn in cases:
    r = fn(); walls, apis = [], []
    for _ in range(runs):
        _native.take_api_seconds()
        s = time.perf_counter(); r = fn(); walls.append((time.perf_counter() - s) * 1e3)
        apis.append(_native.take_api_seconds() * 1e3)
    print(f"{label},{name},{st.median(walls):.3f},{st.median(apis):.3f},{min(walls):.3f}", flush=True)
