"""The first call of a fresh process, taken apart: the CLI's spd-solve at 1024 with the driver's
shader disk cache off and on (per-program compile times from RUST_LOG=symraster=debug), and the
Python package's first la.solve in fresh processes, cache off and warm."""
import os, re, subprocess, sys, time, json, tempfile
import numpy as np
out = sys.argv[1]; binary = sys.argv[2]
os.makedirs(out, exist_ok=True)
m = 1024
rng = np.random.default_rng(7)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m); b = rng.uniform(0, 1, m)
d = tempfile.mkdtemp()
np.save(f"{d}/c.npy", c); np.save(f"{d}/b.npy", b)
def cli(label, extra):
    env = dict(os.environ, RUST_LOG="symraster=debug", **extra)
    s = time.perf_counter()
    p = subprocess.run([binary, "spd-solve", "--c", f"{d}/c.npy", "--b", f"{d}/b.npy", "--output", f"{d}/x.npy"],
                       capture_output=True, text=True, env=env)
    wall = (time.perf_counter() - s) * 1e3
    with open(f"{out}/cli_{label}.log", "w") as f:
        f.write(p.stdout); f.write(p.stderr)
    progs = [(mm.group(1), float(mm.group(2))) for mm in re.finditer(r"program (.*?) compiled and linked in ([0-9.]+) ms", p.stderr)]
    tot = sum(t for _, t in progs)
    print(f"cli {label}: rc {p.returncode} wall {wall:.1f} ms, {len(progs)} programs, compile+link {tot:.1f} ms", flush=True)
    for n, t in sorted(progs, key=lambda x: -x[1])[:40]:
        print(f"   {t:8.1f} ms  {n}")
cli("nocache", {"__GL_SHADER_DISK_CACHE": "0"})
cli("cache-first", {"__GL_SHADER_DISK_CACHE_PATH": f"{d}/glcache"})
cli("cache-warm", {"__GL_SHADER_DISK_CACHE_PATH": f"{d}/glcache"})
fd = os.path.join(os.getcwd(), "python/benchmarks/frontdoor.py")
for label, extra in [("nocache", {"__GL_SHADER_DISK_CACHE": "0"}), ("nocache2", {"__GL_SHADER_DISK_CACHE": "0"}),
                     ("cache-first", {"__GL_SHADER_DISK_CACHE_PATH": f"{d}/pycache"}),
                     ("cache-warm", {"__GL_SHADER_DISK_CACHE_PATH": f"{d}/pycache"})]:
    for side in ("symraster", "torch"):
        if side == "torch" and label != "nocache": continue
        p = subprocess.run([sys.executable, fd, "--first-call-child", side, str(m)], capture_output=True, text=True,
                           env=dict(os.environ, **extra))
        print(f"python first call {side} {label}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr[-300:]}", flush=True)
# the Python first call taken apart: context, then each op
code = r'''
import time, numpy as np
t0 = time.perf_counter()
import symraster as la
from symraster import _native
t1 = time.perf_counter()
m = 1024
rng = np.random.default_rng(7)
c = rng.uniform(-1, 1, (m, m)); c = (c + c.T) / 2; np.fill_diagonal(c, m); b = rng.uniform(0, 1, m)
t2 = time.perf_counter()
x = la.solve(c, b, assume_a="pos"); t3 = time.perf_counter()
x = la.solve(c, b, assume_a="pos"); t4 = time.perf_counter()
l = la.cholesky(c); t5 = time.perf_counter()
print(f"import {1e3*(t1-t0):.1f} ms; first solve {1e3*(t3-t2):.1f}; second {1e3*(t4-t3):.1f}; first cholesky after {1e3*(t5-t4):.1f}")
'''
p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, __GL_SHADER_DISK_CACHE="0"))
print("python apart (nocache):", p.stdout.strip(), p.stderr[-300:])
