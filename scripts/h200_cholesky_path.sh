#!/usr/bin/env bash
# Issue 25: the chained Cholesky's critical path (glsl/tiled/potrf_chain.comp) on the H200,
# the current chain against its options and torch.linalg.cholesky (cuSOLVER) in one run:
#   fold0 / fold1     Tuning::chain_fold: the sub-diagonal tile's product L_{j+1,j} = acc·L_jj⁻ᵀ
#                     formed by the group of (j + 1, j + 1) (one flag hand-off fewer per step)
#   columns / pairs / quads   DiagonalFactor: the diagonal tile factored one column per
#                     barrier (potrf_inv_fn.glsl), two (potrf_inv_pairs.glsl) or four
#                     (potrf_inv_steps.glsl)
#   poll<atomic|sparse|load>  Tuning::chain_poll (round 2): how the waiting invocation polls a
#                     ready flag: atomic RMW of flag and gave-up word every poll and a read
#                     after the loop (the default), the gave-up word every 32 polls only, or
#                     the flag by plain volatile loads
#   early0 / early1   Tuning::chain_fold_early (round 2, with fold1): the folded tile's flag
#                     set as soon as L_{j+1,j} is written, before the diagonal group's update
#                     from it (the next sub-diagonal tile's sum no longer waits for that update)
#   lean0 / lean1     Tuning::chain_lean (round 2): the barrier after each term's last slice
#                     dropped where the next term's wait (a barrier) follows
# Timed: tiles of 64 columns fold0 × 3 polls × lean0/1; tiles of 64 columns and quads fold1 ×
# early0/1 × atomic/load polls; tiles of 32 pairs fold1 × early0/1 × atomic/load × lean0/1. Round 1's other variants
# (every factor and fold at tiles of 32 and 64) are compiled and dumped only, for spill counts.
# Orders 1024, 2048 and 4096, full storage, CholeskySchedule::Chain. Writes under OUT (default $OUT, else figures/h200):
#   cholesky_path.csv        ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS),
#                            method tiled-d<T>-o512-f0-<factor>-chain-fold<0|1>[-early<0|1>]
#                            -poll<way>[-lean<0|1>]
#   dump/                    the chain kernels' driver binaries (<method>.potrf_chain.bin,
#                            NVIDIA's assembly text)
#   cholesky_path_lmem.txt   per binary: lines naming local memory (lmem, STL/LDL: spills),
#                            its declared lmem size, atomic lines (ATOM), volatile loads
#                            (.VOL: the load polls took), lines in all
#   cholesky_path_log.txt    stderr, with per variant and size the factor's residual
#                            ‖L·(Lᵀ·x) − C·x‖/‖C·x‖ (about 1e-6 when right) and `chained 1`
#   cholesky_path_torch.csv  m,torch_ms: torch.linalg.cholesky (fp32), CUDA events, median of
#                            20 after 3 warm-ups
#   cholesky_path_best.txt   per size: every row with its ratio to torch and to the default
#                            chain (tiles of 64, columns, fold0, atomic polls, lean0), fastest
#                            first
# Run from the repository root on the GPU machine with the release example carried at
# .k25/ex/tiled_bench (cargo build --release --example tiled_bench; BENCH=… another path):
#
#     OUT=$OUT scripts/h200_cholesky_path.sh      (RUNS=5)
# About 2 minutes (at most 3 by the timeouts).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes=${SIZES:-1024 2048 4096}
runs=${RUNS:-5}
: > "$out/cholesky_path_log.txt"
common="--runs $runs --ops c,v --formats full --schedule chain --dump $out/dump"
# Round 2 on round 1's leaders: the polls and lean barriers (tiles of 64 without the fold, the
# default), the polls and the early flag with the fold (tiles of 64 columns and quads), all
# three (tiles of 32 pairs with the fold).
timeout 35 "$bench" $common --diag 64 --factor columns --fold 0 --poll atomic,sparse,load \
    --lean 0,1 $sizes > "$out/cholesky_path.csv" 2>> "$out/cholesky_path_log.txt"
echo "tiles 64 fold 0 polls: exit $?"
timeout 45 "$bench" $common --diag 64 --factor columns,quads --fold 1 --early 0,1 \
    --poll atomic,load $sizes 2>> "$out/cholesky_path_log.txt" \
    | tail -n +2 >> "$out/cholesky_path.csv"
echo "tiles 64 fold 1 early/polls: exit $?"
timeout 45 "$bench" $common --diag 32 --factor pairs --fold 1 --early 0,1 \
    --poll atomic,load --lean 0,1 $sizes 2>> "$out/cholesky_path_log.txt" \
    | tail -n +2 >> "$out/cholesky_path.csv"
echo "tiles 32 fold 1 early/polls: exit $?"
# Round 1's variants compiled and dumped only (their timings: /work/wt/chain_path_r1.txt), a
# dry run of order 64: every factor and fold at tiles of 32 and 64, for the spill counts.
timeout 20 "$bench" --ops n --formats full --schedule chain --dump "$out/dump" --diag 32,64 \
    --factor columns,pairs,quads --fold 0,1 64 > /dev/null 2>> "$out/cholesky_path_log.txt"
echo "dumps: exit $?"
python3 - "$out" <<'PY'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
with open(out / "cholesky_path_lmem.txt", "w") as f:
    print("binary lmem_lines lmem_declared atom_lines volatile_lines lines", file=f)
    for p in sorted((out / "dump").glob("*.potrf_chain.bin")):
        text = p.read_bytes().decode("latin-1")
        lines = text.splitlines()
        lmem = sum(1 for l in lines if re.search(r"lmem|\bSTL|\bLDL", l))
        sizes = re.findall(r"lmem\[(\d+)\]", text)
        declared = max(map(int, sizes)) if sizes else 0
        atom = sum(1 for l in lines if "ATOM" in l)
        vol = sum(1 for l in lines if ".VOL" in l)
        print(f"{p.name} {lmem} {declared} {atom} {vol} {len(lines)}", file=f)
PY
cat "$out/cholesky_path_lmem.txt"
grep -E "verify|^#" "$out/cholesky_path_log.txt" | grep -v " cholesky full m=64:" | head -80
timeout 25 python3 "$(dirname "$0")/torch_cholesky.py" $sizes > "$out/cholesky_path_torch.csv"
echo "torch: exit $?"
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
torch = {int(r["m"]): float(r["torch_ms"]) for r in csv.DictReader(open(f"{out}/cholesky_path_torch.csv"))}
rows = {}
for r in csv.DictReader(open(f"{out}/cholesky_path.csv")):
    if r.get("op") == "cholesky":
        rows.setdefault(int(r["m"]), []).append((float(r["ms"]), r["method"], r["format"]))
default = "tiled-d64-o512-f0-columns-chain-fold0-pollatomic-lean0"
with open(f"{out}/cholesky_path_best.txt", "w") as f:
    for m in sorted(rows):
        t = torch.get(m)
        base = next((ms for ms, method, _ in rows[m] if method == default), None)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / t:.3f}" if t else "?"
            own = f"{ms / base:.3f}" if base else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (torch {t} ms), "
                  f"{own} of the default chain", file=f)
PY
cat "$out/cholesky_path_best.txt"
