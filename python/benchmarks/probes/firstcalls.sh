#!/bin/bash
# First calls in fresh processes, the build before the programs compiled side by side
# (1fd2bbf, *_old) and this build alternating; the driver's shader disk cache off.
export __GL_SHADER_DISK_CACHE=0
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for i in $(seq ${ROUNDS:-2}); do for v in _old ""; do
  for op in ${OPS:-wls:1024 spd:1024 wls:4096 spd:8192}; do
    set -- ${op/:/ }
    t=$(date +%s%N); RUST_LOG=symraster=debug ${BIN:-.bench/bin}/solve_bench$v --ops $1 --reps 1 $2 > /tmp/sb.txt 2>&1
    echo "solve_bench$v $1 $2: process $(ms $t) ms; first solve phases: $(grep -E 'phases\] (least squares|SPD solve)' /tmp/sb.txt | head -12 | sed -E 's/.*phases\] //' | awk -F': ' '{printf "%s=%s; ", $2, $3}')"
  done
done; done
