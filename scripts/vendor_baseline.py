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

--parity SIZES (with --ours CSV from bench/src/bin/tiled_bench.rs and --parity-out) times the vendor
op for op instead, with CUDA events (median of --reps after a warm-up, TF32 off): cuBLAS SSYRK
through CuPy on b = A·sqrt(d) (the lower triangle of A·diag(d)·Aᵀ, n = 2m), cuSOLVER's Cholesky
(torch.linalg.cholesky) and torch.cholesky_solve with 1 and 16 right-hand sides at the orders
--solve-m (comma-separated), and writes op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio (ratio =
ours / vendor; ours is the faster of full and RFP storage where both were timed, named in the
vendor column's note).

    python3 scripts/vendor_baseline.py --parity 4096,8192,16384 --ours ours.csv --parity-out vendor_parity.csv

--applications (issue 26; with --inverse-sizes, --sign-sizes, --ours-inverse from
bench/src/bin/inverse_timing.rs, --ours-sign from bench/src/bin/sign_timing.rs and --applications-out)
times, with CUDA events (median of --reps after warm-up, TF32 off): torch.linalg.inv
(inverse_general), torch.cholesky_inverse after torch.linalg.cholesky (inverse_spd), and the
scaled Newton sign iteration and the Lyapunov solver written in torch as src/inverse/ runs them
(sign, lyapunov: f32 iterates with torch.linalg.inv per step, the same scaling, stopping rule,
f64 polish, commutation test and f64 residual refinement), and writes
op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio (ours: the faster of our methods, named).

    python3 scripts/vendor_baseline.py --applications --ours-inverse inv.csv --ours-sign sign.csv --applications-out applications.csv

--batched N:B,... (with --ours CSV from bench/src/bin/batched_bench.rs and --parity-out) times the
torch pipeline for B weighted least-squares problems of n unknowns and 2n observations (issue
28): (A·diag(w))·Aᵀ and (A·diag(w))·b by bmm, torch.linalg.cholesky and torch.cholesky_solve
on (B, n, n), fp32, CUDA events, median of --reps after warm-up; once with the data already on
the GPU (op batched_wls) and once with the host-to-device copy of A, w and b counted
(batched_wls_with_upload). Rows as --parity's, the order n in column m and B in column n.

    python3 scripts/vendor_baseline.py --batched 8:100000,16:100000,32:20000,128:1000 --ours batched.csv --parity-out batched_parity.csv

--wls SIZES times torch f64 on the GPU solving the tables' weighted least squares (m x 2m, from
host arrays: C = (A·d)·Aᵀ, potrf, potrs, x back; wall time, median of --reps after a warm-up)
and merges the rows `wls,m,seconds,label` into --out (other rows kept), where `reproduce`'s
Tables 1-2 find them for their torch columns.

    python3 scripts/vendor_baseline.py --wls 512,1024,1536,2048,4096 --out figures/h200/vendor.csv

