#!/usr/bin/env bash
# Issue 26's latency per Gauss-Jordan block on the GPU machine, second round: the general
# inverses (GJE and LU, GL timer queries: examples/inverse_timing.rs --general) at 1024, 4096
# and 8192 for the defaults (PanelSettings::default(): --split registers --update rank64
# --fuse on, the first sweep's best), the previous defaults (--split columns --update rank
# --fuse off, for comparison), and the new options of src/inverse/panel.rs alone and together:
# --prefetch on (the leaf kernels' loads issued together before their serial sums; the last
# round's stash from one coalesced pass into shared memory), --fixed on (tournament.comp and
# leaf_finish.comp with their column loops to the compile-time 32 under NVIDIA's unroll
# pragma). The residual ‖I − A·X‖ is estimated at 1024 and 4096. Then the per-launch trace
# at 1024 and 4096 of the variant fastest at 4096 (GJE). With the release binary carried as
# .k25/ex/inverse_timing, from the repository root (about two minutes; VARIANTS="default
# both" runs only the variants named):
#
#     scripts/h200_inverse_latency.sh "$OUT"
#
# writes $OUT/inverse_latency.csv (column variant, then inverse_timing's columns),
# $OUT/<variant>.log (stderr), $OUT/best.txt, $OUT/trace_best_1024.txt and
# $OUT/trace_best_4096.txt (stderr with RUST_LOG=symraster::inverse=trace).
set -u
out=${1:-${OUT:-figures/h200/inverse_latency}}
bin=${EXAMPLES:-.k25/ex}/inverse_timing
# The orders (overridable for a trial elsewhere): with the residual check, without, traced.
checked=${CHECKED:-1024 4096}
plain=${PLAIN:-8192}
traced=${TRACED:-1024 4096}
mkdir -p "$out"
variants=(
    "default|"
    "previous|--split columns --update rank --fuse off"
    "prefetch|--prefetch on"
    "fixed|--fixed on"
    "both|--prefetch on --fixed on"
    "both_registers|--prefetch on --fixed on --step registers"
)
flags_of() {
    for v in "${variants[@]}"; do
        [ "${v%%|*}" = "$1" ] && echo "${v#*|}"
    done
}
csv="$out/inverse_latency.csv"
echo "variant,kind,method,storage,s,block,gpu_ms,wall_ms,gflops,panel,residual" > "$csv"
for v in "${variants[@]}"; do
    name=${v%%|*}
    flags=${v#*|}
    # VARIANTS="old fused ...": only those (all by default).
    case " ${VARIANTS:-$name} " in *" $name "*) ;; *) continue ;; esac
    for sizes in "$checked --check" "$plain"; do
        # shellcheck disable=SC2086
        timeout 45 "$bin" --general $sizes $flags > "$out/rows.tmp" 2>> "$out/$name.log"
        echo "$name ($sizes): exit $?"
        grep -v '^#' "$out/rows.tmp" | tail -n +2 | sed "s/^/$name,/" >> "$csv"
    done
done
rm -f "$out/rows.tmp"
last=${traced##* }
best=$(awk -F, -v s="$last" '$3 == "gje" && $5 == s { print $7, $1 }' "$csv" | sort -g \
    | head -1 | cut -d' ' -f2)
best=${best:-default}
echo "$best: $(flags_of "$best")" | tee "$out/best.txt"
for s in $traced; do
    # shellcheck disable=SC2046
    RUST_LOG=symraster::inverse=trace timeout 60 "$bin" --general "$s" $(flags_of "$best") \
        > /dev/null 2> "$out/trace_best_$s.txt"
    echo "trace $s: exit $?"
done
column -s, -t < "$csv"
