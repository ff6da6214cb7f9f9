"""The float64 general inverse from numpy, piece by piece: ``inv(G)``, the native call (wall and
the library's own time), the checks and norms around it, a copy of G, and torch.linalg.inv
from the same array (to the GPU and back) where torch is installed. G is uniform in (-1, 1)
plus sqrt(m)·I. CSV op,m,ms on stdout: wall ms, median of 5 after a warm-up call. Usage:
``python3 python/benchmarks/probes/inverse_phases.py 1024,4096,8192``."""
import sys
import time

import numpy as np
import symraster as la
from symraster import _native


RUNS = 5


def median_ms(f, runs=RUNS):
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def main():
    print("op,m,ms")
    for m in [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "1024").split(",")]:
        rng = np.random.default_rng(7)
        g = rng.uniform(-1, 1, (m, m)) + m ** 0.5 * np.eye(m)
        api = []

        def native():
            x, d = _native.invert(g, False, False, "auto")
            api.append(d["api_seconds"] * 1e3)
            return x

        x = native()
        rows = [("la.inv", median_ms(lambda: la.inv(g))),
                ("all_finite", median_ms(lambda: _native.all_finite(g))),
                ("native.invert", median_ms(native)),
                # the library's own time in the timed calls (the last RUNS)
                ("native.invert api_seconds", sorted(api[-RUNS:])[RUNS // 2]),
                ("norm_1(a)", median_ms(lambda: la._norm_1(g))),
                ("norm_1(x)", median_ms(lambda: la._norm_1(x))),
                ("copy of a", median_ms(lambda: np.array(g, copy=True)))]
        try:
            import torch
            rows.append(("torch.linalg.inv from numpy", median_ms(
                lambda: torch.linalg.inv(torch.from_numpy(g).cuda()).cpu().numpy())))
        except ImportError:
            pass
        for name, ms in rows:
            print(f"{name},{m},{ms:.3f}", flush=True)


if __name__ == "__main__":
    main()
