#!/usr/bin/env bash
# Issue 28's fourth pass on the H200, one run under 5 minutes (examples/batched_bench.rs
# --profile): the assembly's tiling (pairs of rows as before, or 2 x 2 / 4 x 4 register tiles
# of C per invocation, --assembly-tiling) and the observations staged per step
# (--staged-columns 16/32/64) against the current defaults, at the issue's sizes (n:B =
# 8:100000, 16:100000, 32:20000, 128:1000), to choose the defaults in src/batched/plan.rs
# (assembly_tiling, STAGED_COLUMNS, DEFAULT_SHAPES). Every shape's answers are checked (a
# wrong one is marked WRONG in its row). Under 5 minutes (timeouts 50 + 110 + 60 + 40 s).
# Writes under OUT (default $OUT):
#   tiles_fused.csv   fused least squares (1 refinement step), GPU ms per shape, n = 8, 16, 32
#   tiles_128.csv     the same at n = 128 (512 and 528 invocations: 528 = one 4 x 4 tile each)
#   tiles_jobs.csv    each job alone, default shape, rows against 4 x 4 tiles (n = 32, 128)
#   tiles_best.csv    the fastest shape per n from the two fused files, beside the default's
#   tiles_info.txt    the device and the checks' lines
# Run from the repository root with the release example carried:
#     cargo build --release --example batched_bench && mkdir -p .k25/ex \
#         && cp target/release/examples/batched_bench .k25/ex/
#     scripts/h200_batched_tiles.sh [OUT]     (BENCH=path to name another build)
source "$(dirname "$0")/batched_prologue.sh" "$@"
tilings=rows,tiles2,tiles4
# The sizes (SMALL, MID, BIG to try others, e.g. small ones on a software renderer).
small=${SMALL:-8:100000 16:100000}
mid=${MID:-32:20000}
big=${BIG:-128:1000}
timeout 50 "$bench" --runs "$runs" --profile 0 --assembly-tiling "$tilings" \
    --staged-columns 16,32,64 --fused-only $small \
    > "$out/tiles_fused.csv" 2> "$out/tiles_info.txt"
echo "fused n 8, 16: exit $?"
timeout 110 "$bench" --runs "$runs" --profile 0,64,128,144 --assembly-tiling "$tilings" \
    --staged-columns 16,32,64 --fused-only $mid \
    2>> "$out/tiles_info.txt" | tail -n +2 >> "$out/tiles_fused.csv"
echo "fused n 32: exit ${PIPESTATUS[0]}"; cat "$out/tiles_fused.csv"
timeout 60 "$bench" --runs "$runs" --profile 512,528 --assembly-tiling "$tilings" \
    --staged-columns 16,32 --fused-only $big \
    > "$out/tiles_128.csv" 2>> "$out/tiles_info.txt"
echo "fused n 128: exit $?"; cat "$out/tiles_128.csv"
timeout 40 "$bench" --runs "$runs" --profile 0 --assembly-tiling rows,tiles4 $mid $big \
    > "$out/tiles_jobs.csv" 2>> "$out/tiles_info.txt"
echo "jobs: exit $?"; cat "$out/tiles_jobs.csv"
# Per n: the default shape's time (pairs of rows, 16 columns, DEFAULT_SHAPES' invocations)
# and the fastest correct row's.
{
    echo "n,default_ms,best_ms,ratio,best_threads,best_problems_per_group,best_tiling,best_columns"
    tail -q -n +2 "$out/tiles_fused.csv" "$out/tiles_128.csv" | grep -v WRONG | awk -F, '
        BEGIN { def[8] = 32; def[16] = 32; def[32] = 128; def[128] = 512 }
        {
            n = $2; ms = $10 + 0
            if ($11 == "Rows" && $12 == 16 && $4 == def[n] && (!(n in d) || ms < d[n])) d[n] = ms
            if (!(n in b) || ms < b[n]) { b[n] = ms; row[n] = $4 "," $5 "," $11 "," $12 }
        }
        END {
            for (n in b) printf "%s,%s,%.4f,%.3f,%s\n", n, (n in d) ? d[n] : "", b[n],
                (n in d && d[n] > 0) ? b[n] / d[n] : 0, row[n]
        }' | sort -t, -k1,1n
} > "$out/tiles_best.csv"
echo "best:"; cat "$out/tiles_best.csv"
