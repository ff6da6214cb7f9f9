"""The Python package's front door end to end (issue 42), beside torch on the same GPU.

Each operation is timed from the caller's numpy arrays to numpy results (wall time,
``time.perf_counter``), the median of --runs calls after one warm-up call, in one process;
torch runs from the same numpy arrays in the same process (``torch.from_numpy(...).cuda()``,
the op, ``.cpu().numpy()``, ``torch.cuda.synchronize()``):

- solve_pos (float64, and float32: C and b rounded to float32, ours refined to float64's
  accuracy and returned in float32, torch's in float32): ``la.solve(C, b, assume_a="pos")``;
  torch ``linalg.cholesky`` + ``cholesky_solve``.
- cholesky (float64 and float32): ``la.cholesky(C, lower=True)``; ``linalg.cholesky``.
- cho_factor_solve (float64): ``la.cho_solve(la.cho_factor(C), b)``; torch as scipy's pair
  runs: ``linalg.cholesky`` with the factor back as a numpy array (what ``cho_factor``
  returns), then up again for ``cholesky_solve``.
- cho_factor_solve_kept (float64): the same call of ours; torch keeps the factor on the GPU
  between the two (as solve_pos), which scipy's API cannot.
- inv_pos (float64): ``la.inv(C, assume_a="pos")``; ``linalg.cholesky`` + ``cholesky_inverse``.
- inv (float64): ``la.inv(G)`` of a general G (C with its upper triangle redrawn: nonsymmetric,
  diagonally dominant); ``linalg.inv``.
- weighted_lstsq (float64): ``la.weighted_lstsq(X, y, w)``, X n × m observations × unknowns,
  n = 2m; the normal equations ``(Xᵀ·w) @ X``, ``linalg.cholesky``, ``cholesky_solve``.
- batched_weighted_lstsq (float32): ``la.batched_weighted_lstsq(X, w, y)``, X (B, 2n, n); bmm,
  ``linalg.cholesky``, ``cholesky_solve`` (as scripts/vendor_baseline.py --batched).
- batched_cholesky (float32): ``la.batched_cholesky(C)``, C (B, n, n); ``linalg.cholesky``.
- batched_solve (float32): ``la.batched_solve(C, b)``; ``linalg.cholesky`` + ``cholesky_solve``.

C is symmetric with entries uniform in (−1, 1) off the diagonal and m on it (as
bench/src/bin/solve_bench.rs and frontdoor.rs); X, w, y uniform in (0, 1) (the batched X in
(−1, 1) and w in (0.5, 1.5), as vendor_baseline.py's). Dense sizes m from
--sizes (default 1024,4096,8192), batched orders and counts from --batched (default
8:100000,16:100000,32:20000). Every result, ours and torch's, is checked after its timing
(untimed: a backward error through products with one vector, the batched ops on four problems
in float64); a failed check prints WRONG on stderr and leaves that side's time empty. The
checks run with numpy's BLAS on one thread (threadpoolctl, where installed): after a product on
all cores numpy's BLAS threads spin on every core for a while, and the next timed calls would
be timed against them (our host passes wait for cores; docs/results.md, "Process effects").

--order ours-first | torch-first | interleaved (default): all of ours' calls then torch's, the
reverse, or one of each in turn (each side's warm-up first). --orders all (or a list) runs
every order named; the rows of --order go to --out, every order's rows (with an ``order``
column) to --orders-out.

Also the first call of a fresh process at --first-call-m (default 1024; 0: none): op
``solve_pos_first_call``, ``la.solve`` in a new Python process after ``import symraster``
(the call only: GPU context, kernel compilation, first touch), beside torch's first
cholesky + cholesky_solve in another new process after ``import torch`` (its CUDA context
included).

--cli-binary PATH times the command line on .npy files written first (wall time of the whole
process, the median of the runs after a warm-up run): ``symraster spd-solve --c C.npy --b b.npy
-o x.npy`` (op solve_pos, float64) and ``symraster factor --c C32.npy -o L.npy`` (op cholesky,
float32), api ``cli``.

Output: CSV ``op,m,n,api,dtype,symraster_ms,torch_ms,ratio`` (ratio = symraster / torch; api
python, and rust / cli for merged rows; m the order, n: m for the square ops, 2m for
weighted_lstsq, B for the batched ones) to --out (default stdout), written as each row is done.
--rust FILE (bench/src/bin/frontdoor.rs's CSV), --cli FILE and --python FILE (earlier runs of
this script) are merged in; their rows without torch_ms get the torch time this run (or
--python's file) measured for the same op, m and dtype (binding.py sets the Python rows of one
order beside the Rust rows). torch is optional: without it (or without CUDA, or with
--no-torch) torch_ms is empty.

    python benchmarks/frontdoor.py --sizes 64,128 --batched 8:1000,16:1000 --runs 1
    python benchmarks/frontdoor.py --ops none --first-call-m 0 \\
        --cli-binary ../target/release/symraster --out cli.csv
    python benchmarks/frontdoor.py --ops none --first-call-m 0 \\
        --python py.csv --rust rust.csv --cli cli.csv --out frontdoor.csv
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # the checks then run on numpy's BLAS threads as they are
    threadpool_limits = None

DENSE = ["solve_pos", "cholesky", "cho_factor_solve", "cho_factor_solve_kept", "inv_pos",
         "inv", "weighted_lstsq"]
BATCHED = ["batched_weighted_lstsq", "batched_cholesky", "batched_solve"]
ORDERS = ["interleaved", "ours-first", "torch-first"]
COLUMNS = ["op", "m", "n", "api", "dtype", "symraster_ms", "torch_ms", "ratio"]
FIRST_CALL = "solve_pos_first_call"
OP_ORDER = DENSE[:1] + [FIRST_CALL] + DENSE[1:] + BATCHED
APIS = ["python", "rust", "cli"]

la = None  # symraster, imported in main (the first-call children import their own)
torch = None


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- data and checks --------------------------------------------------------------------------


def spd(m, rng):
    """C symmetric, uniform in (−1, 1) off the diagonal and m on it (SPD, κ near 1)."""
    c = rng.uniform(-1, 1, (m, m))
    c += c.T
    c *= 0.5
    np.fill_diagonal(c, m)
    return c


def spd_stack(n, count, rng):
    c = rng.uniform(-1, 1, (count, n, n)).astype(np.float32)
    c += c.transpose(0, 2, 1)
    c *= np.float32(0.5)
    i = np.arange(n)
    c[:, i, i] = n
    return c


def norm_inf(v):
    return float(np.max(np.abs(v))) if v.size else 0.0


def matrix_norm_inf(a):
    return float(np.max(np.sum(np.abs(a), axis=-1)))


def backward_error(c, x, b):
    """‖C·x − b‖∞ / (‖C‖∞‖x‖∞ + ‖b‖∞), in float64."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    r = c @ x - b
    return norm_inf(r) / (matrix_norm_inf(c) * norm_inf(x) + norm_inf(b))


