#!/usr/bin/env bash
# Issue 26's sign and Lyapunov measurements on the GPU machine, ours (old and new choices) and
# torch's mirror of the same iteration (scripts/vendor_baseline.py --applications), in one run
# of about 3-4 minutes. Release examples sign_timing, sign_phases, dgemm_bench and
# inverse_timing under $EXAMPLES (default .k25/ex); from the repository root:
#
#     scripts/h200_sign_lyap.sh "$OUT"
#
# writes under the folder given (default $OUT, else figures/h200):
#   sign_ours.csv      sign_timing 1024 4096: rows sign (hand-over to the polish, f32 polish
#                      correction: the defaults), sign_newton (Newton to convergence),
#                      sign_f64corr (the f64 correction), lyap (squares kept between calls, the
#                      default), lyap_fresh (kept squares released before each call),
#                      sign_perpass and lyap_perpass (the Newton iteration's three read-backs
#                      per step, NewtonSync::PerPass; the default reads back once)
#   sign_phases.csv    sign_phases 1024 4096: phases (newton_iterate beside
#                      newton_iterate_perpass), both polish corrections, both sign totals,
#                      lyapunov_total, lyapunov_total_fresh and lyapunov_total_perpass
#   lyapunov_phases.txt  the Lyapunov solver's phase log (RUST_LOG=symraster=debug) of that run
#   dgemm.csv          dgemm_bench 1024 4096: every DoubleTile (dgemm_ab_<tile>, dgemm_abt_<tile>)
#   inverse_ours.csv   inverse_timing --general 1024 4096: the general Gauss-Jordan inverse
#   applications.csv   ours beside torch: inverse_general (torch.linalg.inv), sign,
#                      sign_newton, sign_f64corr, sign_perpass, lyapunov, lyapunov_fresh, lyapunov_perpass at
#                      1024 and 4096 (columns op,m,n,rhs,symraster_ms,vendor,vendor_ms,ratio)
# Each program warms up first (an idle H200 runs its first ~0.4 s at idle clocks).
set -u
out=${1:-${OUT:-figures/h200}}
examples=${EXAMPLES:-.k25/ex}
mkdir -p "$out"
timeout 150 "$examples/sign_timing" 1024 4096 > "$out/sign_ours.csv" 2> "$out/sign_ours.log"
echo "sign_timing: exit $?"
RUST_LOG=symraster=debug timeout 120 "$examples/sign_phases" 1024 4096 \
    > "$out/sign_phases.csv" 2> "$out/lyapunov_phases.txt"
echo "sign_phases: exit $?"
timeout 90 "$examples/dgemm_bench" 1024 4096 > "$out/dgemm.csv" 2> "$out/dgemm.log"
echo "dgemm_bench: exit $?"
timeout 60 "$examples/inverse_timing" --general 1024 4096 > "$out/inverse_ours.csv" 2> "$out/inverse_ours.log"
echo "inverse_timing: exit $?"
timeout 150 python3 scripts/vendor_baseline.py --applications --inverse-sizes 1024,4096 \
    --sign-sizes 1024,4096 --reps 5 --ours-sign "$out/sign_ours.csv" \
    --ours-inverse "$out/inverse_ours.csv" --applications-out "$out/applications.csv"
echo "vendor: exit $?"
cat "$out/sign_ours.csv" "$out/applications.csv"
grep -E "^(newton_iterate|lyapunov_total|sign_total)" "$out/sign_phases.csv"
grep -E "^dgemm_ab" "$out/dgemm.csv"
