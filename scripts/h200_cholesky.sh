#!/usr/bin/env bash
# Issue 25's Cholesky block sizes in one run on the H200: the device's defaults (method
# `tiled`), a sweep of the diagonal-block order, the outer block width and the fused inner
# updates (methods `tiled-d<diag>-o<outer>-f<0|1>`, examples/tiled_bench.rs --diag/--outer/
# --fused), full and RFP storage, and cuSOLVER (torch.linalg.cholesky through
# scripts/vendor_baseline.py --parity) at the same sizes. Writes under OUT (default $OUT):
#   cholesky_sweep.csv    ours: method,op,format,m,n,ms,gflops (GPU time, median of RUNS)
#   cholesky_counts.txt   the launches of one factorization per kind, per variant and size
#   cholesky_parity.csv   op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio for the defaults
#   cholesky_best.txt     per size: the fastest variant, its time and its ratio to cuSOLVER
# Run from the repository root on the GPU machine with the example built here and carried
# (cargo build --release --example tiled_bench; carry target/release/examples/tiled_bench):
#
#     scripts/h200_cholesky.sh [OUT]      (BENCH=… another build, SIZES="4096 8192 16384",
#                                          DIAG=32,64,128 OUTER=256,512,1024 FUSED=0,1 RUNS=7,
#                                          OLD_BENCH=… a build of the old main: its rows as `main`)
set -u
out=${1:-${OUT:-figures/h200}}
sizes=${SIZES:-4096 8192 16384}
mkdir -p "$out"
bench=${BENCH:-target/release/examples/tiled_bench}
[ -x "$bench" ] || cargo build --release --example tiled_bench 2>&1 | tail -2
runs=${RUNS:-7}
# The defaults first (the rows vendor_baseline.py compares), then the sweep.
timeout 200 "$bench" --runs "$runs" --ops c --formats full,rfp $sizes \
    > "$out/cholesky_sweep.csv" 2> "$out/cholesky_counts.txt"
echo "defaults: exit $?"
timeout 60 "$bench" --ops n --formats full,rfp $sizes 2>> "$out/cholesky_counts.txt" > /dev/null
timeout 360 "$bench" --runs "$runs" --ops c,n --formats full,rfp \
    --diag "${DIAG:-32,64,128}" --outer "${OUTER:-256,512,1024}" --fused "${FUSED:-0,1}" $sizes \
    2>> "$out/cholesky_counts.txt" | tail -n +2 >> "$out/cholesky_sweep.csv"
echo "sweep: exit $?"
if [ -n "${OLD_BENCH:-}" ] && [ -x "$OLD_BENCH" ]; then
    timeout 200 "$OLD_BENCH" --runs "$runs" --ops c --formats full,rfp $sizes 2> /dev/null \
        | tail -n +2 | sed 's/^tiled,/main,/' >> "$out/cholesky_sweep.csv"
    echo "old main: exit $?"
fi
cat "$out/cholesky_counts.txt"
timeout 180 python3 scripts/vendor_baseline.py --parity "${sizes// /,}" --reps 20 \
    --ours "$out/cholesky_sweep.csv" --parity-out "$out/cholesky_parity.csv" 2>&1 | tail -1
python3 - "$out" <<'EOF'
import csv, sys
out = sys.argv[1]
vendor = {}
try:
    for r in csv.DictReader(open(f"{out}/cholesky_parity.csv")):
        if r["op"] == "cholesky":
            vendor[int(r["m"])] = float(r["vendor_ms"])
except OSError as e:
    print(f"no vendor times: {e}", file=sys.stderr)
best = {}
for r in csv.DictReader(open(f"{out}/cholesky_sweep.csv")):
    if r["op"] != "cholesky":
        continue
    m, ms = int(r["m"]), float(r["ms"])
    best.setdefault(m, []).append((ms, r["method"], r["format"]))
with open(f"{out}/cholesky_best.txt", "w") as f:
    for m in sorted(best):
        rows = sorted(best[m])
        v = vendor.get(m)
        default = min((x for x in rows if x[1] == "tiled"), default=None)
        for ms, method, fmt in rows[:5]:
            ratio = f"{ms / v:.3f}" if v else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (cuSOLVER {v} ms)", file=f)
        if default:
            print(f"m {m}: defaults {default[2]} {default[0]:.3f} ms", file=f)
EOF
cat "$out/cholesky_best.txt"
