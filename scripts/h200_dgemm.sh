#!/usr/bin/env bash
# Issue 26's f64 product on the GPU machine: ours (examples/dgemm_bench: GL timer queries,
# median of 5 after a warm-up; every work-group tile and the one picked, A·B, A·Bᵀ, with the
# Σ C² sums, and the f32 tiled product with B plain and transposed) and the vendor's (torch
# matmul in f64, which uses the FP64 tensor cores, and in f32 with TF32 off; CUDA events,
# median of 5 after a warm-up), in one run. Build first (`cargo build --release --examples`),
# then from the repository root:
#
#     scripts/h200_dgemm.sh "$OUT"
#
# writes $OUT/dgemm_ours.csv and $OUT/dgemm_torch.csv, both `what,n,ms,tflops` (2n³ flops).
set -u
out=${1:-figures/h200}
examples=${EXAMPLES:-target/release/examples}
sizes=${SIZES:-1024 2048 4096 8192}
mkdir -p "$out"
# shellcheck disable=SC2086
timeout 400 "$examples/dgemm_bench" $sizes > "$out/dgemm_ours.csv" 2> "$out/dgemm_ours.log"
echo "dgemm_bench: exit $?"
# shellcheck disable=SC2086
timeout 200 python3 - $sizes > "$out/dgemm_torch.csv" 2> "$out/dgemm_torch.log" <<'EOF'
import sys
import torch

torch.backends.cuda.matmul.allow_tf32 = False
print("what,n,ms,tflops")
for n in map(int, sys.argv[1:]):
    for dtype, name in ((torch.float64, "torch_f64"), (torch.float32, "torch_f32")):
        a = torch.rand(n, n, dtype=dtype, device="cuda") * 2 - 1
        b = torch.rand(n, n, dtype=dtype, device="cuda") * 2 - 1
        for what, f in (("ab", lambda: a @ b), ("abt", lambda: a @ b.T)):
            f()
            torch.cuda.synchronize()
            ms = []
            for _ in range(5):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                f()
                end.record()
                torch.cuda.synchronize()
                ms.append(start.elapsed_time(end))
            t = sorted(ms)[2]
            print(f"{name}_{what},{n},{t:.4f},{2 * n**3 / (t * 1e9):.3f}")
EOF
echo "torch: exit $?"
cat "$out/dgemm_ours.csv" "$out/dgemm_torch.csv"
