"""Vendor baseline for bench/src/bin/tiled_bench.rs on the same GPU: torch fp32 (TF32 off) (A·d)·Aᵀ
(the full product) and torch.linalg.cholesky, median of CUDA-event times after a warm-up.
Prints CSV rows like tiled_bench's (GFLOP/s on the same useful flop counts: m(m+1)·n for
assembly, m³/3 for Cholesky).  Usage: python3 tiled_torch_baseline.py mxn ..."""
import sys
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def median_ms(f, runs=9):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


for size in sys.argv[1:] or ["8192x16384"]:
    m, n = (int(x) for x in size.split("x")) if "x" in size else (int(size), 2 * int(size))
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(m, n, device="cuda", generator=g) - 0.5
    d = torch.rand(n, device="cuda", generator=g) + 0.5
    ms = median_ms(lambda: (a * d) @ a.T)
    print(f"torch,assembly,full,{m},{n},{ms:.4f},{m * (m + 1) * n / ms / 1e6:.2f}", flush=True)
    c = (a * d) @ a.T
    ms = median_ms(lambda: torch.linalg.cholesky(c))
    print(f"torch,cholesky,full,{m},{m},{ms:.4f},{m ** 3 / 3 / ms / 1e6:.2f}", flush=True)
