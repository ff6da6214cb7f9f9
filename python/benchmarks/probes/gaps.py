"""What slows a call at m = 1024 that follows something else: each of our calls (float64 SPD
solve, float64 and float32 Cholesky) back to back, after a pause slept or spun on the CPU (the
GPU idle either way), after a tiny CUDA kernel (torch's context active, the GPU busy for
microseconds), after torch's same operation, and after a numpy product of the same size (the
CPU's caches); torch's same operations after the same things. Wall ms and the library's own
time (take_api_seconds), medians of RUNS, as CSV on stdout."""
import os, sys, time, statistics as st
import numpy as np
import symraster as la
from symraster import _native

m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
runs = int(os.environ.get("RUNS", "15"))
label = os.environ.get("LABEL", "")
rng = np.random.default_rng(1)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m); b = rng.uniform(0, 1, m)
c32 = c.astype(np.float32)
try:
    import torch
    tiny = torch.ones(16, device="cuda")
except Exception:  # noqa: BLE001
    torch = None


def tsolve():
    l = torch.linalg.cholesky(torch.from_numpy(c).cuda())
    return torch.cholesky_solve(torch.from_numpy(b).cuda()[:, None], l).cpu().numpy()


def tchol(a):
    return torch.linalg.cholesky(torch.from_numpy(a).cuda()).cpu().numpy()


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def tiny_kernel():
    tiny.add_(1.0)
    torch.cuda.synchronize()


ops = [
    ("solve_pos f64", lambda: la.solve(c, b, assume_a="pos"), tsolve),
    ("cholesky f64", lambda: la.cholesky(c, lower=True), lambda: tchol(c)),
    ("cholesky f32", lambda: la.cholesky(c32, lower=True), lambda: tchol(c32)),
]
before = {
    "back to back": None,
    "sleep 2 ms": lambda _: time.sleep(0.002),
    "spin 2 ms": lambda _: spin(0.002),
    "sleep 20 ms": lambda _: time.sleep(0.02),
    "spin 20 ms": lambda _: spin(0.02),
    "numpy product": lambda _: c @ c[:, :64],
}
if torch is not None:
    before["tiny CUDA kernel"] = lambda _: tiny_kernel()
    before["torch's same op"] = lambda theirs: theirs()
    before["tiny CUDA kernel, spin 2 ms"] = lambda _: (tiny_kernel(), spin(0.002))
print("label,side,op,before,wall_ms,lib_ms,min_ms")
for name, ours, theirs in ops:
    ours(); ours()
    if torch is not None:
        theirs(); theirs()
    sides = [("symraster", ours)] + ([("torch", theirs)] if torch is not None else [])
    for what, fn in list(before.items()) + [("back to back again", None)]:
        for side, call in sides:
            if side == "torch" and what == "torch's same op":
                continue
            walls, libs = [], []
            for _ in range(runs):
                if fn is not None:
                    fn(theirs)
                _native.take_api_seconds()
                s = time.perf_counter()
                call()
                walls.append((time.perf_counter() - s) * 1e3)
                libs.append(_native.take_api_seconds() * 1e3)
            lib = f"{st.median(libs):.3f}" if side == "symraster" else ""
            print(f"{label},{side},{name},{what},{st.median(walls):.3f},{lib},{min(walls):.3f}",
                  flush=True)
