#!/usr/bin/env bash
# Issue 28's sixth pass on the H200, one run under 3 minutes: the batched solves by
# substitution (the previous plan) against products with L⁻¹ formed by the factor
# (src/batched/plan.rs TriangularSolves) at the issue's sizes (n:B = 8:100000, 16:100000,
# 32:20000, 128:1000), each job alone with 0, 1 and 2 refinement steps at the default group
# shape (--profile with the shape's invocations: 32, 32, 128, 512), every least-squares
# answer checked (a wrong one is marked WRONG in its row), then the defaults (L⁻¹ from
# plan::INVERSE_FROM_ORDER on) beside torch's pipeline in the same run
# (scripts/vendor_baseline.py --batched). Writes under OUT (default $OUT):
#   inverse_jobs.csv      GPU ms per job, n, refinement steps and solves (column 14)
#   inverse_summary.csv   per job, n and refinement steps: substitution's ms, the
#                         inverse's, their ratio (< 1: the inverse is faster)
#   batched_ours.csv, batched_parity.csv  the defaults against torch (as h200_batched.sh)
#   inverse_info.txt      the device and the checks' lines
# Run from the repository root with the release example carried:
#     cargo build --release --example batched_bench && mkdir -p .k25/ex \
#         && cp target/release/examples/batched_bench .k25/ex/
#     scripts/h200_batched_inverse.sh [OUT]     (BENCH=path to name another build)
source "$(dirname "$0")/batched_prologue.sh" "$@"
: > "$out/inverse_info.txt"
rm -f "$out/inverse_jobs.csv"
# n:B:invocations per problem (the default shapes of src/batched/plan.rs DEFAULT_SHAPES).
for size in ${SHAPES:-8:100000:32 16:100000:32 32:20000:128 128:1000:512}; do
    IFS=: read -r n b t <<< "$size"
    timeout 40 "$bench" --runs "$runs" --profile "$t" --solves substitution,inverse "$n:$b" \
        > "$out/inverse_$n.csv" 2>> "$out/inverse_info.txt"
    echo "n $n: exit $?"
    if [ -f "$out/inverse_jobs.csv" ]; then
        tail -n +2 "$out/inverse_$n.csv" >> "$out/inverse_jobs.csv"
    else
        cp "$out/inverse_$n.csv" "$out/inverse_jobs.csv"
    fi
    rm -f "$out/inverse_$n.csv"
done
cat "$out/inverse_jobs.csv"
# Per job, n and refinement steps: substitution's time and the inverse's.
{
    echo "job,n,refine,substitution_ms,inverse_ms,ratio"
    tail -n +2 "$out/inverse_jobs.csv" | grep -v WRONG | awk -F, '
        $14 == "Substitution" || $14 == "Inverse" {
            key = $1 "," $2 "," $9
            if ($14 == "Substitution") s[key] = $10 + 0; else i[key] = $10 + 0
        }
        END {
            for (key in s) if (key in i)
                printf "%s,%.4f,%.4f,%.3f\n", key, s[key], i[key], (s[key] > 0 ? i[key] / s[key] : 0)
        }' | sort -t, -k2,2n -k1,1 -k3,3n
} > "$out/inverse_summary.csv"
echo "summary:"; cat "$out/inverse_summary.csv"
# The defaults beside torch, as scripts/h200_batched.sh.
sizes=${SIZES:-8:100000 16:100000 32:20000 128:1000}
list=${sizes// /,}
timeout 45 "$bench" --runs "$runs" $sizes > "$out/batched_ours.csv" 2>> "$out/inverse_info.txt"
echo "ours: exit $?"; cat "$out/batched_ours.csv"
timeout 60 python3 scripts/vendor_baseline.py --batched "$list" --reps "$runs" \
    --ours "$out/batched_ours.csv" --parity-out "$out/batched_parity.csv" 2>&1 | tail -1
cat "$out/batched_parity.csv"
grep WRONG "$out/inverse_jobs.csv" | head -5
