"""The general float64 inverse from numpy by each method, beside torch (InverseMethod::Auto).

For each order n of --sizes: G (uniform in (−1, 1), n added to its diagonal: nonsymmetric,
diagonally dominant), inverted from the numpy array to a numpy array (wall time, median of
--runs calls after a warm-up call each, the sides taking turns in one process) by
``_native.invert(G, False, False, method)`` for each method of --methods (gje, lu, auto: the
library's Gauss-Jordan or LU, refined to float64 on the GPU), by ``la.inv(G)`` (the scipy door:
auto and the condition estimate) and by torch's ``linalg.inv`` from the same array in float64
(``torch.from_numpy(G).cuda()``, the inverse, ``.cpu().numpy()``; --no-torch: ours alone). Every result is checked
after its timing: ‖X·(G·v) − v‖∞ / ‖v‖∞ for a random v (κ(G) is near 1; the largest of a side's
calls), at most 1e-11, with
numpy's BLAS on one thread (threadpoolctl, where installed: BLAS threads left spinning after a
product on all cores slow the next call's host passes, as frontdoor.py notes). Writes CSV rows
n,side,runs,ms,api_ms,error on stdout (api_ms: the library call's own time on the binding's
worker, ``api_seconds``, for the methods called through ``_native.invert``).
"""

import argparse
import statistics
import sys
import time

import numpy as np
import symraster as la
import torch
from symraster import _native

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # the checks then run on numpy's BLAS threads as they are
    threadpool_limits = None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="4096,8192,12288,16384")
    p.add_argument("--methods", default="gje,lu,auto")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-torch", action="store_true", help="ours alone (torch not called)")
    args = p.parse_args()
    rng = np.random.default_rng(29)
    print("n,side,runs,ms,api_ms,error")
    for n in [int(s) for s in args.sizes.split(",")]:
        g = rng.uniform(-1, 1, (n, n))
        g[np.diag_indices(n)] += n
        v = rng.uniform(-1, 1, n)
        gv = g @ v
        api = {}

        def native(m):
            x, d = _native.invert(g, False, False, m)
            api.setdefault(f"symraster_{m}", []).append(d["api_seconds"] * 1e3)
            return x
        sides = {f"symraster_{m}": (lambda m=m: native(m)) for m in args.methods.split(",")}
        sides["scipy_door_inv"] = lambda: la.inv(g)

        def torch_inv():
            out = torch.linalg.inv(torch.from_numpy(g).cuda()).cpu().numpy()
            torch.cuda.synchronize()
            return out
        if not args.no_torch:
            sides["torch_f64"] = torch_inv
        def check(x):
            if threadpool_limits is None:
                return float(np.max(np.abs(x @ gv - v)) / np.max(np.abs(v)))
            with threadpool_limits(1):
                return float(np.max(np.abs(x @ gv - v)) / np.max(np.abs(v)))
        times = {name: [] for name in sides}
        errors = {}
        for rep in range(args.runs + 1):
            for name, fn in sides.items():
                start = time.perf_counter()
                x = fn()
                ms = (time.perf_counter() - start) * 1e3
                if rep > 0:
                    times[name].append(ms)
                errors[name] = max(errors.get(name, 0.0), check(x))
                del x
        for name in sides:
            ok = errors[name] <= 1e-11
            if not ok:
                print(f"WRONG n {n} {name}: error {errors[name]:.2e}", file=sys.stderr)
            ms = statistics.median(times[name])
            api_ms = f"{statistics.median(api[name][1:]):.2f}" if name in api else ""
            print(f"{n},{name},{args.runs},{ms:.2f},{api_ms},{errors[name]:.2e}", flush=True)


if __name__ == "__main__":
    main()
