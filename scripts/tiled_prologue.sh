# Sourced by scripts/h200_product_cut.sh, h200_row_solve.sh and h200_parity.sh (with the
# script's arguments) after they set `default_runs` and `budget`: unset variables are errors;
# `out` is the output folder (the first argument, else $OUT, else figures/h200), `bench` the
# benchmark (BENCH, else the carried .k25/ex/tiled_bench, else the release build, built here
# when missing) and `runs` the timed runs (RUNS, else default_runs).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
[ -x "$bench" ] || bench=target/release/examples/tiled_bench
[ -x "$bench" ] || cargo build --release --example tiled_bench 2>&1 | tail -2
runs=${RUNS:-$default_runs}

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
