#!/usr/bin/env python3
"""Vendor-library baseline for `symraster reproduce`: times torch's fp32 (A*d) @ A.T (Fig 8),
torch.linalg.cholesky and torch.linalg.lu_factor (Fig 9) at the given sizes, on CUDA when
available (else the CPU), and writes a CSV that `reproduce` adds to its plots as the
"vendor library" line when it finds it as <out>/vendor.csv.

Columns: op,m,seconds,label   (op: assembly | cholesky | lu | inverse_general | inverse_spd;
the median of --reps runs after a warm-up; seconds of device time, synchronized). Needs only
numpy and torch. --inverse adds torch.linalg.inv (general) and torch.cholesky_inverse after
torch.linalg.cholesky (SPD) for the inversion figure; sizes in several lists are timed once.

    python3 scripts/vendor_baseline.py --fig8 256,512 --fig9 256,512,1024 --inverse 256 --out figures/vendor.csv
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch


def sizes(text):
    if text in ("", None):
        return []
    if text == "paper":
        return None
    return [int(s) for s in text.split(",") if s.strip()]


def timed(fn, device, reps):
    """Median seconds of fn() over reps runs after one warm-up, synchronizing on CUDA."""
    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()
    fn()
    sync()
    out = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fig8", default="paper", help="sizes m for assembly (n = 2m), or 'paper'")
    p.add_argument("--fig9", default="paper", help="sizes m for Cholesky and LU, or 'paper'")
    p.add_argument("--inverse", default="", help="orders s for the inversions")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default="figures/vendor.csv")
    args = p.parse_args()
    fig8 = sizes(args.fig8)
    fig9 = sizes(args.fig9)
    fig8 = [256 * i for i in range(1, 9)] if fig8 is None else fig8
    fig9 = [256 * i for i in range(1, 17)] if fig9 is None else fig9
    fig8 = sorted(set(fig8))
    fig9 = sorted(set(fig9))
    inverse = sorted(set(sizes(args.inverse) or []))

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else "CPU"
    label = f"torch {torch.__version__} on {name}"
    torch.backends.cuda.matmul.allow_tf32 = False  # true fp32, as the GPU path computes
    rng = np.random.default_rng(1)
    rows = []
    for m in fig8:
        n = 2 * m
        a = torch.tensor(rng.random((m, n), dtype=np.float32), device=device)
        d = torch.tensor(rng.random(n, dtype=np.float32), device=device)
        rows.append(("assembly", m, timed(lambda: (a * d) @ a.T, device, args.reps)))
    for m in fig9:
        x = rng.uniform(-1, 1, (m, m)).astype(np.float32)
        x = np.tril(x, -1) + np.tril(x, -1).T + (m + 1) * np.eye(m, dtype=np.float32)
        c = torch.tensor(x, device=device)
        rows.append(("cholesky", m, timed(lambda: torch.linalg.cholesky(c), device, args.reps)))
        rows.append(("lu", m, timed(lambda: torch.linalg.lu_factor(c), device, args.reps)))
        del c
    for s in inverse:
        x = rng.uniform(-0.5, 0.5, (s, s)).astype(np.float32)
        general = torch.tensor(x + s * np.eye(s, k=1, dtype=np.float32) + np.eye(s, dtype=np.float32), device=device)
        spd = torch.tensor(np.tril(x, -1) + np.tril(x, -1).T + s * np.eye(s, dtype=np.float32), device=device)
        rows.append(("inverse_general", s, timed(lambda: torch.linalg.inv(general), device, args.reps)))
        rows.append(("inverse_spd", s, timed(lambda: torch.cholesky_inverse(torch.linalg.cholesky(spd)), device, args.reps)))
        del general, spd
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".partial"
    with open(tmp, "w") as f:
        f.write("op,m,seconds,label\n")
        for op, m, s in rows:
            f.write(f"{op},{m},{s:.6e},{label}\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {len(rows)} timings with {label}", file=sys.stderr)


if __name__ == "__main__":
    main()
