# Sourced by scripts/h200_batched*.sh (with the script's arguments): unset variables are
# errors; `out` is the output folder (the first argument, else $OUT, else figures/h200),
# `bench` the benchmark (BENCH, else the carried .k25/ex/batched_bench, else the release
# build, built here when missing) and `runs` the timed runs (RUNS, else 20).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/batched_bench}
[ -x "$bench" ] || bench=target/release/examples/batched_bench
[ -x "$bench" ] || cargo build --release --example batched_bench 2>&1 | tail -2
runs=${RUNS:-20}

# best_per_n COLUMN BASELINE FILE: per order n (column 2) of batched_bench's profile CSV FILE
# (its header skipped, WRONG rows left out), the ms (column 10) of the row whose COLUMN reads
# BASELINE (the last such), the fastest row's ms, their ratio and the fastest row's COLUMN;
# one line per n, sorted by n.
best_per_n() {
    tail -n +2 "$3" | grep -v WRONG | awk -F, -v col="$1" -v base="$2" '
        {
            n = $2; ms = $10 + 0
            if ($col == base) f[n] = ms
            if (!(n in b) || ms < b[n]) { b[n] = ms; best[n] = $col }
        }
        END {
            for (n in b) printf "%s,%s,%.4f,%.3f,%s\n", n, (n in f) ? f[n] : "", b[n],
                (n in f && f[n] > 0) ? b[n] / f[n] : 0, best[n]
        }' | sort -t, -k1,1n
}
