"""Where the Python front door's time goes at small m: each op's Python call beside the library's
own time inside it (take_api_seconds) and beside its pieces, frontdoor-style (result kept until
the next call) and overhead-style (result freed after the clock)."""
import os, statistics as st, sys, time
import numpy as np
import symraster as la
from symraster import _native

m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
runs = 25
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m)
b = rng.uniform(0, 1, m)
c32 = c.astype(np.float32)
b32 = b.astype(np.float32)
x = rng.uniform(np.finfo(np.float64).tiny, 1, (2 * m, m)); w = rng.uniform(0, 1, 2 * m); y = rng.uniform(0, 1, 2 * m)

cf = la.cho_factor(c)
lrow = np.ascontiguousarray(cf[0].T)
b2 = np.ascontiguousarray(b[:, None])

def kept(fn):
    r = fn(); walls, apis = [], []
    for _ in range(runs):
        _native.take_api_seconds()
        s = time.perf_counter(); r = fn(); walls.append((time.perf_counter() - s) * 1e3)
        apis.append(_native.take_api_seconds() * 1e3)
    return st.median(walls), st.median(apis), min(walls)

def freed(fn):
    fn(); walls = []
    for _ in range(runs):
        s = time.perf_counter(); r = fn(); walls.append((time.perf_counter() - s) * 1e3); del r
    return st.median(walls), min(walls)

cases = [
    ("solve_pos f64", lambda: la.solve(c, b, assume_a="pos")),
    ("  native spd_solve", lambda: _native.spd_solve(c, b, False, "auto", "full")),
    ("  native spd_solve upper", lambda: _native.spd_solve(c, b, True, "auto", "full")),
    ("  native upper, checked", lambda: _native.spd_solve(c, b, True, "auto", "full", True)),
    ("  solve_pos unchecked", lambda: la.solve(c, b, assume_a="pos", check_finite=False)),
    ("solve_pos f32", lambda: la.solve(c32, b.astype(np.float32), assume_a="pos")),
    ("  native spd_solve f32", lambda: _native.spd_solve(c32, b32, False, "auto", "full")),
    ("cholesky f64", lambda: la.cholesky(c, lower=True)),
    ("  native cholesky f64", lambda: _native.cholesky(c, False, "auto", "full")),
    ("  all_finite outside", lambda: _native.all_finite(c, "lower")),
    ("cholesky f32", lambda: la.cholesky(c32, lower=True)),
    ("  native cholesky f32", lambda: _native.cholesky(c32, False, "auto", "full")),
    ("  cholesky f32 unchecked", lambda: la.cholesky(c32, lower=True, check_finite=False)),
    ("  all_finite outside f32", lambda: _native.all_finite(c32, "lower")),
    ("inv_pos", lambda: la.inv(c, assume_a="pos")),
    ("  native invert", lambda: _native.invert(c, True, False, "auto")),
    ("  norm_1 x", lambda: _native.norm_1(c, None)),
    ("cho_factor_solve", lambda: la.cho_solve(la.cho_factor(c), b)),
    ("  cho_factor", lambda: la.cho_factor(c)),
    ("  native cho_factor upper", lambda: _native.cho_factor(c, True, "auto", "full")),
    ("  native cholesky upper", lambda: _native.cholesky(c, True, "auto", "full")),
    ("  cho_factor lower", lambda: la.cho_factor(c, lower=True)),
    ("  native cho_factor lower", lambda: _native.cho_factor(c, False, "auto", "full")),
    ("  cho_solve on a kept c", lambda: la.cho_solve(cf, b)),
    ("  all_finite c", lambda: _native.all_finite(cf[0])),
    ("  native dpotrs c.T", lambda: _native.cho_solve_f64(cf[0].T, b2)),
    ("  native dpotrs row-major L", lambda: _native.cho_solve_f64(lrow, b2)),
    ("weighted_lstsq", lambda: la.weighted_lstsq(x, y, w).x),
    ("  np.empty+fill 8MiB", lambda: np.empty((m, m)).fill(0.0)),
    ("  np.empty 8MiB", lambda: np.empty((m, m))),
]
if "--batched" in sys.argv:
    count, n = 100000, 8
    cs = rng.uniform(-1, 1, (count, n, n)).astype(np.float32); cs += cs.transpose(0, 2, 1)
    cs[:, np.arange(n), np.arange(n)] = n
    bs = rng.uniform(0, 1, (count, n)).astype(np.float32)
    xs = rng.uniform(-1, 1, (count, 2 * n, n)).astype(np.float32)
    ws = rng.uniform(0.5, 1.5, (count, 2 * n)).astype(np.float32); ys = rng.uniform(0, 1, (count, 2 * n)).astype(np.float32)
    cases = [
        ("batched_cholesky", lambda: la.batched_cholesky(cs)),
        ("  native batched_cholesky", lambda: _native.batched_cholesky(cs, False)),
        ("  native, upper checked", lambda: _native.batched_cholesky(cs, False, True)),
        ("  batched_cholesky unchecked", lambda: la.batched_cholesky(cs, check_finite=False)),
        ("  all_finite stack", lambda: _native.all_finite(cs)),
        ("batched_solve", lambda: la.batched_solve(cs, bs)),
        ("  native batched_spd_solve", lambda: _native.batched_spd_solve(cs, bs, False, 1)),
        ("  native, upper checked", lambda: _native.batched_spd_solve(cs, bs, False, 1, True)),
        ("  batched_solve unchecked", lambda: la.batched_solve(cs, bs, check_finite=False)),
        ("batched_weighted_lstsq", lambda: la.batched_weighted_lstsq(xs, ws, ys)),
        ("  native batched_least_squares", lambda: _native.batched_least_squares(xs, ws, ys, 1)),
        ("  np.empty+fill 25.6MB", lambda: np.empty((count, n, n), np.float32).fill(0.0)),
    ]
print(f"m={m} OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} runs={runs}")
print(f"{'call':28s} {'kept med':>9s} {'api med':>8s} {'kept min':>9s} {'freed med':>9s} {'freed min':>9s}")
for name, fn in cases:
    k, a, kmin = kept(fn)
    f, fmin = freed(fn)
    print(f"{name:28s} {k:9.3f} {a:8.3f} {kmin:9.3f} {f:9.3f} {fmin:9.3f}", flush=True)
if "--torch" in sys.argv and "--batched" not in sys.argv:
    import torch
    t = torch.from_numpy(c).cuda(); torch.cuda.synchronize()
    def tchol():
        l = torch.linalg.cholesky(torch.from_numpy(c).cuda()).cpu().numpy(); torch.cuda.synchronize(); return l
    def tsolve():
        l = torch.linalg.cholesky(torch.from_numpy(c).cuda())
        r = torch.cholesky_solve(torch.from_numpy(b).cuda()[:, None], l).cpu().numpy(); torch.cuda.synchronize(); return r
    for name, fn in [("torch cholesky", tchol), ("torch solve", tsolve)]:
        k, a, kmin = kept(fn); print(f"{name:28s} {k:9.3f} {'':8s} {kmin:9.3f}", flush=True)
    print("-- after torch in the process")
    for name, fn in cases[:8]:
        k, a, kmin = kept(fn); f, fmin = freed(fn)
        print(f"{name:28s} {k:9.3f} {a:8.3f} {kmin:9.3f} {f:9.3f} {fmin:9.3f}", flush=True)
