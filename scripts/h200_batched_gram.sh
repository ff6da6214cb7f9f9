#!/usr/bin/env bash
# Issue 28's seventh pass on the H200, one run under 5 minutes: the assembly in a launch of its
# own (src/batched/plan.rs AssemblyPass::Separate, glsl/batched/gram.comp: register tiles of
# T x T sums, L invocations per tile along the observations, or staged per problem), with the
# residual from A or from the normal equations (Residual::Normal), against the fused assembly, at
# the issue's sizes (n:B = 8:100000, 16:100000, 32:20000, 128:1000), every answer checked (a
# wrong one is marked WRONG in its row), then the fastest pass's full rows and the fused
# default's beside torch's pipeline in the same run (scripts/vendor_baseline.py --batched).
# Writes under OUT (default $OUT):
#   gram_fused.csv     GPU ms of the fused least squares (1 refinement step) per pass and
#                      tile shape, default group shapes (--profile 0; column assembly_pass last)
#   gram_threads.csv   the separate pass with other invocation counts per problem
#   gram_jobs.csv      each job alone, fused and separate (n = 32, 128)
#   gram_best.csv      per n: the fused ms, the best pass's, their ratio
#   batched_ours_<pass>.csv, batched_parity_<pass>.csv  fused and separate against torch
#   gram_info.txt      the device and the checks' lines
# Run from the repository root with the release example carried:
#     cargo build --release --example batched_bench && mkdir -p .k25/ex \
#         && cp target/release/examples/batched_bench .k25/ex/
#     scripts/h200_batched_gram.sh [OUT]     (BENCH=path to name another build)
source "$(dirname "$0")/batched_prologue.sh" "$@"
sizes=${SIZES:-8:100000 16:100000 32:20000 128:1000}
passes=${PASSES:-fused,staged,2x4,4x1,4x2,4x4,4x8,4x16,8x1,8x2,8x4,8x8}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv \
    > "$out/gram_info.txt" 2>&1
timeout 240 "$bench" --runs "$runs" --profile 0 --assembly-pass "$passes" --fused-only \
    --residual "${RESIDUALS:-default,normal}" $sizes > "$out/gram_fused.csv" 2>> "$out/gram_info.txt"
echo "fused vs separate: exit $?"; cat "$out/gram_fused.csv"
# Per n: the fused pass's time at the default shape and the fastest correct pass's.
{
    echo "n,fused_ms,best_ms,ratio,best_pass"
    best_per_n 15 fused "$out/gram_fused.csv"
} > "$out/gram_best.csv"
echo "best:"; cat "$out/gram_best.csv"
# The separate pass with other invocations per problem (the job no longer assembles).
timeout 60 "$bench" --runs "$runs" --profile 0,32,64,128,256 --assembly-pass separate \
    --fused-only ${MID:-16:100000 32:20000} > "$out/gram_threads.csv" 2>> "$out/gram_info.txt"
timeout 30 "$bench" --runs "$runs" --profile 0,256,1024 --assembly-pass separate \
    --fused-only ${BIG:-128:1000} 2>> "$out/gram_info.txt" | tail -n +2 >> "$out/gram_threads.csv"
echo "threads: exit $?"; cat "$out/gram_threads.csv"
timeout 40 "$bench" --runs "$runs" --profile 0 --assembly-pass fused,separate \
    ${JOBS:-32:20000 128:1000} > "$out/gram_jobs.csv" 2>> "$out/gram_info.txt"
echo "jobs: exit $?"; cat "$out/gram_jobs.csv"
# Both passes' rows beside torch, as scripts/h200_batched.sh.
list=${sizes// /,}
for pass in fused separate; do
    timeout 60 "$bench" --runs "$runs" --assembly-pass "$pass" $sizes \
        > "$out/batched_ours_$pass.csv" 2>> "$out/gram_info.txt"
    echo "ours ($pass): exit $?"; cat "$out/batched_ours_$pass.csv"
done
for pass in fused separate; do
    timeout 90 python3 scripts/vendor_baseline.py --batched "$list" --reps "$runs" \
        --ours "$out/batched_ours_$pass.csv" --parity-out "$out/batched_parity_$pass.csv" \
        2>&1 | tail -1
    cat "$out/batched_parity_$pass.csv"
done
