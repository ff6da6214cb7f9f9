#!/usr/bin/env bash
# Issue 25's product kernel on the H200: the assembly C = A·diag(d)·Aᵀ (m x n A, n = 2m, lower
# triangle) at m = 4096, 8192 and 16384, full and RFP storage, for the default kernel and each
# variant: the packed-panel product's PanelVariant (slice,group,pad,regbuf[,unroll[,root_d]];
# examples/tiled_bench.rs --panel) and register tiles of 8 x 16 / 16 x 8 (--tiles). Writes
# under OUT:
#   assembly_sweep.csv   config,method,op,format,m,n,ms,gflops (GPU time, median of RUNS)
#   assembly_best.txt    per size and format: the fastest rows, TFLOP/s (m²n / time) and the
#                        ratio to cuBLAS SSYRK (figures/h200/vendor_parity.csv's vendor_ms)
#   assembly_log.txt     the benchmark's stderr (device line, failed variants)
#   binaries/            each variant's panel-product program binary (.bin) and its text
#                        (.txt: NVIDIA's assembly); assembly_binaries.txt counts per binary
# Run from the repository root on the GPU machine with the release example carried:
#
#     cargo build --release --example tiled_bench && mkdir -p .k25/ex && \
#         cp target/release/examples/tiled_bench .k25/ex/
#     scripts/h200_assembly.sh [OUT]     (BENCH=… another build, SIZES="4096 8192 16384",
#                                         RUNS=5, RUNS_LARGE=3 for m ≥ 16384)
# About 4 minutes on the H200 (at m = 16384 most of it making the random 2 GiB A per variant
# and format); every step's timeout is cut to what is left of BUDGET (450 s) so the whole stays
# under 8 minutes (the binaries first: 80 s at most).
set -u
out=${1:-${OUT:-figures/h200}}
mkdir -p "$out"
bench=${BENCH:-.k25/ex/tiled_bench}
sizes=${SIZES:-4096 8192 16384}
runs=${RUNS:-5}
runs_large=${RUNS_LARGE:-3}
# The default variant first (it is also the method `tiled` of the other benchmarks), then each
# change alone, then combinations.
panels="4,1,0,0;4,8,0,0;4,16,0,0;4,1,1,0;4,1,0,1;4,1,0,0,1;4,1,0,0,0,1;8,1,0,1;8,8,1,1,1,1"
# Register tiles of 8 x 16 and 16 x 8 per invocation (128 x 256 and 256 x 128 tiles), and
# 64 x 256 tiles from 32 x 8 invocations of 8 x 8, against the default 128 x 128 (8 x 8).
tiles="16,16,8,16,16,1,32;16,16,16,8,16,1,32;32,8,8,8,16,1,32"
tile_panels="4,1,0,0;4,1,0,0,1;4,8,0,1,1,1"
csv="$out/assembly_sweep.csv"
log="$out/assembly_log.txt"
echo "config,method,op,format,m,n,ms,gflops" > "$csv"
: > "$log"
# What the driver made of each panel variant: its program binary (NVIDIA's holds the
# assembly as text) and counts of the instructions that tell unrolling, shared-memory reads and
# local memory (spills or dynamically indexed arrays: `lmem`).
timeout 40 "$bench" --runs 1 --ops a --formats full --panel "$panels" --dump "$out/binaries" 256 \
    > /dev/null 2>> "$log"
timeout 40 "$bench" --runs 1 --ops a --formats full --tiles "$tiles" --panel "$tile_panels" \
    --dump "$out/binaries" 256 > /dev/null 2>> "$log"
python3 - "$out/binaries" <<'EOF' > "$out/assembly_binaries.txt"
import pathlib, re, sys
d = pathlib.Path(sys.argv[1])
print("binary,bytes,text_lines,lmem,MAD,FMA,LDS,STS,BAR,REP,BRA")
for f in sorted(d.glob("*.bin")):
    data = f.read_bytes()
    text = "\n".join(m.decode() for m in re.findall(rb"[\x20-\x7e\t\n]{4,}", data))
    (d / (f.stem + ".txt")).write_text(text)
    lines = text.splitlines()
    count = lambda w: sum(1 for l in lines if re.search(rf"\b{w}", l))
    print(",".join([f.name, str(len(data)), str(len(lines))]
                   + [str(count(w)) for w in ["lmem", "MAD", "FMA", "LDS", "STS", "BAR", "REP", "BRA"]]))
EOF
cat "$out/assembly_binaries.txt"
# Seconds left of the whole run's budget (BUDGET, default 450), at most $1: each step's timeout.
left() {
    local l=$((${BUDGET:-450} - SECONDS))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 1 ] && l=1
    echo "$l"
}
for m in $sizes; do
    r=$runs
    [ "$m" -ge 16384 ] && r=$runs_large
    limit=60
    [ "$m" -ge 16384 ] && limit=150
    timeout "$(left $limit)" "$bench" --runs "$r" --ops a --formats full,rfp --panel "$panels" "$m" \
        2>> "$log" | tail -n +2 | sed 's/^/default-tiles,/' >> "$csv"
    echo "m $m panel variants: exit ${PIPESTATUS[0]}"
    timeout "$(left $limit)" "$bench" --runs "$r" --ops a --formats full,rfp --tiles "$tiles" \
        --panel "$tile_panels" "$m" 2>> "$log" | tail -n +2 | sed 's/^/tiles,/' >> "$csv"
    echo "m $m tiles: exit ${PIPESTATUS[0]}"
done
python3 - "$out" <<'EOF'
import csv, sys
out = sys.argv[1]
vendor = {}
try:
    for r in csv.DictReader(open("figures/h200/vendor_parity.csv")):
        if r["op"] == "assembly":
            vendor[int(r["m"])] = float(r["vendor_ms"])
except OSError as e:
    print(f"no vendor times: {e}", file=sys.stderr)
rows = {}
for r in csv.DictReader(open(f"{out}/assembly_sweep.csv")):
    m, n, ms = int(r["m"]), int(r["n"]), float(r["ms"])
    rows.setdefault((m, r["format"]), []).append((ms, r["method"], n))
with open(f"{out}/assembly_best.txt", "w") as f:
    for (m, fmt) in sorted(rows):
        ranked = sorted(rows[(m, fmt)])
        base = [ms for ms, meth, _ in ranked if meth == "tiled-s4g1p0r0"]
        for ms, meth, n in ranked[:4]:
            v = vendor.get(m)
            ratio = f"{ms / v:.3f}x cuBLAS ({v:.2f} ms)" if v else "no cuBLAS time"
            gain = f", {base[0] / ms:.3f}x the default's speed" if base else ""
            f.write(f"m {m} n {n} {fmt}: {meth} {ms:.3f} ms, "
                    f"{m * m * n / ms / 1e9:.1f} TFLOP/s, {ratio}{gain}\n")
print(open(f"{out}/assembly_best.txt").read())
EOF
