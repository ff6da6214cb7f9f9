#!/usr/bin/env bash
# Issue 25's chained Cholesky (glsl/tiled/potrf_chain.comp) against the blocked launches and
# cuSOLVER in one run on the H200. Writes under OUT (default $OUT, else figures/h200):
#   cholesky_chain.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS):
#                             `tiled-blocked` (the defaults: diagonal blocks of 64, full and RFP)
#                             `tiled-d<T>-o512-f0-chain` (one launch, tiles of T = 32, 64, 128,
#                             full storage), `tiled-d<T>-o<W>-f0-panels` (per outer block of W
#                             columns one chained launch for the panel and one trailing product;
#                             W = 512 for every T, 256 and 1024 for T = 64)
#   cholesky_chain_log.txt    per chained variant and size (to 8192; 16384 with T = 64): the
#                             factor's residual ‖L·(Lᵀ·x) − C·x‖/‖C·x‖ (about 1e-6 when right)
#                             and `chained 1` where the chain ran; the launches per kind
#   cholesky_chain_torch.csv  m,torch_ms: torch.linalg.cholesky (cuSOLVER potrf, fp32), CUDA
#                             events, median of 20 after 3 warm-ups
#   cholesky_chain_best.txt   per size: every row with its ratio to torch
# Run from the repository root on the GPU machine with the release example carried at
# .k25/ex/tiled_bench (cargo build --release --example tiled_bench; BENCH=… another path):
#
#     OUT=$OUT scripts/h200_cholesky_chain.sh      (SIZES="1024 2048 4096 8192 16384",
#                                                   DIAG=32,64,128 RUNS=7)
# About 3 minutes (at most 6 by the timeouts).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes=${SIZES:-1024 2048 4096 8192 16384}
runs=${RUNS:-7}
timeout 80 "$bench" --runs "$runs" --ops c --formats full,rfp --schedule blocked $sizes \
    > "$out/cholesky_chain.csv" 2> "$out/cholesky_chain_log.txt"
echo "blocked: exit $?"
timeout 120 "$bench" --runs "$runs" --ops c --formats full --diag "${DIAG:-32,64,128}" \
    --schedule chain,panels $sizes 2>> "$out/cholesky_chain_log.txt" \
    | tail -n +2 >> "$out/cholesky_chain.csv"
echo "chain, panels: exit $?"
timeout 50 "$bench" --runs "$runs" --ops c --formats full --diag 64 --outer 256,1024 \
    --schedule panels $sizes 2>> "$out/cholesky_chain_log.txt" \
    | tail -n +2 >> "$out/cholesky_chain.csv"
echo "panel widths: exit $?"
timeout 60 "$bench" --ops v,n --formats full --diag "${DIAG:-32,64,128}" --schedule chain,panels \
    1024 4096 8192 2>> "$out/cholesky_chain_log.txt" > /dev/null
timeout 40 "$bench" --ops v,n --formats full --diag 64 --schedule chain,panels 16384 \
    2>> "$out/cholesky_chain_log.txt" > /dev/null
echo "verify: exit $?"
grep -E "verify|launches" "$out/cholesky_chain_log.txt"
timeout 45 python3 - $sizes > "$out/cholesky_chain_torch.csv" <<'PY'
import statistics, sys
import torch
print("m,torch_ms")
for m in map(int, sys.argv[1:]):
    g = torch.Generator(device="cuda").manual_seed(m)
    a = torch.rand(m, m, device="cuda", generator=g)
    spd = a @ a.T + m * torch.eye(m, device="cuda")
    for _ in range(3):
        torch.linalg.cholesky(spd)
    torch.cuda.synchronize()
    ms = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.linalg.cholesky(spd)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    print(f"{m},{statistics.median(ms):.4f}", flush=True)
PY
echo "torch: exit $?"
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
torch = {int(r["m"]): float(r["torch_ms"]) for r in csv.DictReader(open(f"{out}/cholesky_chain_torch.csv"))}
rows = {}
for r in csv.DictReader(open(f"{out}/cholesky_chain.csv")):
    rows.setdefault(int(r["m"]), []).append((float(r["ms"]), r["method"], r["format"]))
with open(f"{out}/cholesky_chain_best.txt", "w") as f:
    for m in sorted(rows):
        t = torch.get(m)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / t:.3f}" if t else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (torch {t} ms)", file=f)
PY
cat "$out/cholesky_chain_best.txt"
