#!/usr/bin/env bash
# Issue 28's group shapes on the H200, one run (examples/batched_bench.rs --profile): the fused
# least squares' GPU time per shape, data on the GPU, to choose the defaults in
# src/batched/plan.rs (DEFAULT_SHAPES, DEFAULT_STAGED_LOADS, assembly_rows, solve_block).
# Writes under OUT (default $OUT):
#   shapes_small.csv  n = 8, 16, 32: invocations per problem x problems per group x loads
#   shapes_128.csv    n = 128: invocations x loads x assembly rows x rows per solve block
#   jobs_default.csv  each job alone with the defaults (where the time goes)
#   shapes_info.txt   the device and the checks' lines
# Then scripts/h200_batched.sh OUT for the vendor parity rows with the defaults.
# Built as scripts/h200_batched.sh says (BENCH=path/to/batched_bench to name another build).
source "$(dirname "$0")/batched_prologue.sh" "$@"
timeout 280 "$bench" --runs "$runs" --profile 32,64,128 --problems-per-group 1,2,4 \
    --staged-loads scalar,vector --fused-only 8:100000 16:100000 32:20000 \
    > "$out/shapes_small.csv" 2> "$out/shapes_info.txt"
echo "small: exit $?"; cat "$out/shapes_small.csv"
timeout 200 "$bench" --runs "$runs" --profile 256,512,1024 --staged-loads scalar,vector \
    --assembly-rows single,pair --solve-block 4,8,16 --fused-only 128:1000 \
    > "$out/shapes_128.csv" 2>> "$out/shapes_info.txt"
echo "128: exit $?"; cat "$out/shapes_128.csv"
timeout 100 "$bench" --runs "$runs" --profile 0 32:20000 128:1000 \
    > "$out/jobs_default.csv" 2>> "$out/shapes_info.txt"
echo "jobs: exit $?"; cat "$out/jobs_default.csv"
