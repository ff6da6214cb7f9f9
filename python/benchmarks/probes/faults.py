"""Where a freed result's cost goes: each call's wall time, the library's time inside it and the
minor page faults it takes (getrusage), with the previous result kept or freed, for the calls
whose time changes between the two (cho_factor, inv) and their neighbours; the process's malloc
settings as given (run it again with MALLOC_TRIM_THRESHOLD_ / MALLOC_MMAP_THRESHOLD_ set to see
whether returning memory to the system is the cost)."""
import os, resource, statistics as st, sys, time
import numpy as np
import symraster as la
from symraster import _native

m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m)
b = rng.uniform(0, 1, m)
count, n = 100000, 8
cs = rng.uniform(-1, 1, (count, n, n)).astype(np.float32); cs += cs.transpose(0, 2, 1)
cs[:, np.arange(n), np.arange(n)] = n
bs = rng.uniform(0, 1, (count, n)).astype(np.float32)


def run(fn, keep, runs=15):
    r = fn(); walls, apis, faults = [], [], []
    for _ in range(runs):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        _native.take_api_seconds()
        s = time.perf_counter(); x = fn(); walls.append((time.perf_counter() - s) * 1e3)
        apis.append(_native.take_api_seconds() * 1e3)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        if keep:
            r = x
        del x
    return st.median(walls), st.median(apis), st.median(faults)


print(f"m={m} MALLOC_TRIM_THRESHOLD_={os.environ.get('MALLOC_TRIM_THRESHOLD_')} "
      f"MALLOC_MMAP_THRESHOLD_={os.environ.get('MALLOC_MMAP_THRESHOLD_')}")
print(f"{'call':26s} {'kept ms':>8s} {'lib':>7s} {'faults':>7s} | {'freed ms':>8s} {'lib':>7s} {'faults':>7s}")
for name, fn in [
    ("cho_factor", lambda: la.cho_factor(c)),
    ("cholesky lower", lambda: la.cholesky(c, lower=True)),
    ("inv pos", lambda: la.inv(c, assume_a="pos")),
    ("solve pos", lambda: la.solve(c, b, assume_a="pos")),
    ("np.empty((m, m)).fill", lambda: np.empty((m, m)).__setitem__(Ellipsis, 1.0)),
    ("batched_cholesky n=8", lambda: la.batched_cholesky(cs)),
    ("batched_solve n=8", lambda: la.batched_solve(cs, bs)),
]:
    k = run(fn, True); f = run(fn, False)
    print(f"{name:26s} {k[0]:8.3f} {k[1]:7.3f} {k[2]:7.0f} | {f[0]:8.3f} {f[1]:7.3f} {f[2]:7.0f}", flush=True)
