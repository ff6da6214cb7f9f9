#!/usr/bin/env bash
# Issue 25 at m = 16384: the packed-panel product with C cut into launches of blocks
# (PanelVariant::cut, tiled_bench --panel "...,cut"), against one launch over C, beside cuBLAS
# SSYRK in the same run; then the Cholesky of order 16384 (RFP, and full storage split as RFP)
# with and without the cut, and the split schedule's solves there. Writes under OUT:
#   product_cut.csv        config,method,op,format,m,n,ms,gflops (GPU ms, median of RUNS)
#   product_cut_vendor.csv op,m,seconds,label: cuBLAS SSYRK (scripts/vendor_baseline.py --syrk)
#   product_cut_log.txt    the benchmark's stderr
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_product_cut.sh [OUT]   (BENCH=… another build, RUNS=3)
# About 4 minutes on the H200; each step's timeout is cut to what is left of BUDGET (500 s).
default_runs=3
budget=500
. "$(dirname "$0")/tiled_prologue.sh"
csv="$out/product_cut.csv"
log="$out/product_cut_log.txt"
echo "config,method,op,format,m,n,ms,gflops" > "$csv"
: > "$log"
# The default variant without its cut, then C cut into blocks of 2048, 4096 and 8192.
cuts="4,1,0,0,1,1;4,1,0,0,1,1,2048;4,1,0,0,1,1,4096;4,1,0,0,1,1,8192"
step assembly 150 --ops a --formats full,rfp --panel "$cuts" 8192 16384
python3 scripts/vendor_baseline.py --syrk 8192,16384 --reps 5 --out "$out/product_cut_vendor.csv" \
    2>> "$log"
echo "vendor: exit $? at ${SECONDS}s"
step cholesky 150 --ops c --formats rfp,full --panel "4,1,0,0,1,1;4,1,0,0,1,1,4096" 16384
step cholesky-split 120 --ops c --formats rfp --schedule split --split-chain 4096 \
    --split-solve tiles,r1024,r2048 16384
cat "$csv" "$out/product_cut_vendor.csv"