--syrk SIZES likewise merges cuBLAS SSYRK's times (op syrk: the lower triangle of b·bᵀ, b = A·sqrt(d),
n = 2m; CuPy, CUDA events) for the throughput figure's SSYRK line.
"""
import argparse
import csv
import io
import os
import statistics
import sys
import time

import numpy as np
import torch


def csv_line(*fields):
    """One CSV line (no line end) by the csv module: a field holding a comma, a quote or a line
    break is quoted, so any CSV reader reads the row back field for field."""
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(fields)
    return out.getvalue()


def csv_fields(line):
    """The fields of one CSV line (quoted fields unquoted)."""
    return next(csv.reader([line]), [])


def sizes(text):
    if text in ("", None):
        return []
    if text == "paper":
        return None
    return [int(s) for s in text.split(",") if s.strip()]


def csv_rows(path):
    """The rows of one of our benchmarks' CSV files as dicts: its first line that is neither
    blank nor a '#' comment is the header."""
    header = None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            if header is None:
                header = csv_fields(line.strip())
                continue
            yield dict(zip(header, csv_fields(line.strip())))


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
    for row in csv_rows(args.ours):
        if row.get("method") != "tiled":
            continue
        key = (row["op"], int(row["m"]), int(row["n"]))
        ours.setdefault(key, []).append((float(row["ms"]), row["format"]))
    rows = []

    def add(op, m, n, rhs, vendor, vendor_ms, key):
        best = min(ours.get(key, []), default=None)
        mine = "" if best is None else f"{best[0]:.4f}"
        ratio = "" if best is None else f"{best[0] / vendor_ms:.3f}"
        note = vendor if best is None else f"{vendor} (ours {best[1]})"
        rows.append(csv_line(op, m, n, rhs, mine, note, f"{vendor_ms:.4f}", ratio))
        print(rows[-1], file=sys.stderr, flush=True)

    rng = np.random.default_rng(1)
    for m in sizes(args.parity):
        ms = syrk_ms(m, rng, args.reps)
        add("assembly", m, 2 * m, "", "cuBLAS SSYRK (CuPy; lower; fp32)", ms, ("assembly", m, 2 * m))
    for m in sizes(args.parity):
        x = torch.rand(m, m, device="cuda") - 0.5
        spd = torch.tril(x, -1) + torch.tril(x, -1).T + m * torch.eye(m, device="cuda")
        ms = cuda_ms(lambda: torch.linalg.cholesky(spd), args.reps)
        add("cholesky", m, m, "", "cuSOLVER potrf (torch.linalg.cholesky; fp32)", ms, ("cholesky", m, m))
        if m in sizes(args.solve_m):
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
        f.write("\n".join(sorted(rows, key=lambda r: order.index(csv_fields(r)[0]))) + "\n")
    print(f"wrote {args.parity_out} ({name}, torch {torch.__version__}, cupy {cupy.__version__})", file=sys.stderr)


def apps(args):
    """Issue 26's end-to-end solves beside ours (--apps-ours, from bench/src/bin/solve_bench.rs):
    torch f64 on the GPU from host arrays, transfers included (wall time, median of --reps
    after a warm-up): weighted least squares (C = (A·d)·Aᵀ, potrf, potrs on A·(d·b), x back;
    A, d, b uniform in (0, 1), n = 2m) and the SPD solve (C up, potrf, potrs, x back)."""
    ours = {(row["op"], int(row["m"])): float(row["median_ms"]) for row in csv_rows(args.apps_ours)}
    rng = np.random.default_rng(3)
    rows = []

    def add(op, m, n, vendor, vendor_ms, key):
        mine = ours.get(key)
        rows.append(csv_line(op, m, n, 1, "" if mine is None else f"{mine:.3f}", vendor, f"{vendor_ms:.3f}",
                             "" if mine is None else f"{mine / vendor_ms:.3f}"))
        print(rows[-1], file=sys.stderr, flush=True)

    for m in sizes(args.apps):
        n = 2 * m
        a = rng.random((m, n))
        d = rng.random(n)
        b = rng.random(n)
        ms = median_wall_ms(lambda: torch_wls(a, d, b), args.reps)
        add("wls", m, n, "torch f64 on the GPU from host arrays (matmul; potrf; potrs)", ms, ("wls", m))
        del a
    for m in sizes(args.apps_spd):
        c = rng.uniform(-1, 1, (m, m))
        c = np.tril(c, -1) + np.tril(c, -1).T + m * np.eye(m)
        b = rng.random(m)

        def spd():
            low = torch.linalg.cholesky(torch.from_numpy(c).cuda())
            return torch.cholesky_solve(torch.from_numpy(b).cuda()[:, None], low).cpu().numpy()

        add("spd_solve", m, m, "torch f64 on the GPU from host arrays (potrf; potrs)", median_wall_ms(spd, args.reps), ("spd", m))
        del c
        torch.cuda.empty_cache()
    with open(args.apps_out, "w") as f:
        f.write("\n".join(rows) + "\n")
    print(f"wrote {args.apps_out}", file=sys.stderr)


# The Newton iteration's constants (src/inverse/newton.rs STOP_SCALING, src/inverse/sign.rs
# CONVERGED and SignOptions::default).
STOP_SCALING = 1e-2
CONVERGED = 1e-4
MAX_ITERATIONS = 20
POLISH_STEPS = 6


def median_wall_ms(fn, reps):
    """Median wall milliseconds of fn() over `reps` calls after one warm-up call."""
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out)


def torch_wls(a, d, b):
    """Weighted least squares in torch f64 on the GPU from host arrays: C = (A·d)·Aᵀ, potrf
    (cholesky_ex: no exception where C is not positive definite in f64), potrs on A·(d·b),
    x back to the host."""
    ag = torch.from_numpy(a).cuda()
    dg = torch.from_numpy(d).cuda()
    bg = torch.from_numpy(b).cuda()
    low, _ = torch.linalg.cholesky_ex((ag * dg) @ ag.T)
    return torch.cholesky_solve((ag @ (dg * bg))[:, None], low).cpu().numpy()


def wls_rows(args):
    """--wls: torch f64's end-to-end weighted least-squares time per m, merged into --out."""
    rng = np.random.default_rng(5)
    label = f"torch {torch.__version__} f64 on {torch.cuda.get_device_name(0)}"
    rows = []
    for m in sizes(args.wls):
        n = 2 * m
        a, d, b = rng.random((m, n)), rng.random(n), rng.random(n)

        ms = median_wall_ms(lambda: torch_wls(a, d, b), args.reps)
        rows.append(csv_line("wls", m, f"{ms / 1e3:.6e}", label))
        print(rows[-1], file=sys.stderr, flush=True)
    merge_rows(args.out, "wls", rows)


