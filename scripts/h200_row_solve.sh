#!/usr/bin/env bash
# Issue 25's Cholesky with the split's L21 = B21·L11⁻ᵀ solved by rows (SplitSolve::Rows,
# glsl/tiled/trsm_rows.comp: one launch per outer block of `width` columns, `rows` rows of
# B21 per work group, L halved down to `leaf`: rows<width>x<rows>l<leaf>) against the chain's
# inverted tiles (`tiles`, the default before), beside
# torch.linalg.cholesky (cuSOLVER) in the same run. Writes under OUT:
#   row_solve.csv        step,method,op,format,m,n,ms,gflops (GPU ms, median of RUNS); at 8192
#                        the split's pieces too (ops split-l11, split-l21, split-syrk, split-l22)
#   row_solve_torch.csv  m,torch_ms (scripts/torch_cholesky.py)
#   row_solve_log.txt    stderr, with each factor's residual ‖L·(Lᵀ·x) − C·x‖/‖C·x‖ (verify)
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_row_solve.sh [OUT]   (BENCH=… another build, RUNS=5)
# About 3 minutes on the H200; each step's timeout is cut to what is left of BUDGET (420 s).
default_runs=5
budget=420
. "$(dirname "$0")/tiled_prologue.sh"
csv="$out/row_solve.csv"
log="$out/row_solve_log.txt"
echo "step,method,op,format,m,n,ms,gflops" > "$csv"
: > "$log"
solves=${SOLVES:-tiles,rows512x32l1048576,rows512x32l2048,rows512x16l2048,rows256x32l2048,rows1024x32l2048}
python3 scripts/torch_cholesky.py 4096 8192 16384 > "$out/row_solve_torch.csv" 2>> "$log"
echo "torch: exit $? at ${SECONDS}s"
step m8192 90 --ops c,x,v --formats full --split-solve "$solves" 8192
step m4096 60 --ops c,v --formats full --schedule chain,split --split-chain 2048 \
    --split-solve "tiles,rows256x32l2048,rows512x32l2048" 4096
step m16384-auto 60 --ops c --formats rfp,full 16384
step m16384-split 150 --ops c --formats full,rfp --schedule split \
    --split-solve "tiles,rows512x32l2048,rows512x16l2048" 16384
cat "$out/row_solve_torch.csv" "$csv"
