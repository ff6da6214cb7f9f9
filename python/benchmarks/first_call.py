"""Where a fresh process's first call goes (issue 42's first call): each phase of a new Python
process timed on its own, in several fresh processes one after another, so that the driver's
shader disk cache (NVIDIA's GLCache) is cold in the first only where it was empty.

Phases (wall ms): ``import`` (``import symraster``), ``context`` (``symraster.info()``: the EGL
display and GL context, no kernel compiled), ``first_solve`` (``solve(C, b, assume_a="pos")`` at
order M: the tiled kernels compiled and checked, first touch of the buffers), ``second_solve``
(the same call again), ``first_cholesky64`` (``cholesky`` of a float64 C: the f64 kernels
compiled), ``first_inv`` (``inv(C, assume_a="pos")``).

    python first_call.py [--m 1024] [--processes 3] [--out first_call.csv]

Output: CSV ``process,cache,phase,ms`` (``cache`` the value of __GL_SHADER_DISK_CACHE the
process ran with: ``default`` or ``0``), the last process run with the driver's cache off.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time


def child(m):
    marks = [("start", time.perf_counter())]
    import numpy as np
    import symraster as la

    marks.append(("import", time.perf_counter()))
    la.info()
    marks.append(("context", time.perf_counter()))
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (m, m))
    c = a @ a.T / m + np.eye(m)
    b = rng.uniform(0, 1, m)
    t = time.perf_counter()
    la.solve(c, b, assume_a="pos")
    marks.append(("first_solve", time.perf_counter()))
    la.solve(c, b, assume_a="pos")
    marks.append(("second_solve", time.perf_counter()))
    la.cholesky(c, lower=True)
    marks.append(("first_cholesky64", time.perf_counter()))
    la.inv(c, assume_a="pos")
    marks.append(("first_inv", time.perf_counter()))
    # The matrix's own making is not a phase.
    out = {}
    for (_, t0), (name, t1) in zip(marks, marks[1:]):
        out[name] = (t1 - t0) * 1e3
    out["first_solve"] = (marks[3][1] - t) * 1e3
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--out", default="first_call.csv")
    p.add_argument("--child", action="store_true")
    args = p.parse_args()
    if args.child:
        child(args.m)
        return
    rows = []
    runs = [("default", None)] * max(args.processes - 1, 1) + [("0", "0")]
    for k, (label, cache) in enumerate(runs):
        env = dict(os.environ)
        if cache is not None:
            env["__GL_SHADER_DISK_CACHE"] = cache
        done = subprocess.run([sys.executable, __file__, "--child", "--m", str(args.m)],
                              env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            print(f"process {k}: exit {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
            continue
        phases = json.loads(done.stdout.strip().splitlines()[-1])
        for name, ms in phases.items():
            rows.append({"process": k, "cache": label, "phase": name, "ms": f"{ms:.1f}"})
        print(f"process {k} (cache {label}): " +
              ", ".join(f"{n} {v:.0f} ms" for n, v in phases.items()), file=sys.stderr)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["process", "cache", "phase", "ms"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
