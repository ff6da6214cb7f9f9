# Sourced by scripts/batched_prologue.sh and tiled_prologue.sh (the H200 scripts' own
# prologues, with the script's arguments) after they set `example` (an example's name) and
# `default_runs`: unset variables are errors; `out` is the output folder (the first argument,
# else $OUT, else figures/h200), `bench` the benchmark (BENCH, else the carried
# .k25/ex/$example, else the release build, built here when missing) and `runs` the timed runs
# (RUNS, else default_runs).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/$example}
[ -x "$bench" ] || bench=target/release/examples/$example
[ -x "$bench" ] || cargo build --release --example "$example" 2>&1 | tail -2
runs=${RUNS:-$default_runs}
