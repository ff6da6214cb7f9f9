"""The bus beside our uploads: torch's host ↔ GPU copies on the same machine.

Prints CSV ``what,mib,ms,gb_s`` (the columns of ``bench/src/bin/transfer_bench.rs``, which
times the library's buffer layer): a plain copy from pinned host memory to the GPU and back
(``torch.empty(..., pin_memory=True)``, ``copy_``), and the same from pageable numpy arrays
(``torch.from_numpy(a).cuda()``, ``.cpu()``), each the median of --runs after a warm-up,
synchronized (wall time).

    python transfers.py [--mib 64,256,1024] [--runs 5]
"""

import argparse
import statistics
import time

import numpy as np
import torch


def timed(fn, runs):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", default="64,256,1024")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    print("what,mib,ms,gb_s")
    for mib in (int(v) for v in args.mib.split(",")):
        n = mib * (1 << 20) // 4
        pinned = torch.empty(n, dtype=torch.float32, pin_memory=True)
        pinned.fill_(1.0)
        device = torch.empty(n, dtype=torch.float32, device="cuda")
        pageable = np.ones(n, dtype=np.float32)
        cases = [
            ("torch_pinned_up", lambda: device.copy_(pinned, non_blocking=True)),
            ("torch_pinned_down", lambda: pinned.copy_(device, non_blocking=True)),
            ("torch_pageable_up", lambda: torch.from_numpy(pageable).cuda()),
            ("torch_pageable_down", lambda: device.cpu().numpy()),
        ]
        for what, fn in cases:
            s = timed(fn, args.runs)
            print(f"{what},{mib},{s * 1e3:.2f},{mib * (1 << 20) / s / 1e9:.1f}", flush=True)


if __name__ == "__main__":
    main()
