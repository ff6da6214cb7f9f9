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

--parity SIZES (with --ours CSV from examples/tiled_bench.rs and --parity-out) times the vendor
op for op instead, with CUDA events (median of --reps after a warm-up, TF32 off): cuBLAS SSYRK
through CuPy on b = A·sqrt(d) (the lower triangle of A·diag(d)·Aᵀ, n = 2m), cuSOLVER's Cholesky
(torch.linalg.cholesky) and torch.cholesky_solve with 1 and 16 right-hand sides at --solve-m,
and writes op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio (ratio = ours / vendor; for the
Cholesky ours is the faster of full and RFP storage, named in the vendor column's note).

    python3 scripts/vendor_baseline.py --parity 4096,8192,16384 --ours ours.csv --parity-out vendor_parity.csv

--batched N:B,... (with --ours CSV from examples/batched_bench.rs and --parity-out) times the
torch pipeline for B weighted least-squares problems of n unknowns and 2n observations (issue
28): (A·diag(w))·Aᵀ and (A·diag(w))·b by bmm, torch.linalg.cholesky and torch.cholesky_solve
on (B, n, n), fp32, CUDA events, median of --reps after warm-up; once with the data already on
the GPU (op batched_wls) and once with the host-to-device copy of A, w and b counted
(batched_wls_with_upload). Rows as --parity's, the order n in column m and B in column n.

    python3 scripts/vendor_baseline.py --batched 8:100000,16:100000,32:20000,128:1000 --ours batched.csv --parity-out batched_parity.csv
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


def cuda_ms(fn, reps):
    """Median milliseconds of fn() between CUDA events (torch's current stream; CuPy's calls
    here run on the same legacy default stream), after two warm-up calls."""
    fn()
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return statistics.median(out)


def parity(args):
    """The vendor's time for each op of issue 25 beside ours (from --ours), as one CSV."""
    import cupy
    import cupy.cublas

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    name = torch.cuda.get_device_name(0)
    ours = {}
    with open(args.ours) as f:
        header = f.readline().strip().split(",")
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            row = dict(zip(header, line.strip().split(",")))
            if row.get("method") != "tiled":
                continue
            key = (row["op"], int(row["m"]), int(row["n"]))
            ours.setdefault(key, []).append((float(row["ms"]), row["format"]))
    rows = []

    def add(op, m, n, rhs, vendor, vendor_ms, key):
        best = min(ours.get(key, []), default=None)
        mine = "" if best is None else f"{best[0]:.4f}"
        ratio = "" if best is None else f"{best[0] / vendor_ms:.3f}"
        note = vendor if best is None or op == "cholesky_solve" else f"{vendor} (ours {best[1]})"
        rows.append(f"{op},{m},{n},{rhs},{mine},{note},{vendor_ms:.4f},{ratio}")
        print(rows[-1], file=sys.stderr, flush=True)

    rng = np.random.default_rng(1)
    for m in sizes(args.parity):
        n = 2 * m
        a = cupy.asarray(rng.random((m, n), dtype=np.float32))
        d = cupy.asarray(rng.random(n, dtype=np.float32) + 0.5)
        b = a * cupy.sqrt(d)
        c = cupy.zeros((m, m), dtype=cupy.float32)
        ms = cuda_ms(lambda: cupy.cublas.syrk("N", b, out=c, lower=True), args.reps)
        add("assembly", m, n, "", "cuBLAS SSYRK (CuPy; lower; fp32)", ms, ("assembly", m, n))
        del a, b, c
        cupy.get_default_memory_pool().free_all_blocks()
    for m in sizes(args.parity):
        x = torch.rand(m, m, device="cuda") - 0.5
        spd = torch.tril(x, -1) + torch.tril(x, -1).T + m * torch.eye(m, device="cuda")
        ms = cuda_ms(lambda: torch.linalg.cholesky(spd), args.reps)
        add("cholesky", m, m, "", "cuSOLVER potrf (torch.linalg.cholesky; fp32)", ms, ("cholesky", m, m))
        if m == args.solve_m:
            low = torch.linalg.cholesky(spd)
            for r in (1, 16):
                rhs = torch.rand(m, r, device="cuda")
                ms = cuda_ms(lambda: torch.cholesky_solve(rhs, low), args.reps)
                add("cholesky_solve", m, m, r, "cuSOLVER potrs (torch.cholesky_solve; fp32)", ms, ("solve", m, r))
        del x, spd
        torch.cuda.empty_cache()
    with open(args.parity_out, "w") as f:
        f.write("op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio\n")
        order = ("assembly", "cholesky", "cholesky_solve")
        f.write("\n".join(sorted(rows, key=lambda r: order.index(r.split(",")[0]))) + "\n")
    print(f"wrote {args.parity_out} ({name}, torch {torch.__version__}, cupy {cupy.__version__})", file=sys.stderr)


def batched(args):
    """The torch pipeline for many small weighted least-squares problems beside ours."""
    torch.backends.cuda.matmul.allow_tf32 = False
    name = torch.cuda.get_device_name(0)
    ours = {}
    with open(args.ours) as f:
        header = f.readline().strip().split(",")
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            row = dict(zip(header, line.strip().split(",")))
            ours[(row["op"], int(row["m"]), int(row["n"]))] = float(row["ms"])
    rows = []
    vendor = "torch bmm + linalg.cholesky + cholesky_solve (fp32)"
    rng = np.random.default_rng(1)
    for item in args.batched.split(","):
        n, count = (int(v) for v in item.split(":"))
        k = 2 * n
        a_host = torch.tensor(rng.uniform(-1, 1, (count, n, k)).astype(np.float32))
        w_host = torch.tensor(rng.uniform(0.5, 1.5, (count, k)).astype(np.float32))
        b_host = torch.tensor(rng.uniform(0, 1, (count, k)).astype(np.float32))

        def pipeline(a, w, b):
            aw = a * w[:, None, :]
            c = torch.bmm(aw, a.transpose(1, 2))
            g = torch.bmm(aw, b[:, :, None])
            low = torch.linalg.cholesky(c)
            return torch.cholesky_solve(g, low)

        a, w, b = a_host.cuda(), w_host.cuda(), b_host.cuda()
        resident = cuda_ms(lambda: pipeline(a, w, b), args.reps)
        uploaded = cuda_ms(lambda: pipeline(a_host.cuda(), w_host.cuda(), b_host.cuda()), args.reps)
        for op, ms in (("batched_wls", resident), ("batched_wls_with_upload", uploaded)):
            mine = ours.get((op, n, count))
            rows.append(f"{op},{n},{count},,{'' if mine is None else f'{mine:.4f}'},{vendor},{ms:.4f},"
                        f"{'' if mine is None else f'{mine / ms:.3f}'}")
            print(rows[-1], file=sys.stderr, flush=True)
        del a, w, b, a_host, w_host, b_host
        torch.cuda.empty_cache()
    with open(args.parity_out, "w") as f:
        f.write("op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio\n")
        f.write("\n".join(rows) + "\n")
    print(f"wrote {args.parity_out} ({name}, torch {torch.__version__})", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fig8", default="paper", help="sizes m for assembly (n = 2m), or 'paper'")
    p.add_argument("--fig9", default="paper", help="sizes m for Cholesky and LU, or 'paper'")
    p.add_argument("--inverse", default="", help="orders s for the inversions")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default="figures/vendor.csv")
    p.add_argument("--parity", default="", help="orders m for the op-for-op comparison")
    p.add_argument("--ours", default="", help="examples/tiled_bench.rs CSV for --parity")
    p.add_argument("--parity-out", default="figures/h200/vendor_parity.csv")
    p.add_argument("--solve-m", type=int, default=8192, help="order of the --parity solves")
    p.add_argument("--batched", default="", help="N:B pairs for the batched least-squares comparison")
    args = p.parse_args()
    if args.batched:
        batched(args)
        return
    if args.parity:
        parity(args)
        return
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
