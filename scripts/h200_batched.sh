#!/usr/bin/env bash
# Issue 28's measurement: the batched weighted least squares (ours, examples/batched_bench.rs)
# beside the torch pipeline (scripts/vendor_baseline.py --batched) in one run, for (n, B) =
# (8, 100000), (16, 100000), (32, 20000), (128, 1000). Writes under OUT (default $OUT):
#   batched_ours.csv         ours: op,m,n,ms (GPU time; wall time with the upload)
#   batched_parity.csv       op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio: the rows
#                            batched_wls and batched_wls_with_upload to append to
#                            figures/h200/vendor_parity.csv (tail -n +2 batched_parity.csv >> …)
#   batched_info.txt         the device and the checks' lines
# Run from the repository root on the GPU machine, with the example built here and carried
# (cargo build --release --example batched_bench; carry target/release/examples/batched_bench),
# or built there when cargo is at hand:
#
#     scripts/h200_batched.sh [OUT]        (BENCH=path/to/batched_bench to name another build)
source "$(dirname "$0")/batched_prologue.sh" "$@"
sizes=${SIZES:-8:100000,16:100000,32:20000,128:1000}
timeout 300 "$bench" --runs "$runs" ${sizes//,/ } \
    > "$out/batched_ours.csv" 2> "$out/batched_info.txt"
echo "ours: exit $?"; cat "$out/batched_info.txt"; cat "$out/batched_ours.csv"
timeout 300 python3 scripts/vendor_baseline.py --batched "$sizes" --reps "$runs" \
    --ours "$out/batched_ours.csv" --parity-out "$out/batched_parity.csv" 2>&1 | tail -1
cat "$out/batched_parity.csv"
