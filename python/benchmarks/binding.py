"""The binding's share like for like: the Python package's rows of python/benchmarks/frontdoor.py
beside the Rust API's rows of bench/src/bin/frontdoor.rs for the same op, m and dtype, both
sides' calls timed back to back after a first call (frontdoor.py's order ours-first, or a run
with --no-torch), from processes run in turn.

    python benchmarks/binding.py --rust r1.csv,r2.csv --python p1.csv,p2.csv [--order ours-first]
        [--out binding.csv]

--rust and --python pair their files round by round. A Python file with an ``order`` column
(frontdoor.py's --orders-out) gives its rows of --order only. Output CSV
``op,m,n,dtype,round,python_ms,rust_ms,python_over_rust``: a row per round, and with more than
one round a row ``median`` per op, m and dtype (the median over the rounds of each side, and
their ratio).
"""

import argparse
import csv
import statistics
import sys

COLUMNS = ["op", "m", "n", "dtype", "round", "python_ms", "rust_ms", "python_over_rust"]


def rows_of(path, order=None):
    """(op, m, n, dtype) → ms of a frontdoor CSV (rows of `order` where it has an order
    column), in the file's order."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if not r.get("op") or not r.get("symraster_ms"):
                continue
            if order and r.get("order") and r["order"] != order:
                continue
            out[(r["op"], r["m"], r["n"], r["dtype"])] = float(r["symraster_ms"])
    return out


def line(key, label, ours, theirs):
    op, m, n, dtype = key
    return {"op": op, "m": m, "n": n, "dtype": dtype, "round": label,
            "python_ms": f"{ours:.3f}", "rust_ms": f"{theirs:.3f}",
            "python_over_rust": f"{ours / theirs:.3f}"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rust", required=True, help="frontdoor.rs CSVs, comma-separated")
    p.add_argument("--python", required=True, help="frontdoor.py CSVs, comma-separated")
    p.add_argument("--order", default="ours-first",
                   help="the Python rows' order where the files have an order column")
    p.add_argument("--out", default=None, help="the CSV (default stdout)")
    args = p.parse_args()
    rust, python = args.rust.split(","), args.python.split(",")
    if len(rust) != len(python):
        p.error(f"{len(rust)} Rust files against {len(python)} Python files")
    rounds = [(rows_of(r), rows_of(q, args.order)) for r, q in zip(rust, python)]
    keys = [k for k in rounds[0][1] if all(k in r and k in q for r, q in rounds)]
    out = open(args.out, "w", newline="") if args.out else sys.stdout
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for key in keys:
        for i, (r, q) in enumerate(rounds):
            writer.writerow(line(key, str(i + 1), q[key], r[key]))
        if len(rounds) > 1:
            writer.writerow(line(key, "median", statistics.median(q[key] for _, q in rounds),
                                 statistics.median(r[key] for r, _ in rounds)))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