def syrk_rows(args):
    """--syrk: cuBLAS SSYRK's time per m (lower triangle of b·bᵀ with b = A·sqrt(d), n = 2m,
    CuPy, CUDA events, TF32 off), merged into --out as op syrk for the throughput figure."""
    import cupy
    label = f"cuBLAS SSYRK via CuPy {cupy.__version__}"
    rng = np.random.default_rng(1)
    rows = []
    for m in sizes(args.syrk):
        rows.append(csv_line("syrk", m, f"{syrk_ms(m, rng, args.reps) / 1e3:.6e}", label))
        print(rows[-1], file=sys.stderr, flush=True)
    merge_rows(args.out, "syrk", rows)


def syrk_ms(m, rng, reps):
    """cuBLAS SSYRK's median ms (CuPy, CUDA events) for the lower triangle of b·bᵀ with
    b = A·sqrt(d), A m x 2m and d uniform (d + 0.5 > 0)."""
    import cupy
    import cupy.cublas
    n = 2 * m
    a = cupy.asarray(rng.random((m, n), dtype=np.float32))
    d = cupy.asarray(rng.random(n, dtype=np.float32) + 0.5)
    b = a * cupy.sqrt(d)
    c = cupy.zeros((m, m), dtype=cupy.float32)
    ms = cuda_ms(lambda: cupy.cublas.syrk("N", b, out=c, lower=True), reps)
    del a, b, c
    cupy.get_default_memory_pool().free_all_blocks()
    return ms


def merge_rows(path, op, rows):
    """Replaces the rows of `op` in the vendor CSV at `path` (created if missing) by `rows`."""
    kept = []
    if os.path.exists(path):
        with open(path) as f:
            kept = [line.rstrip("\n") for line in f if line.strip() and csv_fields(line)[:1] != [op]]
    if not kept:
        kept = ["op,m,seconds,label"]
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        f.write("\n".join(kept + rows) + "\n")
    os.replace(tmp, path)
    print(f"merged {len(rows)} {op} rows into {path}", file=sys.stderr)


def power_of_two_scale(a):
    """2^k bringing the largest |entry| into [1, 2) (src/inverse/sign.rs)."""
    m = a.abs().max().item()
    if m == 0 or not np.isfinite(m):
        return 1.0
    k = -int(np.floor(np.log2(m)))
    scale = 2.0 ** k
    if m * scale >= 2:
        scale *= 0.5
    elif m * scale < 1:
        scale *= 2
    return scale


