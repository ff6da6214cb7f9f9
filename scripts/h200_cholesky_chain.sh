#!/usr/bin/env bash
# Issue 25's chained Cholesky (glsl/tiled/potrf_chain.comp) against the blocked launches and
# cuSOLVER in one run on the H200, the diagonal tiles factored column by column (`columns`,
# potrf_inv_fn.glsl) or by the lanes of one subgroup (`lanes`, potrf_inv_lanes.glsl: tiles of
# 32; tiles of 64 fall back to the columns). Writes under OUT (default $OUT, else figures/h200):
#   cholesky_chain.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS):
#                             `tiled-blocked` (the defaults: diagonal blocks of 64, full and RFP)
#                             `tiled-d<T>-o512-f0-<factor>-chain` (one launch, T = 32, 64, at
#                             1024 to 4096), `tiled-d<T>-o<W>-f0-<factor>-panels` (per outer
#                             block of W columns one chained launch and one trailing product;
#                             T = 64 with W = 1024 and T = 32 with W = 512, at 8192 and 16384),
#                             `tiled-d32-o512-f0-lanes-auto` (CholeskySchedule::Auto: the chain
#                             to 4096, panels of at least 1024 to 8192, blocked above)
#   cholesky_chain_log.txt    per lanes variant: the factor's residual ‖L·(Lᵀ·x) − C·x‖/‖C·x‖
#                             (about 1e-6 when right) and `chained 1` where the chain ran
#   cholesky_chain_torch.csv  m,torch_ms: torch.linalg.cholesky (cuSOLVER potrf, fp32), CUDA
#                             events, median of 20 after 3 warm-ups
#   cholesky_chain_best.txt   per size: every row with its ratio to torch
# Run from the repository root on the GPU machine with the release example carried at
# .k25/ex/tiled_bench (cargo build --release --example tiled_bench; BENCH=… another path):
#
#     OUT=$OUT scripts/h200_cholesky_chain.sh      (RUNS=5)
# About 3 minutes (at most 5 by the timeouts).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes="1024 2048 4096 8192 16384"
runs=${RUNS:-5}
timeout 60 "$bench" --runs "$runs" --ops c --formats full,rfp --schedule blocked $sizes \
    > "$out/cholesky_chain.csv" 2> "$out/cholesky_chain_log.txt"
echo "blocked: exit $?"
timeout 40 "$bench" --runs "$runs" --ops c --formats full --diag 32,64 --factor columns,lanes \
    --schedule chain 1024 2048 4096 2>> "$out/cholesky_chain_log.txt" \
    | tail -n +2 >> "$out/cholesky_chain.csv"
echo "chain: exit $?"
for tw in "64 1024" "32 512"; do
    set -- $tw
    timeout 40 "$bench" --runs "$runs" --ops c --formats full --diag "$1" --outer "$2" \
        --factor columns,lanes --schedule panels 8192 16384 2>> "$out/cholesky_chain_log.txt" \
        | tail -n +2 >> "$out/cholesky_chain.csv"
    echo "panels T=$1 W=$2: exit $?"
done
timeout 40 "$bench" --runs "$runs" --ops c --formats full --diag 32 --factor lanes \
    --schedule auto $sizes 2>> "$out/cholesky_chain_log.txt" \
    | tail -n +2 >> "$out/cholesky_chain.csv"
echo "auto: exit $?"
timeout 30 "$bench" --ops v --formats full --diag 32 --factor lanes --schedule chain,panels \
    1024 4096 8192 2>> "$out/cholesky_chain_log.txt" > /dev/null
echo "verify: exit $?"
grep -E "verify" "$out/cholesky_chain_log.txt"
# The chain kernel's binary per factor: local-memory traffic (lmem / .local / STL, LDL) in the
# lanes one would mean its unrolled arrays left the registers.
timeout 20 "$bench" --ops v --formats full --diag 32 --factor columns,lanes --schedule chain \
    --dump "$out/cholesky_chain_bin" 64 2>> "$out/cholesky_chain_log.txt" > /dev/null
for f in "$out"/cholesky_chain_bin/*.potrf_chain.bin; do
    echo "$(basename "$f"): $(wc -c < "$f") bytes, local memory lines: \
$(grep -a -c -i -E 'lmem|\.local|[^a-z]stl[^a-z]|[^a-z]ldl[^a-z]' "$f")"
done | tee -a "$out/cholesky_chain_log.txt"
timeout 45 python3 "$(dirname "$0")/torch_cholesky.py" $sizes > "$out/cholesky_chain_torch.csv"
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