def factor_error(l, c, v):
    """‖L·(Lᵀ·v) − C·v‖∞ / (‖C‖∞‖v‖∞), L as returned (its upper triangle too)."""
    l = np.asarray(l)
    r = l @ (l.T @ v) - c @ v
    return norm_inf(r) / (matrix_norm_inf(c) * norm_inf(v))


def inverse_error(x, c, v):
    """‖X·(C·v) − v‖∞ / ‖v‖∞ (κ(C) is near 1 here)."""
    return norm_inf(np.asarray(x) @ (c @ v) - v) / norm_inf(v)


def lstsq_error(x, w, y, beta):
    """‖Xᵀ·diag(w)·(y − X·β)‖∞ / (‖Xᵀ‖∞‖w‖∞(‖X‖∞‖β‖∞ + ‖y‖∞)): the normal equations' backward
    error, X observations × unknowns (0 at the exact weighted least-squares solution)."""
    beta = np.asarray(beta, dtype=np.float64).reshape(-1)
    r = y - x @ beta
    g = x.T @ (w * r)
    return norm_inf(g) / (matrix_norm_inf(x.T) * norm_inf(w)
                          * (matrix_norm_inf(x) * norm_inf(beta) + norm_inf(y)))


def sample(count):
    return sorted({0, count // 3, count // 2, count - 1})


def batched_error(per_problem, count, info=None):
    """The largest error over the sampled problems; any failed problem (INFO ≠ 0) is 1."""
    e = 0.0
    if info is not None and np.any(np.asarray(info) != 0):
        e = 1.0
    for p in sample(count):
        e = max(e, per_problem(p))
    return e


# --- the cases --------------------------------------------------------------------------------


class Case:
    """One op at one size: ours() and torch_fn() (None without torch) return the result; check
    (result) its error, judged against tol."""

    def __init__(self, op, m, n, dtype, ours, torch_fn, check, tol):
        self.op, self.m, self.n, self.dtype = op, m, n, dtype
        self.ours, self.torch_fn, self.check, self.tol = ours, torch_fn, check, tol


def cuda(a):
    return torch.from_numpy(a).cuda()


def done(t):
    out = t.cpu().numpy()
    torch.cuda.synchronize()
    return out


def t_cho_factor_solve(c, b):
    low = torch.linalg.cholesky(cuda(c)).cpu().numpy()
    return done(torch.cholesky_solve(cuda(b)[:, None], cuda(low))[:, 0])


def t_cho_solve(c, b):
    low = torch.linalg.cholesky(cuda(c))
    return done(torch.cholesky_solve(cuda(b)[:, None], low)[:, 0])


def t_cholesky(c):
    return done(torch.linalg.cholesky(cuda(c)))


def t_inv(c):
    return done(torch.cholesky_inverse(torch.linalg.cholesky(cuda(c))))


def t_inv_general(g):
    return done(torch.linalg.inv(cuda(g)))


def t_lstsq(x, w, y):
    xg, wg, yg = cuda(x), cuda(w), cuda(y)
    xw = xg.T * wg
    low = torch.linalg.cholesky(xw @ xg)
    return done(torch.cholesky_solve((xw @ yg)[:, None], low)[:, 0])


def t_batched_lstsq(x, w, y):
    xg, wg, yg = cuda(x), cuda(w), cuda(y)
    aw = xg.transpose(1, 2) * wg[:, None, :]
    low = torch.linalg.cholesky(torch.bmm(aw, xg))
    return done(torch.cholesky_solve(torch.bmm(aw, yg[:, :, None]), low)[:, :, 0])


def t_batched_solve(c, b):
    low = torch.linalg.cholesky(cuda(c))
    return done(torch.cholesky_solve(cuda(b)[:, :, None], low)[:, :, 0])


def dense_cases(m, ops, rng, with_torch):
    """The dense cases at order m, their data made as each is reached (one at a time)."""
    want = set(ops)
    c = spd(m, rng)
    b = rng.uniform(0, 1, m)
    v = rng.uniform(-1, 1, m)
    tv = with_torch
    if "solve_pos" in want:
        yield Case("solve_pos", m, m, "float64",
                   lambda: la.solve(c, b, assume_a="pos"),
                   tv and (lambda: t_cho_solve(c, b)),
                   lambda x: backward_error(c, x, b), 1e-11)
        c32, b32 = c.astype(np.float32), b.astype(np.float32)
        yield Case("solve_pos", m, m, "float32",
                   lambda: la.solve(c32, b32, assume_a="pos"),
                   tv and (lambda: t_cho_solve(c32, b32)),
                   lambda x: backward_error(c32.astype(np.float64), x.astype(np.float64),
                                            b32.astype(np.float64)), 2e-8 * m)
        del c32, b32
    if "cholesky" in want:
        yield Case("cholesky", m, m, "float64",
                   lambda: la.cholesky(c, lower=True),
                   tv and (lambda: t_cholesky(c)),
                   lambda l: factor_error(l, c, v), 1e-12)
        c32 = c.astype(np.float32)
        yield Case("cholesky", m, m, "float32",
                   lambda: la.cholesky(c32, lower=True),
                   tv and (lambda: t_cholesky(c32)),
                   lambda l: factor_error(l, c32.astype(np.float64), v), 2e-8 * m)
        del c32
    if "cho_factor_solve" in want:
        yield Case("cho_factor_solve", m, m, "float64",
                   lambda: la.cho_solve(la.cho_factor(c), b),
                   tv and (lambda: t_cho_factor_solve(c, b)),
                   lambda x: backward_error(c, x, b), 1e-11)
    if "cho_factor_solve_kept" in want:
        yield Case("cho_factor_solve_kept", m, m, "float64",
                   lambda: la.cho_solve(la.cho_factor(c), b),
                   tv and (lambda: t_cho_solve(c, b)),
                   lambda x: backward_error(c, x, b), 1e-11)
    if "inv_pos" in want:
        yield Case("inv_pos", m, m, "float64",
                   lambda: la.inv(c, assume_a="pos"),
                   tv and (lambda: t_inv(c)),
                   lambda x: inverse_error(x, c, v), 1e-11)
    if "inv" in want:
        g = c.copy()
        upper = np.triu_indices(m, 1)
        g[upper] = rng.uniform(-1, 1, len(upper[0]))
        yield Case("inv", m, m, "float64",
                   lambda: la.inv(g),
                   tv and (lambda: t_inv_general(g)),
                   lambda x: inverse_error(x, g, v), 1e-11)
        del g
    if "weighted_lstsq" in want:
        del c
        n = 2 * m
        x = rng.uniform(np.finfo(np.float64).tiny, 1, (n, m))
        w = rng.uniform(0, 1, n)
        y = rng.uniform(0, 1, n)
        yield Case("weighted_lstsq", m, n, "float64",
                   lambda: la.weighted_lstsq(x, y, w).x,
                   tv and (lambda: t_lstsq(x, w, y)),
                   lambda beta: lstsq_error(x, w, y, beta), 1e-12)


def batched_cases(n, count, ops, rng, with_torch):
    want = set(ops)
    tv = with_torch
    f64 = np.float64
    if "batched_weighted_lstsq" in want:
        k = 2 * n
        x = rng.uniform(-1, 1, (count, k, n)).astype(np.float32)
        w = rng.uniform(0.5, 1.5, (count, k)).astype(np.float32)
        y = rng.uniform(0, 1, (count, k)).astype(np.float32)

        def check(result):
            beta, info = result
            return batched_error(
                lambda p: lstsq_error(x[p].astype(f64), w[p].astype(f64), y[p].astype(f64),
                                      beta[p]), count, info)

        yield Case("batched_weighted_lstsq", n, count, "float32",
                   lambda: la.batched_weighted_lstsq(x, w, y),
                   tv and (lambda: (t_batched_lstsq(x, w, y), None)),
                   check, 1e-5)
        del x, w, y
    if "batched_cholesky" in want or "batched_solve" in want:
        c = spd_stack(n, count, rng)
        b = rng.uniform(0, 1, (count, n)).astype(np.float32)
        v = rng.uniform(-1, 1, n)
        if "batched_cholesky" in want:
            def check(result):
                l, info = result
                return batched_error(lambda p: factor_error(l[p], c[p].astype(f64), v), count,
                                     info)

            yield Case("batched_cholesky", n, count, "float32",
                       lambda: la.batched_cholesky(c),
                       tv and (lambda: (t_cholesky(c), None)),
                       check, 1e-5)
        if "batched_solve" in want:
            def check(result):
                x, info = result
                return batched_error(
                    lambda p: backward_error(c[p].astype(f64), x[p], b[p].astype(f64)), count,
                    info)

            yield Case("batched_solve", n, count, "float32",
                       lambda: la.batched_solve(c, b),
                       tv and (lambda: (t_batched_solve(c, b), None)),
                       check, 1e-5)


# --- timing -----------------------------------------------------------------------------------


def quiet_check(check, *args):
    """The benchmark's own check, numpy's BLAS held to one thread meanwhile (module docstring)."""
    if threadpool_limits is None:
        return check(*args)
    with threadpool_limits(limits=1, user_api="blas"):
        return check(*args)


class Side:
    """One side's timings of a case: first call, timed calls, last result, error."""

    def __init__(self, name, fn, runs, max_seconds):
        self.name, self.fn, self.runs, self.max_seconds = name, fn, runs, max_seconds
        self.first_ms, self.times, self.result, self.failed = None, [], None, None

    def call(self, first=False):
        if self.failed or (not first and not self.more()):
            return
        try:
            start = time.perf_counter()
            self.result = self.fn()
            ms = (time.perf_counter() - start) * 1e3
        except Exception as e:  # noqa: BLE001 — any failure is reported and the run goes on
            self.failed = f"{type(e).__name__}: {e}"
            self.result = None
            return
        if first:
            self.first_ms = ms
        else:
            self.times.append(ms)

    def more(self):
        return len(self.times) < max(self.runs, 1) and (
            not self.times or sum(self.times) < 1e3 * self.max_seconds)

    def median(self):
        return statistics.median(self.times) if self.times and not self.failed else None


def measure(case, order, runs, max_seconds):
    sides = [Side("symraster", case.ours, runs, max_seconds)]
    if case.torch_fn:
        sides.append(Side("torch", case.torch_fn, runs, max_seconds))
    if order == "torch-first":
        sides.reverse()
    if order == "interleaved":
        for s in sides:
            s.call(first=True)
        for _ in range(max(runs, 1)):
            for s in sides:
                s.call()
    else:
        for s in sides:
            s.call(first=True)
            while s.more() and not s.failed:
                s.call()
    out = {}
    for s in sides:
        label = f"{case.op},{case.m},{case.dtype} {s.name} ({order})"
        if s.failed:
            log(f"ERROR {label}: {s.failed}")
        else:
            error = quiet_check(case.check, s.result)
            if not error <= case.tol:
                log(f"WRONG {label}: error {error:.3e} above {case.tol:.1e}")
                s.failed = "wrong"
            else:
                log(f"# {label}: {s.median():.3f} ms (first {s.first_ms:.3f} ms, "
                    f"{len(s.times)} runs), error {error:.2e}")
        s.result = None
        out[s.name] = s.median()
    return out.get("symraster"), out.get("torch")


def fmt(ms):
    return "" if ms is None else f"{ms:.3f}"


def row(op, m, n, api, dtype, ours, theirs):
    ratio = f"{ours / theirs:.3f}" if ours is not None and theirs else ""
    return {"op": op, "m": str(m), "n": str(n), "api": api, "dtype": dtype,
            "symraster_ms": fmt(ours), "torch_ms": fmt(theirs), "ratio": ratio}


# --- the first call of a fresh process --------------------------------------------------------


def first_call_child(side, m):
    """In a fresh process (--first-call-child): the first call's ms, as JSON on stdout."""
    start = time.perf_counter()
    rng = np.random.default_rng(7)
    c = spd(m, rng)
    b = rng.uniform(0, 1, m)
    if side == "symraster":
        import symraster
        call = lambda: symraster.solve(c, b, assume_a="pos")  # noqa: E731
    else:
        global torch
        try:
            import torch as t
        except ImportError:
            print(json.dumps({"skipped": "no torch"}))
            return
        torch = t
        if not torch.cuda.is_available():
            print(json.dumps({"skipped": "torch has no CUDA device"}))
            return
        call = lambda: t_cho_solve(c, b)  # noqa: E731
    imported = time.perf_counter()
    x = call()
    first = time.perf_counter()
    print(json.dumps({"import_ms": (imported - start) * 1e3, "first_ms": (first - imported) * 1e3,
                      "error": backward_error(c, x, b)}))


def first_call(side, m, timeout):
    try:
        done_ = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--first-call-child", side, str(m)],
            capture_output=True, text=True, timeout=timeout)
        result = json.loads(done_.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, IndexError, ValueError) as e:
        log(f"ERROR {FIRST_CALL} {side}: {e}")
        return None
    if "skipped" in result:
        log(f"# {FIRST_CALL} {side}: {result['skipped']}")
        return None
    if "first_ms" not in result or not result["error"] <= 1e-11:
        log(f"ERROR {FIRST_CALL} {side}: {result} {done_.stderr[-500:]}")
        return None
    log(f"# {FIRST_CALL},{m} {side}: {result['first_ms']:.1f} ms (setup and import "
        f"{result['import_ms']:.1f} ms before it, not counted), error {result['error']:.2e}")
    return result["first_ms"]


# --- the command line -------------------------------------------------------------------------


def cli_rows(binary, sizes, runs_at, max_seconds):
    """The CLI's whole-process wall times on files written first: solve_pos (spd-solve,
    float64) and cholesky (factor, float32)."""
    rows = []
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory(prefix="frontdoor-cli-") as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        for m in sizes:
            c = spd(m, rng)
            b = rng.uniform(0, 1, m)
            v = rng.uniform(-1, 1, m)
            np.save(path("C.npy"), c)
            np.save(path("b.npy"), b)
            c32 = c.astype(np.float32)
            np.save(path("C32.npy"), c32)
            del c32
            cases = [
                ("solve_pos", "float64",
                 [binary, "spd-solve", "--c", path("C.npy"), "--b", path("b.npy"), "-o",
                  path("x.npy")],
                 lambda: backward_error(c, np.load(path("x.npy")), b), 1e-11),
                ("cholesky", "float32",
                 [binary, "factor", "--c", path("C32.npy"), "-o", path("L.npy")],
                 lambda: factor_error(np.load(path("L.npy")),
                                      np.load(path("C32.npy")).astype(np.float64), v),
                 2e-8 * m),
            ]
            for op, dtype, argv, check, tol in cases:
                side = Side("cli", lambda: run_cli(argv), runs_at(m), max_seconds)
                side.call(first=True)
                while side.more() and not side.failed:
                    side.call()
                label = f"{op},{m},{dtype} cli"
                if side.failed:
                    log(f"ERROR {label}: {side.failed}")
                    continue
                error = check()
                if not error <= tol:
                    log(f"WRONG {label}: error {error:.3e} above {tol:.1e}")
                    continue
                log(f"# {label}: {side.median():.3f} ms (first {side.first_ms:.3f} ms), "
                    f"error {error:.2e}")
                rows.append(row(op, m, m, "cli", dtype, side.median(), None))
    return rows


def run_cli(argv):
    done_ = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done_.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])}: exit {done_.returncode}: "
                           f"{done_.stderr.strip()[-500:]}")


