#!/usr/bin/env bash
# Issue 25's split Cholesky (CholeskySchedule::Split, src/tiled/cholesky_split.rs: spftrf's
# halves recursively, each half of at most the chain order by one chained launch, L21 below it
# by the chosen solve, the trailing half by one lower-tile SYRK) against the blocked launches,
# Auto and torch.linalg.cholesky (cuSOLVER) in one run on the H200. Round 2: the solve of L21
# (Tuning::split_solve: `tiles`, the chain's inverted tiles as in round 1; `l<W>`/`r<W>`, blocks
# of 128 inverted in one launch and outer blocks of W left/right-looking, `…b64` blocks of 64;
# src/tiled/trsm_wide.rs)
# and the leaves' own tiles (the whole split's kernels built with --diag 32 or 64, the chain's
# factor columns/pairs, fold 0/1). Writes under OUT (default $OUT, else figures/h200):
#   cholesky_split_solves.csv the split's first split at 8192 (C = 4096, tiles of 64, columns)
#                             and at 4096 (C = 2048, tiles of 32, pairs, fold) timed piece by
#                             piece for every solve: ops split-l11, split-l21 (the solve of
#                             (m−n1) x n1), split-syrk, split-l22; method suffix -solve<name>
#   cholesky_split.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS):
#                             `tiled-blocked` / `tiled-auto` (full and RFP), and the grid
#                             `tiled-d<32|64>-o512-f0-<columns|pairs>-split-fold<0|1>-c<C>-solve<S>`
#                             for C = 1024, 2048, 4096 and S the fastest wide solve of
#                             cholesky_split_solves.csv at 8192 (full and RFP at 4096, 8192, 16384)
#   cholesky_split_log.txt    stderr; the split's factor's residual ‖L·(Lᵀ·x) − C·x‖/‖C·x‖
#                             (`verify`: about 1e-6 when right) and its number of chained
#                             launches, tiles of 32 and 64, pairs, fold, C = 2048 and 4096,
#                             the tiles' and the grid's solve, at 4096 and 8192
#   cholesky_split_torch.csv  m,torch_ms: torch.linalg.cholesky (fp32), CUDA events, median of
#                             20 after 3 warm-ups
#   cholesky_split_best.txt   per size the best row of each format first, then every row with
#                             its ratio to torch; then the solves' split-l21 times
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
solves_csv="$out/cholesky_split_solves.csv"
solves="tiles,l512,l1024,l2048,r512,r1024,r2048,l1024b64,r1024b64"
: > "$log"
timeout 40 "$bench" --runs "$runs" --ops c --formats full,rfp --schedule blocked,auto $sizes \
    > "$csv" 2>> "$log"
echo "blocked, auto: exit $?"
timeout 25 "$bench" --runs "$runs" --ops x --formats full --diag 64 --outer 512 \
    --factor columns --schedule split --split-chain 4096 --split-solve "$solves" 8192 \
    2>> "$log" > "$solves_csv"
echo "solves at 8192: exit $?"
timeout 20 "$bench" --runs "$runs" --ops x --formats full --diag 32 --outer 512 \
    --factor pairs --fold 1 --schedule split --split-chain 2048 --split-solve "$solves" 4096 \
    2>> "$log" | tail -n +2 >> "$solves_csv"
echo "solves at 4096: exit $?"
cat "$solves_csv"
# The fastest wide solve at 8192 (l1024 where none ran).
best_solve=$(python3 - "$solves_csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["op"] == "split-l21" and r["m"] == "8192" and "-solvetiles" not in r["method"]]
print(min(rows, key=lambda r: float(r["ms"]))["method"].rsplit("-solve", 1)[1] if rows else "l1024")
PY
)
echo "grid solve: $best_solve"
timeout 95 "$bench" --runs "$runs" --ops c --formats full,rfp --diag 32,64 --outer 512 \
    --factor columns,pairs --fold 0,1 --schedule split --split-chain 1024,2048,4096 \
    --split-solve "$best_solve" $sizes 2>> "$log" | tail -n +2 >> "$csv"
echo "grid: exit $?"
timeout 30 "$bench" --ops v --formats full,rfp --diag 32,64 --outer 512 --factor pairs \
    --fold 1 --schedule split --split-chain 2048,4096 --split-solve "tiles,$best_solve" \
    4096 8192 2>> "$log" > /dev/null
echo "verify: exit $?"
echo "verified rows: $(grep -c 'verify.*residual' "$log"), largest residuals:"
grep 'verify.*residual' "$log" | sed 's/.*residual \([^,]*\),.*/\1 &/' | sort -g | tail -n 3
timeout 30 python3 "$(dirname "$0")/torch_cholesky.py" $sizes > "$out/cholesky_split_torch.csv"
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
        for want in ("full", "rfp"):
            best = [x for x in sorted(rows[m]) if x[2] == want][:1]
            for ms, method, fmt in best:
                ratio = f"{ms / t:.3f}" if t else "?"
                print(f"BEST m {m} {fmt}: {method} {ms:.3f} ms, ratio {ratio} (torch {t} ms)", file=f)
    for m in sorted(rows):
        t = torch.get(m)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / t:.3f}" if t else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (torch {t} ms)", file=f)
    try:
        for r in csv.DictReader(open(f"{out}/cholesky_split_solves.csv")):
            print(f"pieces m {r['m']}: {r['method']} {r['op']} {float(r['ms']):.3f} ms, {r['gflops']} GFLOP/s", file=f)
    except (OSError, KeyError, ValueError) as e:
        print(f"pieces: {e}", file=f)
PY
cat "$out/cholesky_split_best.txt"
