#!/usr/bin/env bash
# Issue 26's inversion, sign and Lyapunov rows on the GPU machine: ours (GL timer queries for
# the inverses, wall time for sign and Lyapunov, whose loops read sums back every step) and
# the vendor's (torch with CUDA events, scripts/vendor_baseline.py --applications), in one run.
# Build first (`cargo build --release --examples`), then from the repository root:
#
#     scripts/h200_inverse.sh "$OUT"
#
# writes $OUT/inverse_ours.csv, $OUT/sign_ours.csv and $OUT/applications.csv (rows
# inverse_general, inverse_spd at 4096 and 8192, sign and lyapunov at 1024 and 4096; columns
# op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio).
set -u
out=${1:-figures/h200}
examples=${EXAMPLES:-target/release/examples}
mkdir -p "$out"
timeout 400 "$examples/inverse_timing" 4096 8192 > "$out/inverse_ours.csv" 2> "$out/inverse_ours.log"
echo "inverse_timing: exit $?"
timeout 300 "$examples/sign_timing" 1024 4096 > "$out/sign_ours.csv" 2> "$out/sign_ours.log"
echo "sign_timing: exit $?"
timeout 300 python3 scripts/vendor_baseline.py --applications --inverse-sizes 4096,8192 \
    --sign-sizes 1024,4096 --reps 5 --ours-inverse "$out/inverse_ours.csv" \
    --ours-sign "$out/sign_ours.csv" --applications-out "$out/applications.csv"
echo "vendor: exit $?"
cat "$out/applications.csv"
