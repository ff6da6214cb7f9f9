"""The tiled kernels timed after a Python call in the same process (issue 43's order `python`,
run by ``scripts/bench stability``).

In one fresh process: ``import symraster``, then ``la.solve(C, b, assume_a="pos")`` once at
--solve-m (default 4096; C symmetric, entries uniform in (−1, 1) off the diagonal and m on it,
as frontdoor.py's), its wall time the process's first call (the GL context, kernel
compilation, uploads, the solve and its refinement); then, on the same GPU worker and GL
context, the tiled kernels through ``symraster._native._bench_tiled`` (a wheel built with the
cargo feature ``bench``): at each order of --sizes, in full then RFP storage, the assembly,
the Cholesky and the two solves with 1 and 16 right-hand sides, GPU ms by timer queries, the
median of --runs after a warm-up.

Output: CSV ``op,m,format,order,ms`` (order ``python``) to --out (default stdout), and the
first call as ``order,op,m,format,ms`` (order ``python``, op ``solve_pos``, format ``float64``)
to --first-out where given.

    python benchmarks/stability.py --solve-m 128 --sizes 64,128 --runs 2
"""

import argparse
import csv
import sys
import time

import numpy as np

import symraster as la
from symraster import _native


def sizes(text):
    return [int(s) for s in text.split(",") if s.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--solve-m", type=int, default=4096, help="order of the Python call made first")
    p.add_argument("--sizes", default="4096,8192", help="orders of the tiled kernels timed after it")
    p.add_argument("--runs", type=int, default=5, help="timed runs per op after a warm-up (median)")
    p.add_argument("--out", help="CSV of the tiled times (default stdout)")
    p.add_argument("--first-out", help="CSV of the first call's wall time")
    args = p.parse_args()
    if not hasattr(_native, "_bench_tiled"):
        sys.exit("symraster._native has no _bench_tiled: build the wheel with the cargo feature "
                 "bench (MATURIN_PEP517_ARGS=\"--features bench\" pip wheel ./python --no-deps)")

    m = args.solve_m
    rng = np.random.default_rng(1)
    c = rng.uniform(-1.0, 1.0, (m, m))
    c = np.tril(c, -1) + np.tril(c, -1).T + m * np.eye(m)
    b = rng.uniform(0.0, 1.0, m)
    start = time.perf_counter()
    x = la.solve(c, b, assume_a="pos")
    first_ms = (time.perf_counter() - start) * 1e3
    error = np.linalg.norm(c @ x - b) / np.linalg.norm(b)
    print(f"first call: la.solve(assume_a='pos') at m = {m}: {first_ms:.1f} ms, "
          f"relative residual {error:.1e}", file=sys.stderr)
    if args.first_out:
        with open(args.first_out, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["order", "op", "m", "format", "ms"])
            w.writerow(["python", "solve_pos", m, "float64", f"{first_ms:.1f}"])

    rows = _native._bench_tiled(sizes(args.sizes), args.runs)
    out = open(args.out, "w", newline="") if args.out else sys.stdout
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["op", "m", "format", "order", "ms"])
    for op, size, storage, ms in rows:
        w.writerow([op, size, storage, "python", f"{ms:.4f}"])
    out.flush()
    if args.out:
        out.close()


if __name__ == "__main__":
    main()
