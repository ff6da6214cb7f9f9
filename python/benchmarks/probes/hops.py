"""Latency of one package call that does almost no work (cholesky of a 2 x 2 matrix: the
worker hop, a tiny GPU job, the answer back) and of the float32 cholesky at 1024, right after
a numpy product of order 1024 (numpy's BLAS threads then spin) and after 0.3 s of sleep (they
sleep), alternately; medians and 90th percentiles in ms. OPENBLAS_NUM_THREADS as the process
has it; prints CSV rows threads,call,state,median_ms,p90_ms,min_ms."""
import os, time
import numpy as np
import symraster as la

rng = np.random.default_rng(0)
m = 1024
g = rng.standard_normal((m, m))
c32 = (g @ g.T / m + np.eye(m)).astype(np.float32)
tiny = np.array([[4.0, 2.0], [2.0, 3.0]])
b = rng.standard_normal((m, m))
for _ in range(5):
    la.cholesky(tiny); la.cholesky(c32, lower=True)
rows = []
for name, call in (("tiny", lambda: la.cholesky(tiny)), ("cholesky_f32_1024", lambda: la.cholesky(c32, lower=True))):
    for state in ("after_numpy_product", "after_sleep"):
        ts = []
        for _ in range(25):
            if state == "after_numpy_product":
                b @ b
            else:
                time.sleep(0.3)
            t = time.perf_counter(); call(); ts.append(1e3 * (time.perf_counter() - t))
        ts = np.array(ts)
        rows.append(f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')},{name},{state},{np.median(ts):.3f},{np.percentile(ts, 90):.3f},{ts.min():.3f}")
for r in rows:
    print(r, flush=True)
