"""torch.linalg.cholesky (cuSOLVER potrf, fp32) timed by CUDA events on SPD matrices of each
order given: prints `m,torch_ms`, the median of 20 after 3 warm-ups (the Cholesky sweeps'
vendor column: the rows cholesky_chain, cholesky_path, cholesky_split, chain_ahead and row_solve
of bench/experiments.tsv, run by scripts/bench)."""
import statistics, sys
import torch
print("m,torch_ms")
for m in map(int, sys.argv[1:]):
    g = torch.Generator(device="cuda").manual_seed(m)
    a = torch.rand(m, m, device="cuda", generator=g)
    spd = a @ a.T + m * torch.eye(m, device="cuda")
    for _ in range(3):
        torch.linalg.cholesky(spd)
    torch.cuda.synchronize()
    ms = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.linalg.cholesky(spd)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    print(f"{m},{statistics.median(ms):.4f}", flush=True)
