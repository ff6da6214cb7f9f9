#!/usr/bin/env bash
# Issue 25's split Cholesky (CholeskySchedule::Split, src/tiled/cholesky_split.rs: spftrf's
# halves recursively, each half of at most the chain order by one chained launch, L21 by
# products with L11's inverted diagonal tiles, the trailing half by one lower-tile SYRK)
# against the blocked launches, the chain/Auto and torch.linalg.cholesky (cuSOLVER) in one run
# on the H200. Writes under OUT (default $OUT, else figures/h200):
#   cholesky_split.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS):
#                             `tiled` / `tiled-blocked` / `tiled-auto` (the device's defaults,
#                             full and RFP), `tiled-d64-o512-f0-columns-chain` (one launch, 4096),
#                             `tiled-d64-o512-f0-columns-split-c<C>` (the split with halves of
#                             at most C = 2048, 4096 chained; full and RFP, whose two halves are
#                             split the same way)
#   cholesky_split_pieces.csv the split's first split timed piece by piece (C = 4096, full):
#                             op split-l11 (the left half's factor: one chain at 8192),
#                             split-l21 (the solve of (m−n1) x n1), split-syrk (B22 − L21·L21ᵀ),
#                             split-l22 (the trailing half's factor); n = n1
#   cholesky_split_log.txt    stderr; per split variant the factor's residual
#                             ‖L·(Lᵀ·x) − C·x‖/‖C·x‖ (about 1e-6 when right) and the number of
#                             chained launches (`chained N`: 2 at 8192 with C = 4096)
#   cholesky_split_torch.csv  m,torch_ms: torch.linalg.cholesky (fp32), CUDA events, median of
#                             20 after 3 warm-ups
#   cholesky_split_best.txt   per size: every row with its ratio to torch
# Run from the repository root on the GPU machine with the release example carried at
# .k25/ex/tiled_bench (cargo build --release --example tiled_bench; BENCH=… another path):
#
#     OUT=$OUT scripts/h200_cholesky_split.sh      (RUNS=5)
# About 3 minutes (at most 4 by the timeouts).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes="4096 8192 16384"
runs=${RUNS:-5}
log="$out/cholesky_split_log.txt"
csv="$out/cholesky_split.csv"
: > "$log"
timeout 45 "$bench" --runs "$runs" --ops c --formats full,rfp --schedule blocked,auto $sizes \
    > "$csv" 2>> "$log"
echo "blocked, auto: exit $?"
timeout 20 "$bench" --runs "$runs" --ops c --formats full --diag 64 --outer 512 \
    --factor columns --schedule chain 4096 2>> "$log" | tail -n +2 >> "$csv"
echo "chain: exit $?"
timeout 60 "$bench" --runs "$runs" --ops c --formats full,rfp --diag 64 --outer 512 \
    --factor columns --schedule split --split-chain 2048,4096 $sizes 2>> "$log" \
    | tail -n +2 >> "$csv"
echo "split: exit $?"
timeout 30 "$bench" --runs "$runs" --ops x --formats full --diag 64 --outer 512 \
    --factor columns --schedule split --split-chain 4096 8192 16384 2>> "$log" \
    > "$out/cholesky_split_pieces.csv"
echo "pieces: exit $?"
cat "$out/cholesky_split_pieces.csv"
timeout 40 "$bench" --ops v --formats full,rfp --diag 64 --outer 512 --factor columns \
    --schedule split --split-chain 2048,4096 4096 8192 2>> "$log" > /dev/null
echo "verify: exit $?"
grep -E "verify" "$log"
timeout 30 python3 - $sizes > "$out/cholesky_split_torch.csv" <<'PY'
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
torch = {int(r["m"]): float(r["torch_ms"]) for r in csv.DictReader(open(f"{out}/cholesky_split_torch.csv"))}
rows = {}
for r in csv.DictReader(open(f"{out}/cholesky_split.csv")):
    rows.setdefault(int(r["m"]), []).append((float(r["ms"]), r["method"], r["format"]))
with open(f"{out}/cholesky_split_best.txt", "w") as f:
    for m in sorted(rows):
        t = torch.get(m)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / t:.3f}" if t else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (torch {t} ms)", file=f)
PY
cat "$out/cholesky_split_best.txt"
