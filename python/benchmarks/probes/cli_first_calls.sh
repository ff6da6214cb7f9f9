#!/bin/bash
# The command line's SPD solve at 1024 per process with the driver's shader cache warm (three
# rounds) and off (two), for each binary named in BUILDS (in BIN; e.g. a build of an earlier
# commit beside this one).
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
python3 -c "
import numpy as np
m=1024; rng=np.random.default_rng(7); c=rng.uniform(-1,1,(m,m)); c=(c+c.T)/2; np.fill_diagonal(c,m)
np.save('/tmp/c.npy',c); np.save('/tmp/b.npy',rng.uniform(0,1,m))"
run() { ${BIN:-.bench/bin}/$1 spd-solve --c /tmp/c.npy --b /tmp/b.npy --output /tmp/x.npy > /dev/null 2>&1; }
for v in ${BUILDS:-symraster_old symraster}; do run $v; run $v; done
for i in 1 2 3; do for v in ${BUILDS:-symraster_old symraster}; do
  t=$(date +%s%N); run $v; echo "$v cache warm: $(ms $t) ms"; done; done
for i in 1 2; do for v in ${BUILDS:-symraster_old symraster}; do
  t=$(date +%s%N); __GL_SHADER_DISK_CACHE=0 run $v; echo "$v cache off: $(ms $t) ms"; done; done
