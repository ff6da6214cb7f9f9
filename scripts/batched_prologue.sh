# Sourced by scripts/h200_batched*.sh (with the script's arguments): scripts/bench_prologue.sh
# for examples/batched_bench.rs (`out`, `bench`, `runs`: RUNS, else 20), then best_per_n.
example=batched_bench
default_runs=20
. "$(dirname "${BASH_SOURCE[0]}")/bench_prologue.sh"

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
