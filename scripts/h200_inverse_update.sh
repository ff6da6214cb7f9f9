#!/usr/bin/env bash
# Issue 26's block updates on the GPU machine: the general inverses (Gauss-Jordan and LU) at
# 1024, 4096 and 8192 with the earlier tiled products and with the rank-b kernel
# (src/inverse/rank.rs: its tile by size, 64 x 64 and 128 x 128), and the LU's L⁻¹ by the
# solve with the identity (earlier) and by the triangular inverse (src/inverse/lu.rs), GL timer
# queries (the panel column reads pivoting/chunk/block/update/lower; Gauss-Jordan does not
# depend on `lower`); the residual of each inverse estimated at 1024 and 4096; then one traced
# run at 4096 with the defaults (rank, triangular; RUST_LOG=symraster::inverse=trace: GPU time
# per launch group, stderr kept). The earlier path is products/solve, the new rank/triangular.
# From the
# repository root with the release example carried in .k25/ex/:
#
#     bash scripts/h200_inverse_update.sh
#
# (the example built by `cargo build --release --example inverse_timing` and copied to
# .k25/ex/inverse_timing; EXAMPLES, SIZES, CHECK_SIZES and TRACE_SIZE override the defaults
# for a trial elsewhere).
# writes under $OUT: inverse_update.csv (columns of examples/inverse_timing.rs),
# inverse_update_check.csv (the same at 1024 and 4096 with column
# `residual`), inverse_update_trace.csv and inverse_update_trace.log (the trace), and
# inverse_update_summary.txt (the trace's per-block GPU µs summed by kind).
set -u
out=${OUT:-figures/h200}
ex=${EXAMPLES:-.k25/ex}
# Orders (overridable for a trial run elsewhere).
sizes=${SIZES:-1024 4096 8192}
check_sizes=${CHECK_SIZES:-1024 4096}
trace_size=${TRACE_SIZE:-4096}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$out/inverse_update_gpu.txt" 2>&1
updates=products,rank,rank64,rank128
timeout 270 "$ex/inverse_timing" $sizes --general --update "$updates" \
    --lower solve,triangular \
    > "$out/inverse_update.csv" 2> "$out/inverse_update.log"
echo "timing: exit $?"
timeout 130 "$ex/inverse_timing" $check_sizes --general --check --update products,rank \
    --lower solve,triangular \
    > "$out/inverse_update_check.csv" 2> "$out/inverse_update_check.log"
echo "check: exit $?"
RUST_LOG=symraster::inverse=trace timeout 90 "$ex/inverse_timing" "$trace_size" --general --update rank \
    > "$out/inverse_update_trace.csv" 2> "$out/inverse_update_trace.log"
echo "trace: exit $?"
# Per kind of traced launch group ("block update at 128: 52.1 µs" -> "block update"), the sum
# and count over the whole trace (both methods, the untimed warm-up rep included).
sed -n 's/.*\] \(.*\): \([0-9.]*\) µs$/\1|\2/p' "$out/inverse_update_trace.log" \
    | sed 's/ at [0-9]*|/|/; s/ [0-9]* groups.*|/|/; s/ last [a-z]*|/|/' \
    | awk -F'|' '{ s[$1] += $2; c[$1]++ } END { for (k in s) printf "%s,%d,%.1f us\n", k, c[k], s[k] }' \
    | sort > "$out/inverse_update_summary.txt"
grep "Gauss-Jordan inverse of order" "$out/inverse_update_trace.log" >> "$out/inverse_update_summary.txt"
cat "$out/inverse_update.csv" "$out/inverse_update_check.csv" "$out/inverse_update_summary.txt"
