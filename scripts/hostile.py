#!/usr/bin/env python3
"""The hostile and careless user's cases of issue 23, on fresh random data, against numpy/scipy.

Each case runs the `symraster` program and passes when the program either gives a correct
result (checked against numpy/scipy in f64) or refuses with exit status 1 and exactly one line
on stderr, as the case allows; a wrong result with exit status 0, a panic, a hang or a
multi-line error fails it. Prints one line per case and a summary line; exits 1 if any failed.

    python3 scripts/hostile.py [--bin target/release/symraster] [--seed N] [--quick]

Needs numpy and scipy. Not part of `cargo test` (it takes minutes on llvmpipe and needs
Python); run it by hand after changes to error handling.
"""

import argparse
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np
import scipy.linalg as sla

RESULTS = []


def run(binary, args, env=None, timeout=600, stdout=subprocess.PIPE):
    e = dict(os.environ)
    e.pop("SYMRASTER_MAX_TEXTURE_SIZE", None)
    e.update(env or {})
    try:
        p = subprocess.run([binary] + [str(a) for a in args], stdout=stdout,
                           stderr=subprocess.PIPE, env=e, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return p


def record(name, ok, why=""):
    RESULTS.append((name, ok))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{': ' + why if why else ''}", flush=True)


def one_line_error(p):
    """Whether p failed with status 1 and one 'error: ' line on stderr; the line."""
    if p is None:
        return False, "hung"
    err = p.stderr.decode(errors="replace")
    lines = [l for l in err.splitlines() if l.strip()]
    if "panicked" in err:
        return False, "panic: " + err.strip()[:200]
    if p.returncode != 1 or len(lines) != 1 or not lines[0].startswith("error: "):
        return False, f"status {p.returncode}, stderr {err[:300]!r}"
    return True, lines[0]


def check(name, p, out, expected, tol, allow_error=True, reader=np.load, needles=()):
    """A correct result within tol (relative, max-norm) or, where allowed, a one-line error."""
    if p is None:
        return record(name, False, "hung")
    err = p.stderr.decode(errors="replace")
    if "panicked" in err:
        return record(name, False, "panic: " + err.strip()[:200])
    if p.returncode == 0:
        if not os.path.exists(out):
            return record(name, False, "exit 0 without an output")
        got = reader(out).astype(np.float64)
        if got.shape != expected.shape:
            got = got.reshape(expected.shape)
        scale = max(np.max(np.abs(expected)), np.finfo(float).tiny)
        e = np.max(np.abs(got - expected)) / scale
        return record(name, bool(np.isfinite(e) and e <= tol), f"relative error {e:.2e} (tol {tol:.0e})")
    ok, line = one_line_error(p)
    if not allow_error:
        return record(name, False, "refused a solvable problem: " + line)
    ok = ok and all(n in line for n in needles)
    record(name, ok, line)


def lower(c):
    return np.tril(c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/symraster")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="smaller wide-A cases")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    b = os.path.abspath(args.bin)
    tmp = tempfile.mkdtemp(prefix="hostile-")
    f = lambda name: os.path.join(tmp, name)
    save = lambda name, x: (np.save(f(name), x), f(name))[1]

    # Wide A: more than 262,144 columns, every method and format.
    m, n = 7, (300_000 if args.quick else 1_100_000)
    a = rng.standard_normal((m, n))
    d = rng.uniform(0.5, 2.0, n)
    c_ref = lower((a * d) @ a.T)
    save("a_wide.npy", a)
    save("d_wide.npy", d)
    for method in ["faithful", "blocked", "tiled"]:
        for fmt in ["full", "packed"]:
            if method == "faithful" and n > 400_000:
                continue  # one pass per column: minutes
            out = f(f"c_{method}_{fmt}.npy")
            p = run(b, ["assemble", "--a", f("a_wide.npy"), "--d", f("d_wide.npy"),
                        "--method", method, "--format", fmt, "-o", out])
            check(f"wide A (n = {n}) assemble {method} {fmt}", p, out, c_ref,
                  1e-6 * np.sqrt(n) + 1e-5, allow_error=False)

    # Least squares with many observations: A is m x n, min ||D(b - A^T x)||.
    m, n = 20, 300_000
    a = rng.standard_normal((m, n))
    d = rng.uniform(0.5, 2.0, n)
    bb = rng.standard_normal(n)
    w = np.sqrt(d)
    x_ref = np.linalg.lstsq((a * w).T, bb * w, rcond=None)[0]
    save("a_ls.npy", a)
    save("d_ls.npy", d)
    save("b_ls.npy", bb)
    out = f("x_ls.npy")
    p = run(b, ["solve", "--a", f("a_ls.npy"), "--d", f("d_ls.npy"), "--b", f("b_ls.npy"), "-o", out])
    check(f"least squares n = {n}", p, out, x_ref, 1e-9, allow_error=False)

    # b outside f32's range: x scales with b.
    m, n = 30, 80
    a = rng.standard_normal((m, n))
    d = rng.uniform(0.5, 2.0, n)
    bb = rng.standard_normal(n)
    w = np.sqrt(d)
    x1 = np.linalg.lstsq((a * w).T, bb * w, rcond=None)[0]
    save("a_s.npy", a)
    save("d_s.npy", d)
    for s in [1e39, 1e-60, 1e-310, 1e300]:
        save("b_s.npy", bb * s)
        out = f("x_s.npy")
        p = run(b, ["solve", "--a", f("a_s.npy"), "--d", f("d_s.npy"), "--b", f("b_s.npy"), "-o", out])
        check(f"solve with b of {s:g}", p, out, x1 * s, 1e-9, allow_error=False)

    # NaN in b.
    bn = bb.copy()
    bn[3] = np.nan
    save("b_nan.npy", bn)
    p = run(b, ["solve", "--a", f("a_s.npy"), "--d", f("d_s.npy"), "--b", f("b_nan.npy"), "-o", f("x_nan.npy")])
    ok, line = one_line_error(p)
    record("NaN in b", ok and "NaN" in line, line)

    # Singular C: d with fewer than m non-zeros; and m > n.
    dz = np.zeros(n)
    dz[: m - 5] = d[: m - 5]  # m - 5 non-zero weights: C has rank m - 5
    save("d_sing.npy", dz)
    for method in ["faithful", "blocked", "tiled"]:
        p = run(b, ["solve", "--a", f("a_s.npy"), "--d", f("d_sing.npy"), "--b", f("b_s.npy"),
                    "--method", method, "-o", f("x_sing.npy")])
        ok, line = one_line_error(p)
        record(f"singular C ({method})", ok and "singular" in line, line)
    a_wide_m = rng.standard_normal((12, 10))
    save("a_mn.npy", a_wide_m)
    save("d_mn.npy", np.ones(10))
    save("b_mn.npy", rng.standard_normal(10))
    p = run(b, ["solve", "--a", f("a_mn.npy"), "--d", f("d_mn.npy"), "--b", f("b_mn.npy"), "-o", f("x_mn.npy")])
    ok, line = one_line_error(p)
    record("least squares with m > n", ok and "n < m" in line.replace("n = 10 < m = 12", "n < m"), line)

    # Ill-conditioned SPD (condition 1e9): solvable in f64.
    m = 60
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    sv = np.logspace(0, -4.5, m)  # singular values of A: cond(C) = 1e9
    a = q @ np.diag(sv) @ np.linalg.qr(rng.standard_normal((m, m)))[0]
    d = np.ones(m)
    bb = rng.standard_normal(m)
    x_ref = np.linalg.solve(a.T, bb)  # square A: the least-squares solution solves A^T x = b
    save("a_ill.npy", a)
    save("d_ill.npy", d)
    save("b_ill.npy", bb)
    out = f("x_ill.npy")
    p = run(b, ["solve", "--a", f("a_ill.npy"), "--d", f("d_ill.npy"), "--b", f("b_ill.npy"), "-o", out])
    check("ill-conditioned SPD (cond 1e9)", p, out, x_ref, 1e-6, allow_error=False)

    # Tiny SPD.
    for s in [1e-39, 1e-50, 1e30]:
        cm = np.eye(9) * s + np.diag(np.full(8, 0.1 * s), -1)
        cm = cm + np.tril(cm, -1).T
        save("c_tiny.npy", cm)
        for method in ["faithful", "blocked", "tiled"]:
            out = f("l_tiny.npy")
            p = run(b, ["factor", "--c", f("c_tiny.npy"), "--method", method, "-o", out])
            check(f"factor of {s:g}-scaled SPD ({method})", p, out, np.linalg.cholesky(cm), 1e-5,
                  needles=("range",))

    # Inversion: Hilbert 8 (SPD, cond 1.5e10) and an indefinite matrix under kind spd.
    h = sla.hilbert(8)
    save("hilbert.npy", h)
    for method in ["gje", "cholesky", "lu"]:
        out = f("hinv.npy")
        p = run(b, ["invert", "--a", f("hilbert.npy"), "--kind", "spd", "--method", method, "-o", out])
        check(f"invert Hilbert(8) spd {method}", p, out, np.linalg.inv(h), 1e-4)
    ind = rng.standard_normal((7, 7))
    ind = ind + ind.T
    ind[4, 4] = -50.0
    ind[np.arange(4), np.arange(4)] = 20.0
    save("indef.npy", ind)
    for method in ["gje", "cholesky", "lu"]:
        p = run(b, ["invert", "--a", f("indef.npy"), "--kind", "spd", "--method", method, "-o", f("iinv.npy")])
        ok, line = one_line_error(p)
        record(f"invert indefinite as spd ({method})", ok and "column" in line, line)

    # Sign and Lyapunov at extreme scales.
    s_m = 24
    aa = rng.standard_normal((s_m, s_m)) - 6.0 * np.eye(s_m)
    sign_ref = np.real(sla.signm(aa))
    qq = rng.standard_normal((s_m, s_m))
    qq = qq @ qq.T
    x_ref = sla.solve_continuous_lyapunov(aa, qq)
    for s in [1.0, 1e19, 1e-19]:
        save("a_sign.npy", aa * s)
        out = f("s.npy")
        p = run(b, ["sign", "--a", f("a_sign.npy"), "-o", out])
        check(f"sign of A scaled by {s:g}", p, out, sign_ref, 1e-8, allow_error=False)
        save("q.npy", qq)
        out = f("x_lyap.npy")
        p = run(b, ["lyap", "--a", f("a_sign.npy"), "--q", f("q.npy"), "-o", out])
        check(f"Lyapunov with A scaled by {s:g}", p, out, x_ref / s, 1e-8, allow_error=False)

    # Matrix Market coordinate (symmetric, duplicates summed).
    spd = rng.standard_normal((6, 6))
    spd = spd @ spd.T + 6 * np.eye(6)
    # 21 entries in the lower triangle: 19 listed once, one as two halves (summed), and one
    # (off the diagonal) left out, so zero in the file's matrix.
    lines = ["%%MatrixMarket matrix coordinate real symmetric", "6 6 21"]
    entries = [(i, j, spd[i, j]) for i in range(6) for j in range(i + 1)]
    entries.sort(key=lambda e: e[0] == e[1])  # off-diagonal entries first
    for i, j, v in entries[1:20]:
        lines.append(f"{i + 1} {j + 1} {float(v)!r}")
    i, j, v = entries[20]
    lines += [f"{i + 1} {j + 1} {float(v) / 2!r}"] * 2
    spd_file = spd.copy()
    i, j, _ = entries[0]
    spd_file[i, j] = spd_file[j, i] = 0.0
    with open(f("c.mtx"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        l_ref = np.linalg.cholesky(spd_file)
        out = f("l_mtx.npy")
        p = run(b, ["factor", "--c", f("c.mtx"), "-o", out])
        check("Matrix Market coordinate symmetric", p, out, l_ref, 1e-5, allow_error=False)
    except np.linalg.LinAlgError:
        pass

    # Tuning variables.
    for name, value in [("SYMRASTER_TILED_OUTER", "18446744073709551615"),
                        ("SYMRASTER_TILED_LD_PAD", "18446744073709551615"),
                        ("SYMRASTER_TILED_CONFIG", "8,4,1024,4,4,2,32")]:
        p = run(b, ["factor", "--c", f("c_tiny.npy"), "--method", "tiled", "-o", f("l_t.npy")],
                env={name: value}, timeout=120)
        ok, line = one_line_error(p)
        record(f"{name}={value}", ok and name in line, line)

    # stdout full or closed.
    save("c_ok.npy", spd)
    with open("/dev/full", "w") as full:
        p = run(b, ["factor", "--c", f("c_ok.npy"), "-o", f("l_full.npy")], stdout=full)
    err = p.stderr.decode(errors="replace")
    record("stdout is /dev/full", "panicked" not in err and (p.returncode == 0 or one_line_error(p)[0]), err[:200])
    pr = subprocess.Popen(f"'{b}' factor --c '{f('c_ok.npy')}' -o '{f('l_pipe.npy')}' | true",
                          shell=True, stderr=subprocess.PIPE)
    _, err = pr.communicate(timeout=300)
    record("stdout closed", b"panicked" not in err, err.decode(errors="replace")[:200])

    # Long output names and modes.
    long_name = os.path.join(tmp, "x" * 232 + ".npy")
    p = run(b, ["factor", "--c", f("c_ok.npy"), "-o", long_name])
    record("236-character output name", p.returncode == 0 and os.path.exists(long_name),
           p.stderr.decode(errors="replace")[:200])
    out = f("l_mode.npy")
    open(out, "w").close()
    os.chmod(out, 0o600)
    p = run(b, ["factor", "--c", f("c_ok.npy"), "-o", out])
    mode = stat.S_IMODE(os.stat(out).st_mode)
    record("replaced output keeps mode 0600", p.returncode == 0 and mode == 0o600, oct(mode))

    # Messages.
    big = rng.standard_normal((3, 4))
    big[1, 2] = 1e39
    save("a_big.npy", big)
    save("d4.npy", np.ones(4))
    p = run(b, ["assemble", "--a", f("a_big.npy"), "--d", f("d4.npy"), "-o", f("c_big.npy")])
    ok, line = one_line_error(p)
    record("1e39 in f64 input is called out of range", ok and "inf" not in line and "1e39" in line.replace("1e+39", "1e39").replace("1.000e39", "1e39"), line)
    np.save(f("a_bool.npy"), np.ones((3, 4), dtype=bool))
    p = run(b, ["assemble", "--a", f("a_bool.npy"), "--d", f("d4.npy"), "-o", f("c_bool.npy")])
    ok, line = one_line_error(p)
    record("boolean dtype named", ok and "boolean" in line and "integer" not in line, line)

    failed = [n for n, ok in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
