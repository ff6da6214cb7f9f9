#!/usr/bin/env bash
# Issue 25's diagonal-block factors in one run on the H200: the tiled Cholesky with its diagonal
# blocks factored column by column (one barrier per column, `columns`) and in panels of 16 by
# one subgroup (`panels`), diagonal blocks of 64 and 128, fused inner updates off and on, outer
# blocks of 512, full and RFP storage at 4096, 8192 and 16384 (the defaults as method `tiled`;
# `tiled-d<diag>-o512-f<0|1>-<factor>`, examples/tiled_bench.rs --factor), the launches of one
# factorization per variant, and cuSOLVER (torch.linalg.cholesky through
# scripts/vendor_baseline.py --parity) at the same sizes. Optionally (TESTS=…) the test binary
# of tests/tiled_blocks.rs first, whose panels run on subgroups there (llvmpipe has none).
# Writes under OUT (default $OUT):
#   diag_sweep.csv     method,op,format,m,n,ms,gflops (GPU time, median of RUNS)
#   diag_counts.txt    the launches of one factorization per kind, per variant and size
#   diag_parity.csv    op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio (vendor_baseline.py)
#   diag_best.txt      per size: the variants from fastest, their ratio to cuSOLVER
#   diag_tests.txt     the tests' output (with TESTS)
# Run from the repository root on the GPU machine with the release example carried:
#
#     BENCH=.k25/ex/tiled_bench scripts/h200_cholesky_diag.sh [OUT]
#         (SIZES="4096 8192 16384", DIAG=64,128, FUSED=0,1, OUTER=512, RUNS=7,
#          TESTS=path/to/tiled_blocks-<hash> to run the tests too)
set -u
out=${1:-${OUT:-figures/h200}}
sizes=${SIZES:-4096 8192 16384}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
[ -x "$bench" ] || bench=target/release/examples/tiled_bench
[ -x "$bench" ] || cargo build --release --example tiled_bench 2>&1 | tail -2
runs=${RUNS:-7}
if [ -n "${TESTS:-}" ] && [ -x "$TESTS" ]; then
    timeout 300 "$TESTS" --test-threads 1 > "$out/diag_tests.txt" 2>&1
    echo "tests: exit $?"
    tail -3 "$out/diag_tests.txt"
fi
sweep=(--factor columns,panels --diag "${DIAG:-64,128}" --outer "${OUTER:-512}"
       --fused "${FUSED:-0,1}" --formats full,rfp)
timeout 60 "$bench" --ops n "${sweep[@]}" $sizes 2> "$out/diag_counts.txt" > /dev/null
echo "counts: exit $?"
# The defaults first (method `tiled`: the rows vendor_baseline.py compares), then the sweep.
timeout 120 "$bench" --runs "$runs" --ops c --formats full,rfp $sizes \
    > "$out/diag_sweep.csv" 2>> "$out/diag_counts.txt"
echo "defaults: exit $?"
timeout 420 "$bench" --runs "$runs" --ops c "${sweep[@]}" $sizes \
    2>> "$out/diag_counts.txt" | tail -n +2 >> "$out/diag_sweep.csv"
echo "sweep: exit $?"
timeout 180 python3 scripts/vendor_baseline.py --parity "${sizes// /,}" --reps 20 \
    --ours "$out/diag_sweep.csv" --parity-out "$out/diag_parity.csv" 2>&1 | tail -1
python3 - "$out" <<'EOF'
import csv, sys
out = sys.argv[1]
vendor = {}
try:
    for r in csv.DictReader(open(f"{out}/diag_parity.csv")):
        if r["op"] == "cholesky":
            vendor[int(r["m"])] = float(r["vendor_ms"])
except (OSError, KeyError, ValueError) as e:
    print(f"no vendor times: {e}", file=sys.stderr)
rows = {}
for r in csv.DictReader(open(f"{out}/diag_sweep.csv")):
    if r["op"] == "cholesky":
        rows.setdefault(int(r["m"]), []).append((float(r["ms"]), r["method"], r["format"]))
with open(f"{out}/diag_best.txt", "w") as f:
    for m in sorted(rows):
        v = vendor.get(m)
        for ms, method, fmt in sorted(rows[m]):
            ratio = f"{ms / v:.3f}" if v else "?"
            print(f"m {m}: {method} {fmt} {ms:.3f} ms, ratio {ratio} (cuSOLVER {v} ms)", file=f)
EOF
cat "$out/diag_best.txt"
grep -v '^#' "$out/diag_counts.txt" | head -5
grep 'cholesky' "$out/diag_counts.txt" | head -48
