#!/usr/bin/env bash
# The committed GPU run (figures/h200/): the vendor baseline and `symraster reproduce --sizes
# paper`, one part per process under its own time limit, so that a slow part cannot lose the
# others' results. Run from the repository root on the GPU machine:
#
#     SYMRASTER=path/to/symraster scripts/h200_reproduce.sh OUT_DIR
set -u
out=${1:-figures/h200}
bin=${SYMRASTER:-target/release/symraster}
mkdir -p "$out"
"$bin" info > "$out/info.txt" 2>&1
# The vendor library at every size any part uses (sizes given twice are timed once).
fig8=256,512,768,1024,1280,1536,1792,2048
fig9=256,512,768,1024,1280,1536,1792,2048,2304,2560,2816,3072,3328,3584,3840,4096
big=512,1024,2048,4096,8192,16384
[ -n "${NO_VENDOR:-}" ] || timeout 90 python3 scripts/vendor_baseline.py --fig8 "$fig8,$big" --fig9 "$fig9,$big" \
    --inverse "$big" --reps 5 --out "$out/vendor.csv" 2>&1 | tail -1
# torch f64's least-squares times at the tables' sizes (their torch columns) and cuBLAS SSYRK's
# (the throughput figure's SSYRK line), merged into vendor.csv.
[ -n "${NO_VENDOR:-}" ] || timeout 120 python3 scripts/vendor_baseline.py --wls 512,1024,1536,2048,4096 \
    --syrk "$fig8,$big" --reps 3 --out "$out/vendor.csv" 2>&1 | tail -1
for part in ${PARTS:-fig8:60 fig9:150 tables:100 throughput:150 inversion:240}; do
    name=${part%%:*}
    limit=${part##*:}
    start=$(date +%s)
    timeout "$limit" "$bin" reproduce --sizes paper --only "$name" --quiet --out "$out" \
        > "$out/.$name.log" 2>&1
    status=$?
    echo "$name: exit $status after $(( $(date +%s) - start )) s"
    [ "$status" = 0 ] || tail -3 "$out/.$name.log"
    rm -f "$out/.$name.log"
done