def newton(a32, keep):
    """The scaled Newton iteration on f32 iterates (src/inverse/newton.rs): returns the last
    iterate and, with keep, every (mu, X_k^-1)."""
    x = a32.clone()
    norm_x = torch.linalg.matrix_norm(x).item()
    scale, previous, inverses = True, float("inf"), []
    for it in range(MAX_ITERATIONS):
        y = torch.linalg.inv(x)
        mu = (torch.linalg.matrix_norm(y).item() / norm_x) ** 0.5 if scale else 1.0
        nxt = (0.5 * mu) * x + (0.5 / mu) * y
        delta = (torch.linalg.matrix_norm(nxt - x) / torch.linalg.matrix_norm(nxt)).item()
        x = nxt
        norm_x = torch.linalg.matrix_norm(x).item()
        if keep:
            inverses.append((mu, y))
        if not np.isfinite(delta):
            raise RuntimeError("an iterate is not finite")
        if delta < STOP_SCALING:
            scale = False
        if delta <= CONVERGED or (delta < STOP_SCALING and delta > 0.5 * previous):
            return x, inverses
        previous = delta
    raise RuntimeError("the Newton iteration did not converge")


def torch_sign(a64, f64_correction=False):
    """sign(A) as src/inverse/sign.rs with refine_inverses off (bench/src/bin/sign_timing.rs): f32
    Newton iteration, then Newton-Schulz polish S <- S + S(I - S^2)/2 (I - S^2 in f64, its
    product with S in f32 unless f64_correction) while ||I - S^2||
    drops and is above eps*sqrt(n) (= eps*||I||_F), stopping after the first step that does not
    halve it, then ||AS - SA||_F / (||A|| ||S||)
    in f64."""
    a64 = a64 * power_of_two_scale(a64)
    x, _ = newton(a64.float(), False)
    s = x.double()
    eye = torch.eye(s.shape[0], dtype=torch.float64, device=s.device)
    e = eye - s @ s
    r = torch.linalg.matrix_norm(e).item()
    done = np.finfo(np.float64).eps * np.sqrt(s.shape[0])
    for _ in range(POLISH_STEPS):
        if r >= 1 or r <= done:
            break
        # The correction S·E as an f32 product of S and E/||E||_F rounded (E itself in f64),
        # as ours by default (PolishCorrection::Single); f64_correction: in f64 (Double).
        if f64_correction:
            nxt = s + 0.5 * (s @ e)
        else:
            nxt = s + (0.5 * r) * (s.float() @ (e / r).float()).double()
        e_next = eye - nxt @ nxt
        r_next = torch.linalg.matrix_norm(e_next).item()
        if not np.isfinite(r_next) or r_next >= r:
            break
        halves = r_next <= 0.5 * r
        s, e, r = nxt, e_next, r_next
        if not halves:
            break
    c = torch.linalg.matrix_norm(a64 @ s - s @ a64) / (torch.linalg.matrix_norm(a64) * torch.linalg.matrix_norm(s))
    return s, c.item()


