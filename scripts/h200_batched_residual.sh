#!/usr/bin/env bash
# Issue 28's fifth pass on the H200, one run under 4 minutes: the fused least squares'
# residual (src/batched/plan.rs Residual: Restaged, the previous plan; Resident, A, d and b
# kept in shared memory from the assembly; Direct, the rows' sums read from global memory
# unstaged) at the issue's sizes (n:B = 8:100000, 16:100000, 32:20000, 128:1000), every
# answer checked (a wrong one is marked WRONG in its row), then the defaults beside torch's
# pipeline in the same run (scripts/vendor_baseline.py --batched). Writes under OUT
# (default $OUT):
#   residual_fused.csv   GPU ms of the fused least squares (1 refinement step) per residual,
#                        the default group shapes (--profile 0; column residual last)
#   residual_32.csv      n = 32 also with 64 invocations and two problems per group
#   residual_jobs.csv    each job alone, default shape, per residual (n = 32, 128)
#   residual_best.csv    per n: Restaged's ms, the best residual's, their ratio
#   batched_ours.csv, batched_parity.csv  the defaults against torch (as h200_batched.sh)
#   residual_info.txt    the device and the checks' lines
# Run from the repository root with the release example carried:
#     cargo build --release --example batched_bench && mkdir -p .k25/ex \
#         && cp target/release/examples/batched_bench .k25/ex/
#     scripts/h200_batched_residual.sh [OUT]     (BENCH=path to name another build)
source "$(dirname "$0")/batched_prologue.sh" "$@"
sizes=${SIZES:-8:100000 16:100000 32:20000 128:1000}
timeout 60 "$bench" --runs "$runs" --profile 0 --residual restaged,resident,direct \
    --fused-only $sizes > "$out/residual_fused.csv" 2> "$out/residual_info.txt"
echo "fused: exit $?"; cat "$out/residual_fused.csv"
timeout 30 "$bench" --runs "$runs" --profile 64,128 --problems-per-group 1,2 \
    --residual restaged,resident,direct --fused-only ${MID:-32:20000} \
    > "$out/residual_32.csv" 2>> "$out/residual_info.txt"
echo "n 32 shapes: exit $?"; cat "$out/residual_32.csv"
timeout 30 "$bench" --runs "$runs" --profile 0 --residual restaged,default \
    ${JOBS:-32:20000 128:1000} > "$out/residual_jobs.csv" 2>> "$out/residual_info.txt"
echo "jobs: exit $?"; cat "$out/residual_jobs.csv"
# Per n: Restaged's time at the default shape and the fastest correct residual's.
{
    echo "n,restaged_ms,best_ms,ratio,best_residual"
    best_per_n 13 Restaged "$out/residual_fused.csv"
} > "$out/residual_best.csv"
echo "best:"; cat "$out/residual_best.csv"
# The defaults (the plan's own residual) beside torch, as scripts/h200_batched.sh.
list=${sizes// /,}
timeout 55 "$bench" --runs "$runs" $sizes > "$out/batched_ours.csv" 2>> "$out/residual_info.txt"
echo "ours: exit $?"; cat "$out/batched_ours.csv"
timeout 60 python3 scripts/vendor_baseline.py --batched "$list" --reps "$runs" \
    --ours "$out/batched_ours.csv" --parity-out "$out/batched_parity.csv" 2>&1 | tail -1
cat "$out/batched_parity.csv"
