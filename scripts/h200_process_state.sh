#!/usr/bin/env bash
# Issue 25's open item: some processes read the full-storage Cholesky of 8192 1.5-2.8x slower
# throughout, so far only processes that timed 4096 before it (figures/h200/chain_ahead.csv
# runs 4 and 5, figures/h200/parity_runs.csv runs 1 and 4). PROCESSES (default 6) processes
# each of: 4096 then 8192 (`after`), 8192 alone (`alone`), and 4096 then 8192 with the split's
# pieces timed first (`pieces`: tiled_bench --ops x before c, so a slow process shows which
# piece is slow), alternating. Writes under OUT:
#   process_state.csv      step,method,op,format,m,n,ms,gflops (step = <mode>-<process>)
#   process_state_log.txt  stderr (RUST_LOG=symraster::tiled=debug: a chain that gave up says so)
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_process_state.sh [OUT]   (BENCH=… another build, RUNS=5, PROCESSES=6)
# About 3 minutes on the H200 with the defaults; each step's timeout is cut to what is left of
# BUDGET (420 s).
default_runs=5
budget=420
. "$(dirname "$0")/tiled_prologue.sh"
csv="$out/process_state.csv"
log="$out/process_state_log.txt"
echo "step,method,op,format,m,n,ms,gflops" > "$csv"
: > "$log"
export RUST_LOG=${RUST_LOG:-symraster::tiled=debug}
for i in $(seq 1 "${PROCESSES:-6}"); do
    step "after-$i" 40 --ops c --formats full 4096 8192
    step "alone-$i" 40 --ops c --formats full 8192
    step "pieces-$i" 60 --ops x,c --formats full 4096 8192
done
echo "gave-up lines: $(grep -c 'gave up' "$log")"
# The 8192 Cholesky per process, slowest first.
grep ',cholesky,full,8192,' "$csv" | sort -t, -k7 -gr | cut -d, -f1,7