def torch_lyapunov(a64, q64, refine_steps):
    """A X + X A^T = Q as src/inverse/lyapunov.rs: the A-iteration in f32 keeping (mu, A_k^-1),
    the C-iteration C <- (mu C + A_k^-1 C A_k^-T / mu)/2 in f32 applied to Q and to the f64
    residual Q - AX - XA^T, X = -C/2, refined while the residual drops."""
    sa, sq = power_of_two_scale(a64), power_of_two_scale(q64)
    a, q = a64 * sa, q64 * sq
    ak, steps = newton(a.float(), True)

    def apply(r):
        scale = r.abs().max().item()
        if scale == 0:
            return torch.zeros_like(r)
        c = (r / scale).float()
        for mu, y in steps:
            c = (0.5 / mu) * ((y @ c) @ y.T) + (0.5 * mu) * c
        return -0.5 * scale * c.double()

    symmetric = bool(torch.equal(q, q.T))

    def residual(x):
        # A symmetric Q keeps X symmetric, so X·Aᵀ = (A·X)ᵀ: one product, as ours takes it.
        if symmetric:
            t = a @ x
            r = q - t - t.T
        else:
            r = q - a @ x - x @ a.T
        return r, (torch.linalg.matrix_norm(r) / (torch.linalg.matrix_norm(a) * torch.linalg.matrix_norm(x))).item()

    x = apply(q)
    x = 0.5 * (x + x.T)
    r, norm = residual(x)
    for _ in range(refine_steps):
        nxt = x + apply(r)
        nxt = 0.5 * (nxt + nxt.T)
        r_next, norm_next = residual(nxt)
        if not np.isfinite(norm_next) or norm_next >= norm:
            break
        x, r, norm = nxt, r_next, norm_next
    return x * (sa / sq), norm


def test_hash(s):
    """src/inverse/bench.rs test_matrix's hash of (i, j) for all i, j < s, as f32 in (-1/2, 1/2)."""
    with np.errstate(over="ignore"):
        i = np.arange(s, dtype=np.uint64)[:, None]
        j = np.arange(s, dtype=np.uint64)[None, :]
        h = (i * np.uint64(0x9E3779B97F4A7C15)) ^ (j + np.uint64(0x632BE59B))
        h ^= h >> np.uint64(29)
        h = h * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
    return ((h >> np.uint64(40)).astype(np.float32) / np.float32(1 << 24) - np.float32(0.5)).astype(np.float32)


def stable(s, device):
    """bench/src/bin/sign_timing.rs's stable A, -(the SPD test matrix)/s plus a skew part, in f64,
    entry for entry."""
    h = test_hash(s)
    lower = np.tril(h)  # hash(max(i, j), min(i, j)): the lower triangle mirrored
    spd = (lower + np.tril(h, -1).T + np.float32(s) * np.eye(s, dtype=np.float32)).astype(np.float32)
    k = (h - h.T).astype(np.float32).astype(np.float64)
    idx = np.arange(s)
    k[idx, (idx + 1) % s] = 0.0
    k[(idx + 1) % s, idx] = 0.0
    a = -spd.astype(np.float64) / s + k / np.sqrt(s)
    return torch.tensor(a, dtype=torch.float64, device=device)


