"""Why some m=1024 Python rows run slow when each of our calls follows a torch call: per-call
wall and library time (take_api_seconds) of ours, alone, interleaved with torch's same op, and
interleaved with a torch op followed by a pause."""
import sys, time, statistics as st
import numpy as np
import torch
import symraster as la
from symraster import _native
m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m); b = rng.uniform(0, 1, m)
c32 = c.astype(np.float32); b32 = b.astype(np.float32)
def tchol(a):
    l = torch.linalg.cholesky(torch.from_numpy(a).cuda()).cpu().numpy(); return l
def tsolve(a, v):
    l = torch.linalg.cholesky(torch.from_numpy(a).cuda())
    return torch.cholesky_solve(torch.from_numpy(v).cuda()[:, None], l).cpu().numpy()
ops = [
    ("cholesky f32", lambda: la.cholesky(c32, lower=True), lambda: tchol(c32)),
    ("solve f32", lambda: la.solve(c32, b32, assume_a="pos"), lambda: tsolve(c32, b32)),
    ("solve f64", lambda: la.solve(c, b, assume_a="pos"), lambda: tsolve(c, b)),
    ("cho pair f64", lambda: la.cho_solve(la.cho_factor(c), b), lambda: tsolve(c, b)),
    ("cholesky f64", lambda: la.cholesky(c, lower=True), lambda: tchol(c)),
]
def timed(fn):
    _native.take_api_seconds(); s = time.perf_counter(); r = fn(); w = (time.perf_counter() - s) * 1e3
    return w, _native.take_api_seconds() * 1e3, r
for name, ours, theirs in ops:
    ours(); theirs()
    for mode in ["alone", "interleaved", "torch then 5 ms", "torch then 50 ms", "alone again"]:
        walls, apis, keep = [], [], None
        for _ in range(12):
            if mode.startswith("torch") or mode == "interleaved":
                t = theirs()
                if mode == "torch then 5 ms": time.sleep(0.005)
                if mode == "torch then 50 ms": time.sleep(0.05)
            w, a, keep = timed(ours)
            walls.append(w); apis.append(a)
        print(f"{name:14s} {mode:18s} wall med {st.median(walls):7.2f} min {min(walls):6.2f} max {max(walls):6.2f} | lib med {st.median(apis):7.2f}  walls {' '.join(f'{w:.1f}' for w in walls)}", flush=True)
