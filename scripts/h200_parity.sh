#!/usr/bin/env bash
# Issue 25's op-for-op rows on the H200 in one run: ours by examples/tiled_bench.rs (method
# `tiled`, the defaults; assembly and Cholesky in full and RFP storage, the solves with 1 and 16
# right-hand sides) and the vendor's by scripts/vendor_baseline.py --parity (cuBLAS SSYRK
# through CuPy, torch.linalg.cholesky, torch.cholesky_solve). Writes under OUT:
#   parity_ours.csv   method,op,format,m,n,ms,gflops (GPU ms, median of RUNS)
#   parity.csv        op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio (the faster format of ours)
#   parity_log.txt    stderr
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_parity.sh [OUT]   (BENCH=… another build, RUNS=7, SIZES="4096 8192 16384")
# About 3 minutes on the H200. The rows replace those of figures/h200/vendor_parity.csv.
default_runs=7
budget=560
. "$(dirname "$0")/tiled_prologue.sh"
sizes=${SIZES:-4096 8192 16384}
log="$out/parity_log.txt"
: > "$log"
timeout 300 "$bench" --runs "$runs" --ops a,c --formats full,rfp $sizes > "$out/parity_ours.csv" \
    2>> "$log"
echo "ours: exit $? at ${SECONDS}s"
timeout 60 "$bench" --runs "$runs" --ops s --formats full --rhs 1,16 8192 2>> "$log" |
    tail -n +2 >> "$out/parity_ours.csv"
echo "solves: exit ${PIPESTATUS[0]} at ${SECONDS}s"
timeout 200 python3 scripts/vendor_baseline.py --parity "${sizes// /,}" --reps 20 \
    --ours "$out/parity_ours.csv" --parity-out "$out/parity.csv" 2>> "$log"
echo "vendor: exit $? at ${SECONDS}s"
cat "$out/parity_ours.csv" "$out/parity.csv"