# --- output -----------------------------------------------------------------------------------


class Writer:
    """CSV rows to a file (stdout without one), each flushed as it is written."""

    def __init__(self, path, columns, default=sys.stdout):
        self.file = open(path, "w", newline="") if path else default
        self.csv = csv.DictWriter(self.file, fieldnames=columns, lineterminator="\n")
        self.csv.writeheader()
        self.file.flush()

    def write(self, r):
        self.csv.writerow(r)
        self.file.flush()

    def close(self):
        if self.file not in (sys.stdout, sys.stderr):
            self.file.close()


def read_rows(path, api):
    """Rows of a CSV with at least op,m,n,dtype,symraster_ms (api defaulting to `api`)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if not r.get("op") or not r.get("symraster_ms"):
                continue
            rows.append(row(r["op"], r["m"], r["n"], r.get("api") or api, r["dtype"],
                            float(r["symraster_ms"]),
                            float(r["torch_ms"]) if r.get("torch_ms") else None))
    return rows


def merged(rows):
    """Rows without torch_ms filled from a python row of the same op, m and dtype; sorted by
    op, dtype, m and api."""
    torch_ms = {(r["op"], r["m"], r["dtype"]): float(r["torch_ms"])
                for r in rows if r["torch_ms"] and r["api"] == "python"}
    out = []
    for r in rows:
        key = (r["op"], r["m"], r["dtype"])
        theirs = float(r["torch_ms"]) if r["torch_ms"] else torch_ms.get(key)
        ours = float(r["symraster_ms"]) if r["symraster_ms"] else None
        out.append(row(r["op"], r["m"], r["n"], r["api"], r["dtype"], ours, theirs))

    def key(r):
        op = OP_ORDER.index(r["op"]) if r["op"] in OP_ORDER else len(OP_ORDER)
        api = APIS.index(r["api"]) if r["api"] in APIS else len(APIS)
        dtype = 0 if r["dtype"] == "float64" else 1
        return (op, r["op"], dtype, int(r["m"]), int(r["n"]), api)

    return sorted(out, key=key)


# --- main -------------------------------------------------------------------------------------


def int_list(text):
    return [int(s) for s in text.split(",") if s.strip()]


def pairs(text):
    if text == "none":
        return []
    return [tuple(int(v) for v in item.split(":")) for item in text.split(",") if item]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--first-call-child":
        first_call_child(sys.argv[2], int(sys.argv[3]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int_list, default=[1024, 4096, 8192],
                   help="dense orders m (default 1024,4096,8192)")
    p.add_argument("--batched", type=pairs, default=[(8, 100000), (16, 100000), (32, 20000)],
                   help="batched n:B pairs, or none (default 8:100000,16:100000,32:20000)")
    p.add_argument("--ops", default="all",
                   help=f"comma list of {', '.join(DENSE + BATCHED)}; all (default) or none")
    p.add_argument("--runs", type=int, default=5, help="timed calls per case (default 5)")
    p.add_argument("--large-runs", type=int, default=3,
                   help="timed calls per case at m ≥ 8192 (default 3)")
    p.add_argument("--max-seconds", type=float, default=30,
                   help="no further call of a side once its timed calls add up to this")
    p.add_argument("--order", choices=ORDERS, default="interleaved")
    p.add_argument("--orders", default=None,
                   help="all, or a comma list of orders to run (default: --order alone)")
    p.add_argument("--orders-out", default=None,
                   help="every order's rows with an order column (default: --out's name "
                        "with _orders, or stderr)")
    p.add_argument("--first-call-m", type=int, default=1024,
                   help=f"m of {FIRST_CALL} (0: none)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--cli-binary", default=None, help="the symraster program, to time the CLI")
    p.add_argument("--cli-sizes", type=int_list, default=None,
                   help="the CLI's orders (default --sizes)")
    p.add_argument("--rust", default=None, help="frontdoor.rs's CSV, merged in")
    p.add_argument("--cli", default=None, help="a CLI timing CSV, merged in")
    p.add_argument("--python", default=None, help="an earlier run's python rows, merged in")
    p.add_argument("--out", default=None, help="the CSV (default stdout)")
    args = p.parse_args()

    ops = (DENSE + BATCHED if args.ops == "all" else [] if args.ops == "none"
           else args.ops.split(","))
    unknown = [o for o in ops if o not in DENSE + BATCHED]
    if unknown:
        p.error(f"unknown ops {unknown} (one of {', '.join(DENSE + BATCHED)})")
    orders = ([args.order] if args.orders is None
              else ORDERS if args.orders == "all" else args.orders.split(","))
    if any(o not in ORDERS for o in orders):
        p.error(f"--orders: one of {', '.join(ORDERS)} or all")
    if args.order not in orders:
        orders.insert(0, args.order)
    runs_at = lambda m: args.large_runs if m >= 8192 else args.runs  # noqa: E731

    if args.first_call_m:
        # Fresh processes of their own, before this one has opened the GPU.
        m = args.first_call_m
        first_ours = first_call("symraster", m, 300)
        first_torch = None if args.no_torch else first_call("torch", m, 300)

    global la, torch
    with_torch = False
    if ops:
        import symraster
        la = symraster
        log(la.info())
        if not args.no_torch:
            try:
                import torch as t
                if t.cuda.is_available():
                    torch, with_torch = t, True
                    torch.backends.cuda.matmul.allow_tf32 = False
                    log(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
                else:
                    log("# torch has no CUDA device: torch_ms left empty")
            except ImportError:
                log("# no torch: torch_ms left empty")

    merging = args.rust or args.cli or args.python
    writer = Writer(args.out, COLUMNS)
    rows = []

    def emit(r):
        rows.append(r)
        if not merging:
            writer.write(r)

    extra = None
    if len(orders) > 1:
        target = args.orders_out
        if target is None and args.out:
            stem, ext = os.path.splitext(args.out)
            target = f"{stem}_orders{ext or '.csv'}"
        extra = Writer(target, COLUMNS[:5] + ["order"] + COLUMNS[5:], default=sys.stderr)

    if args.first_call_m and (first_ours is not None or first_torch is not None):
        m = args.first_call_m
        emit(row(FIRST_CALL, m, m, "python", "float64", first_ours, first_torch))

    def run_cases(cases):
        for case in cases:
            runs = runs_at(case.m) if case.op in DENSE else args.runs
            for order in orders:
                ours, theirs = measure(case, order, runs, args.max_seconds)
                r = row(case.op, case.m, case.n, "python", case.dtype, ours, theirs)
                if extra:
                    extra.write({**r, "order": order})
                if order == args.order:
                    emit(r)
            if with_torch:
                torch.cuda.empty_cache()

    if ops:
        rng = np.random.default_rng(1)
        for m in args.sizes:
            run_cases(dense_cases(m, ops, rng, with_torch))
        for n, count in args.batched:
            run_cases(batched_cases(n, count, ops, rng, with_torch))
    if args.cli_binary:
        for r in cli_rows(args.cli_binary, args.cli_sizes or args.sizes, runs_at,
                          args.max_seconds):
            emit(r)
    if merging:
        for path, api in ((args.python, "python"), (args.rust, "rust"), (args.cli, "cli")):
            if path:
                try:
                    rows.extend(read_rows(path, api))
                except (OSError, KeyError, ValueError) as e:
                    log(f"ERROR reading {path}: {e}")
        for r in merged(rows):
            writer.write(r)
    writer.close()
    if extra:
        extra.close()


if __name__ == "__main__":
    main()
