#!/usr/bin/env bash
# Issue 25: the chained Cholesky's critical path (glsl/tiled/potrf_chain.comp) on the H200,
# the current chain against its options and torch.linalg.cholesky (cuSOLVER) in one run:
#   fold0 / fold1     Tuning::chain_fold: the sub-diagonal tile's product L_{j+1,j} = acc·L_jj⁻ᵀ
#                     formed by the group of (j + 1, j + 1) (one flag hand-off fewer per step)
#   columns / pairs / quads   DiagonalFactor: the diagonal tile factored one column per
#                     barrier (potrf_inv_fn.glsl), two (potrf_inv_pairs.glsl) or four
#                     (potrf_inv_steps.glsl)
# at diagonal tiles of 64 (the GPU's default) and 32, orders 1024, 2048 and 4096, full storage,
# CholeskySchedule::Chain. Writes under OUT (default $OUT, else figures/h200):
#   cholesky_path.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS),
#                            method tiled-d<T>-o512-f0-<factor>-chain-fold<0|1>
#   cholesky_path_log.txt    stderr, with per variant and size the factor's residual
#                            ‖L·(Lᵀ·x) − C·x‖/‖C·x‖ (about 1e-6 when right) and `chained 1`
#   cholesky_path_torch.csv  m,torch_ms: torch.linalg.cholesky (fp32), CUDA events, median of
#                            20 after 3 warm-ups
#   cholesky_path_best.txt   per size: every row with its ratio to torch, fastest first
# Run from the repository root on the GPU machine with the release example carried at
# .k25/ex/tiled_bench (cargo build --release --example tiled_bench; BENCH=… another path):
#
#     OUT=$OUT scripts/h200_cholesky_path.sh      (RUNS=5)
# About 1 to 2 minutes (at most 3 by the timeouts).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes="1024 2048 4096"
runs=${RUNS:-5}
: > "$out/cholesky_path_log.txt"
timeout 60 "$bench" --runs "$runs" --ops c,v --formats full --diag 64 --factor columns,pairs,quads \
    --fold 0,1 --schedule chain $sizes > "$out/cholesky_path.csv" 2>> "$out/cholesky_path_log.txt"
echo "tiles 64: exit $?"
timeout 60 "$bench" --runs "$runs" --ops c,v --formats full --diag 32 --factor columns,pairs,quads \
    --fold 0,1 --schedule chain $sizes 2>> "$out/cholesky_path_log.txt" \
    | tail -n +2 >> "$out/cholesky_path.csv"
echo "tiles 32: exit $?"
grep -E "verify|^#" "$out/cholesky_path_log.txt" | head -60
timeout 45 python3 - $sizes > "$out/cholesky_path_torch.csv" <<'PY'
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
torch = {int(r["m"]): float(r["torch_ms"]) for r in csv.DictReader(open(f"{out}/cholesky_path_torch.csv"))}
rows = {}
for r in csv.DictReader(open(f"{out}/cholesky_path.csv")):
    if r.get("op") == "cholesky":
        rows.setdefault(int(r["m"]), []).append((float(r["ms"]), r["method"], r["format"]))
with open(f"{out}/cholesky_path_best.txt", "w") as f:
    for m in sorted(rows):
        t = torch.get(m)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / t:.3f}" if t else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (torch {t} ms)", file=f)
PY
cat "$out/cholesky_path_best.txt"
