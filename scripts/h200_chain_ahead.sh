#!/usr/bin/env bash
# Issue 25's chained Cholesky looking ahead past published terms (Tuning::chain_ahead,
# `-ahead<n>`) on tiles of its own order (Tuning::chain_tile, `-ct<order>`; the blocked
# factor's `--diag` apart), beside torch.linalg.cholesky (cuSOLVER) in the same run: the chain
# at 4096 with and without the look-ahead on tiles of 32 and 64 (columns and pairs, folded or
# not), the defaults at 4096 to 16384 in full and RFP storage, the split's leaves of 2048 and
# 4096 on chained tiles of 32, RFP's blocked factor on tiles of 32 and 64, the solves.
# Writes under OUT:
#   chain_ahead.csv        step,method,op,format,m,n,ms,gflops (GPU ms, median of RUNS)
#   chain_ahead_torch.csv  m,torch_ms (scripts/torch_cholesky.py)
#   chain_ahead_log.txt    stderr
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_chain_ahead.sh [OUT]   (BENCH=… another build, RUNS=7)
# About 2 minutes on the H200; each step's timeout is cut to what is left of BUDGET (420 s).
# A new build's first process has read its first rows slow (11-28 ms where 2.4-11 follow):
# one small Cholesky per kernel set comes first (step warm).
default_runs=7
budget=420
. "$(dirname "$0")/tiled_prologue.sh"
csv="$out/chain_ahead.csv"
log="$out/chain_ahead_log.txt"
echo "step,method,op,format,m,n,ms,gflops" > "$csv"
: > "$log"
python3 scripts/torch_cholesky.py 4096 8192 16384 > "$out/chain_ahead_torch.csv" 2>> "$log"
echo "torch: exit $? at ${SECONDS}s"
chain=(--ops c --formats full --schedule chain --chain-tile 32,64 --factor columns,pairs
    --fold 0,1 --ahead 0,32)
step warm 60 "${chain[@]}" 1024
step chain 90 "${chain[@]}" 4096
step defaults 90 --ops c --formats full,rfp 4096 8192 16384
step leaves 120 --ops c --formats full --chain-tile 32 --split-chain 2048,4096 8192 16384
step rfp 90 --ops c --formats rfp --diag 32,64 8192 16384
step solves 60 --ops s --formats full --rhs 1,16 8192
cat "$out/chain_ahead_torch.csv" "$csv"
