#!/usr/bin/env bash
# Issue 26's latency per Gauss-Jordan block on the GPU machine: the general inverses (GJE and
# LU, GL timer queries: examples/inverse_timing.rs --general) at 1024, 4096 and 8192 for the
# old panel path and each latency option of src/inverse/panel.rs alone and together:
# --step registers|combined|broadcast (tournament rows in registers; combined: the subgroups'
# bests combined by subgroup reductions; broadcast: also the pivot row as vec4s), --split
# steps|registers (the panel's inverses by parallel substitution steps; registers: each
# invocation's entries in registers), --fuse on (a tournament's last
# merge in the launch of the round before), and --update rank64 (the block updates on 64 x 64
# tiles instead of the default's 128 x 128 at 4096). The residual ‖I − A·X‖ is estimated at
# 1024 and 4096 (the subgroup paths run only on a GPU). Then the per-launch trace at 1024 and
# 4096 of the combination fastest at 4096 (GJE; the last traced order). With the release
# binary carried as .k25/ex/inverse_timing, from the repository root (about three minutes;
# VARIANTS="old all_broadcast" runs only the variants named):
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
    "old|"
    "registers|--step registers"
    "combined|--step combined"
    "broadcast|--step broadcast"
    "split_steps|--split steps"
    "split_registers|--split registers"
    "fused|--fuse on"
    "all_combined|--step combined --split registers --fuse on"
    "all_broadcast|--step broadcast --split registers --fuse on"
    "rank64|--update rank64"
    "all_broadcast_rank64|--step broadcast --split registers --fuse on --update rank64"
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
best=${best:-all_combined}
echo "$best: $(flags_of "$best")" | tee "$out/best.txt"
for s in $traced; do
    # shellcheck disable=SC2046
    RUST_LOG=symraster::inverse=trace timeout 60 "$bin" --general "$s" $(flags_of "$best") \
        > /dev/null 2> "$out/trace_best_$s.txt"
    echo "trace $s: exit $?"
done
column -s, -t < "$csv"