def applications(args):
    """Issue 26's rows: the vendor's time for the inverses, sign and Lyapunov beside ours."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    name = torch.cuda.get_device_name(0)
    dev = torch.device("cuda")
    ours = {}
    if args.ours_inverse:
        for row in csv_rows(args.ours_inverse):
            if row.get("gpu_ms", "-") == "-":
                continue
            op = "inverse_spd" if row["kind"] == "spd" else "inverse_general"
            label = f"{row['method']} {row['storage']}"
            ours.setdefault((op, int(row["s"])), []).append((float(row["gpu_ms"]), label))
    if args.ours_sign:
        with open(args.ours_sign) as f:
            for line in f:
                parts = csv_fields(line.strip())
                # Rows sign and lyap (the defaults), sign_newton (Newton to convergence, no
                # hand-over), sign_f64polish (the hand-over straight to the f64 polish, no f32
                # Newton-Schulz steps), sign_f64corr (that with the f64 polish correction),
                # sign_refined (each inverse refined in f64, the library's default),
                # lyap_fresh (squares allocated per call), sign_perpass and lyap_perpass (three
                # read-backs per Newton step, NewtonSync::PerPass).
                names = {"sign": "sign", "sign_newton": "sign_newton", "sign_f64polish": "sign_f64polish",
                         "sign_f64corr": "sign_f64corr", "sign_refined": "sign_refined", "lyap": "lyapunov", "lyap_fresh": "lyapunov_fresh",
                         "sign_perpass": "sign_perpass", "lyap_perpass": "lyapunov_perpass"}
                if len(parts) == 5 and parts[0] in names:
                    op = names[parts[0]]
                    ours.setdefault((op, int(parts[1])), []).append((float(parts[3]), f"{parts[2]} iterations, wall"))
                    # Ours is host to host either way: the default rows again against torch's
                    # from and to numpy arrays.
                    if op in ("sign", "lyapunov"):
                        ours.setdefault((op + "_from_host", int(parts[1])), []).append(
                            (float(parts[3]), f"{parts[2]} iterations, wall"))
    rows = []

    def add(op, m, vendor, vendor_ms):
        best = min(ours.get((op, m), []), default=None)
        mine = "" if best is None else f"{best[0]:.4f}"
        ratio = "" if best is None else f"{best[0] / vendor_ms:.3f}"
        note = vendor if best is None else f"{vendor} (ours {best[1]})"
        rows.append(csv_line(op, m, m, "", mine, note, f"{vendor_ms:.4f}", ratio))
        print(rows[-1], file=sys.stderr, flush=True)

    rng = np.random.default_rng(1)
    for s in sizes(args.inverse_sizes):
        x = rng.uniform(-0.5, 0.5, (s, s)).astype(np.float32)
        general = torch.tensor(x + s * np.eye(s, k=1, dtype=np.float32), device=dev)
        spd = torch.tensor(np.tril(x) + np.tril(x, -1).T + s * np.eye(s, dtype=np.float32), device=dev)
        add("inverse_general", s, "torch.linalg.inv (cuSOLVER getrf + getrs; fp32)",
            cuda_ms(lambda: torch.linalg.inv(general), args.reps))
        add("inverse_spd", s, "torch.cholesky_inverse after torch.linalg.cholesky (fp32)",
            cuda_ms(lambda: torch.cholesky_inverse(torch.linalg.cholesky(spd)), args.reps))
        del general, spd
        torch.cuda.empty_cache()
    reps = max(1, min(args.reps, 3))
    for s in sizes(args.sign_sizes):
        a = stable(s, dev)
        _, c = torch_sign(a)
        sign_ms = cuda_ms(lambda: torch_sign(a), reps)
        add("sign", s, f"scaled Newton in torch (f32 torch.linalg.inv per step, f64 polish; commutation {c:.1e})",
            sign_ms)
        if ("sign_newton", s) in ours:
            add("sign_newton", s, "the same torch sign (ours: Newton to convergence, no hand-over)", sign_ms)
        if ("sign_f64polish", s) in ours:
            add("sign_f64polish", s, "the same torch sign (ours: the hand-over straight to the f64 polish)", sign_ms)
        if ("sign_refined", s) in ours:
            add("sign_refined", s, "the same torch sign (ours: each inverse refined in f64, the library's default)", sign_ms)
        if ("sign_perpass", s) in ours:
            add("sign_perpass", s, "the same torch sign (ours: three read-backs per Newton step)", sign_ms)
        if ("sign_f64corr", s) in ours:
            add("sign_f64corr", s, "the same with the f64 polish correction",
                cuda_ms(lambda: torch_sign(a, True), reps))
        # Ours runs from a host array to a host array: torch the same way too (A up from a
        # numpy array, S back into one), beside its time on the device alone above.
        a_host = a.cpu().numpy()
        add("sign_from_host", s, "the same torch sign from and to numpy arrays (A up, S down)",
            cuda_ms(lambda: torch_sign(torch.from_numpy(a_host).to(dev))[0].cpu().numpy(), reps))
        q = torch.eye(s, dtype=torch.float64, device=dev)
        _, r = torch_lyapunov(a, q, 2)
        lyap_ms = cuda_ms(lambda: torch_lyapunov(a, q, 2), reps)
        add("lyapunov", s, f"Newton sign-function Lyapunov in torch (f32 iteration, f64 residual; residual {r:.1e})",
            lyap_ms)
        q_host = q.cpu().numpy()
        add("lyapunov_from_host", s, "the same torch Lyapunov from and to numpy arrays (A, Q up, X down)",
            cuda_ms(lambda: torch_lyapunov(torch.from_numpy(a_host).to(dev), torch.from_numpy(q_host).to(dev),
                                           2)[0].cpu().numpy(), reps))
        if ("lyapunov_perpass", s) in ours:
            add("lyapunov_perpass", s, "the same torch Lyapunov (ours: three read-backs per Newton step)", lyap_ms)
        if ("lyapunov_fresh", s) in ours:
            add("lyapunov_fresh", s, "the same torch Lyapunov (ours: squares allocated per call)",
                cuda_ms(lambda: torch_lyapunov(a, q, 2), reps))
        del a, q
        torch.cuda.empty_cache()
    with open(args.applications_out, "w") as f:
        f.write("op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio\n")
        order = ("inverse_general", "inverse_spd", "sign", "sign_from_host", "sign_newton", "sign_f64polish",
                 "sign_f64corr", "sign_perpass", "sign_refined", "lyapunov", "lyapunov_from_host",
                 "lyapunov_fresh", "lyapunov_perpass")
        f.write("\n".join(sorted(rows, key=lambda r: (order.index(csv_fields(r)[0]), int(csv_fields(r)[1])))) + "\n")
    print(f"wrote {args.applications_out} ({name}, torch {torch.__version__})", file=sys.stderr)


def batched(args):
    """The torch pipeline for many small weighted least-squares problems beside ours."""
    torch.backends.cuda.matmul.allow_tf32 = False
    name = torch.cuda.get_device_name(0)
    ours = {(row["op"], int(row["m"]), int(row["n"])): float(row["ms"]) for row in csv_rows(args.ours)}
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
            rows.append(csv_line(op, n, count, "", "" if mine is None else f"{mine:.4f}", vendor, f"{ms:.4f}",
                                 "" if mine is None else f"{mine / ms:.3f}"))
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
    p.add_argument("--ours", default="", help="bench/src/bin/tiled_bench.rs CSV for --parity")
    p.add_argument("--parity-out", default="figures/h200/vendor_parity.csv")
    p.add_argument("--solve-m", default="8192", help="orders of the --parity solves, comma-separated")
    p.add_argument("--apps", default="", help="orders m for the end-to-end least-squares rows")
    p.add_argument("--apps-spd", default="", help="orders m for the end-to-end SPD-solve rows")
    p.add_argument("--apps-ours", default="", help="bench/src/bin/solve_bench.rs CSV for --apps")
    p.add_argument("--apps-out", default="apps_parity.csv", help="rows (no header) for --apps")
    p.add_argument("--applications", action="store_true", help="issue 26's inverse, sign and Lyapunov rows")
    p.add_argument("--inverse-sizes", default="4096,8192", help="orders of --applications' inverses")
    p.add_argument("--sign-sizes", default="1024,4096", help="orders of --applications' sign and Lyapunov")
    p.add_argument("--ours-inverse", default="", help="bench/src/bin/inverse_timing.rs CSV for --applications")
    p.add_argument("--ours-sign", default="", help="bench/src/bin/sign_timing.rs CSV for --applications")
    p.add_argument("--applications-out", default="figures/h200/applications.csv")
    p.add_argument("--batched", default="", help="N:B pairs for the batched least-squares comparison")
    p.add_argument("--wls", default="", help="orders m for the tables' torch f64 least-squares times (merged into --out)")
    p.add_argument("--syrk", default="", help="orders m for cuBLAS SSYRK's times (n = 2m; merged into --out)")
    args = p.parse_args()
    if args.wls or args.syrk:
        if args.wls:
            wls_rows(args)
        if args.syrk:
            syrk_rows(args)
        return
    if args.apps or args.apps_spd:
        apps(args)
        return
    if args.applications:
        applications(args)
        return
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
            f.write(csv_line(op, m, f"{s:.6e}", label) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {len(rows)} timings with {label}", file=sys.stderr)


if __name__ == "__main__":
    main()
