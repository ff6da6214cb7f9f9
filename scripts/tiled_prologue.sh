# Sourced by scripts/h200_product_cut.sh, h200_row_solve.sh and h200_parity.sh (with the
# script's arguments) after they set `default_runs` and `budget`: scripts/bench_prologue.sh for
# examples/tiled_bench.rs (`out`, `bench`, `runs`), then left and step.
example=tiled_bench
. "$(dirname "${BASH_SOURCE[0]}")/bench_prologue.sh"

# left MAX: the seconds left of the run's budget (BUDGET, else `budget`), at most MAX and at
# least 1: each step's timeout.
left() {
    local l=$((${BUDGET:-$budget} - SECONDS))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 1 ] && l=1
    echo "$l"
}

# step NAME LIMIT ARGS...: the benchmark with --runs $runs ARGS (timeout: left LIMIT), its rows
# (the header dropped) prefixed by NAME appended to $csv, its stderr to $log.
step() {
    local name=$1 limit=$2
    shift 2
    timeout "$(left "$limit")" "$bench" --runs "$runs" "$@" 2>> "$log" | tail -n +2 |
        sed "s/^/$name,/" >> "$csv"
    echo "$name: exit ${PIPESTATUS[0]} at ${SECONDS}s"
}
