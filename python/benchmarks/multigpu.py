"""Pixels per second of the per-pixel weighted harmonic regression on W Dask worker processes,
one GPU context each (issue 45), beside torch's batched solve in 1 and W processes.

The problem is python/benchmarks/pixels.py's (the example's model: P pixels x T acquisitions, 6
coefficients, a third of the acquisitions clouded as zero weights), cut into chunks of --chunk
pixels. Each method goes from numpy arrays on the host to numpy coefficients on the client:

  symraster_process  ``la.weighted_lstsq`` chunk by chunk in this process (no Dask): the
                     one-GPU baseline
  torch_process      torch f64 chunk by chunk in this process: y, w and x copied to the GPU,
                     x^T W x and x^T W y by ``torch.bmm``, ``torch.linalg.cholesky`` and
                     ``torch.cholesky_solve``, the coefficients copied back (synchronised:
                     transfers included)
  symraster_dask     the same chunks on a ``LocalCluster(processes=True, threads_per_worker=1)``
                     of W workers, each worker's GL context on its EGL device
                     (``symraster.dask.DevicePerWorker``: worker i on devices[i % len]); the
                     chunks are placed on the workers in turn before the clock starts (as data
                     a worker reads itself, or data persisted), then each chunk's fit is a
                     task on the worker holding it, the coefficients gathered to the client
  torch_dask         the same tasks with torch's solve, worker i on CUDA device
                     devices[i % len] (one process per GPU; W processes sharing the GPUs when
                     there are fewer GPUs than workers)
  symraster_sent     as symraster_dask, but the chunks sent from the client with the tasks on
                     every run (pickled through the scheduler's sockets): the price of data
                     that live on the client

--workers lists the cluster sizes (default 1,2; each size a fresh cluster). --gpus (default:
torch's CUDA device count, else 1) gives --devices its default 0..gpus-1: with one GPU and two
workers, both share GPU 0. EGL and CUDA number the same GPUs independently; one process per
GPU holds as long as each list names distinct GPUs.

Each time is the best of --repeat runs after a warm-up (a run past --cap seconds is not
repeated); the cluster's start, the data's placement and the workers' first calls (imports, the
GL context's open, the kernels' compilation, CUDA's start) are timed apart, in the note.
efficiency is pixels_per_s over W times the same method's pixels_per_s with one worker. The
note gives the tasks' mean seconds and the workers' busy share (the tasks' summed seconds over
W times the wall time): a busy share near 1 with slower tasks says the workers contend (for the
GPU or the host), a low one says the scheduler or the transfers wait between tasks. rel_err is
the largest ||beta - beta_numpy|| / ||beta_numpy|| over --check pixels spread over the whole
stack (so every chunk's worker is checked), the reference numpy's lstsq pixel by pixel. A
method whose module is missing (torch, CUDA, distributed) gets a row with empty figures and a
note.

Writes CSV (device,gpus,workers,method,pixels,times,chunk,seconds,pixels_per_s,efficiency,
rel_err,note) to --out and stdout; workers is 0 for the in-process methods.

Run: python benchmarks/multigpu.py [--pixels 1000000] [--workers 1,2] [--out multigpu.csv]
"""

import argparse
import contextlib
import csv
import os
import sys
import time
import warnings

import numpy as np

import symraster as la
from pixels import lstsq_loop, problem as pixels_problem

FIELDS = ["device", "gpus", "workers", "method", "pixels", "times", "chunk", "seconds",
          "pixels_per_s", "efficiency", "rel_err", "note"]
METHODS = ["symraster_process", "torch_process", "symraster_dask", "torch_dask",
           "symraster_sent"]


def problem(pixels, times, seed=7):
    """pixels.py's problem: x (times, 6), y and w (pixels, times) float64."""
    _, x, y, w, _, _ = pixels_problem(pixels, times, seed)
    return x, y, w


# ---- what a worker (or this process) runs on one chunk: (coefficients, seconds) -------------

def fit_symraster(x, y, w):
    start = time.perf_counter()
    beta = la.weighted_lstsq(x, y, w).x
    return beta, time.perf_counter() - start


def fit_torch(x, y, w, cuda_index):
    import torch

    start = time.perf_counter()
    dev = torch.device("cuda", cuda_index)
    xd = torch.from_numpy(x).to(dev, torch.float64)
    yd = torch.from_numpy(y).to(dev, torch.float64)
    wd = torch.from_numpy(w).to(dev, torch.float64)
    a = (wd.unsqueeze(2) * xd).transpose(1, 2)                      # (p, k, T): x^T W
    c = torch.bmm(a, xd.expand(len(y), -1, -1))                     # (p, k, k)
    g = torch.bmm(a, yd.unsqueeze(2))                               # (p, k, 1)
    beta = torch.cholesky_solve(g, torch.linalg.cholesky(c))[..., 0]
    out = beta.cpu().numpy()                                        # synchronises
    torch.cuda.synchronize(dev)
    return out, time.perf_counter() - start


def worker_identity():
    """(pid, EGL device index, GL renderer) of the process; opens its GPU context."""
    info = la.info()
    return os.getpid(), info["egl_device_index"], info["renderer"]


def torch_identity(cuda_index):
    import torch

    return os.getpid(), cuda_index, torch.cuda.get_device_name(cuda_index)


# ---- the harness ------------------------------------------------------------------------------

def cuda_count():
    """torch's CUDA device count, 0 without torch or CUDA."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def timed(f, repeat, cap):
    """The best of up to `repeat` runs of f (after none: the caller warms up): (seconds, the
    best run's result); stops once the runs took `cap` seconds."""
    spent, best = 0.0, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        seconds = time.perf_counter() - start
        spent += seconds
        if best is None or seconds < best[0]:
            best = (seconds, out)
        if spent > cap:
            break
    return best


def joined(parts):
    """(the coefficients of the chunks in order, their task seconds) from (beta, s) pairs."""
    return np.concatenate([b for b, _ in parts]), [s for _, s in parts]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pixels", type=int, default=1_000_000)
    parser.add_argument("--times", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=131072, help="pixels per chunk (task)")
    parser.add_argument("--workers", default="1,2",
                        help="comma-separated worker counts, one cluster each (default 1,2)")
    parser.add_argument("--gpus", type=int, default=0,
                        help="GPUs to use (default: torch's CUDA device count, else 1)")
    parser.add_argument("--devices", default="",
                        help="comma-separated device indices, worker i on devices[i %% len] "
                             "(default 0..gpus-1)")
    parser.add_argument("--check", type=int, default=1000,
                        help="pixels checked against numpy, spread over the stack")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cap", type=float, default=15.0,
                        help="no further repeats once a method's runs took this many seconds")
    parser.add_argument("--methods", default="all",
                        help="comma-separated subset of " + ",".join(METHODS))
    parser.add_argument("--out", default="", help="the CSV file (stdout always)")
    args = parser.parse_args(argv)

    wanted = METHODS if args.methods == "all" else args.methods.split(",")
    unknown = set(wanted) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}; known: {','.join(METHODS)}")
    worker_counts = [int(v) for v in args.workers.split(",") if v.strip()]
    if any(n < 1 for n in worker_counts):
        parser.error("--workers: each count at least 1")
    cudas = cuda_count()
    gpus = args.gpus or max(cudas, 1)
    devices = [int(v) for v in args.devices.split(",")] if args.devices else list(range(gpus))

    P, T, chunk = args.pixels, args.times, args.chunk
    x, y, w = problem(P, T)
    starts = range(0, P, chunk)
    chunks = [(y[i:i + chunk], w[i:i + chunk]) for i in starts]
    sample = np.unique(np.linspace(0, P - 1, min(args.check, P)).astype(int))
    ref = lstsq_loop(x, y[sample], w[sample])

    rows, results, per_worker = [], {}, {}
    outs = [sys.stdout] + ([open(args.out, "w", newline="")] if args.out else [])
    writers = [csv.writer(f, lineterminator="\n") for f in outs]
    for writer in writers:
        writer.writerow(FIELDS)
    info = la.info()
    print(f"# {P} pixels x {T} acquisitions, chunks of {chunk}; devices {devices}; "
          f"{info['renderer']} (EGL device {info['egl_device_index']} of "
          f"{info['egl_device_count']}); {cudas} CUDA devices", file=sys.stderr)

    def emit(r):
        """A row to stdout and --out at once: a run stopped midway keeps its rows."""
        rows.append(r)
        for f, writer in zip(outs, writers):
            writer.writerow(r)
            f.flush()

    def row(method, workers, device, used, seconds, beta, note):
        rate = P / seconds
        efficiency = ""
        if workers:
            per_worker[(method, workers)] = rate
            one = per_worker.get((method, 1))
            if one:
                efficiency = f"{rate / (workers * one):.3f}"
        err = np.linalg.norm(beta[sample] - ref, axis=1) / np.linalg.norm(ref, axis=1)
        results[(method, workers)] = beta
        emit([device, used, workers, method, P, T, chunk, f"{seconds:.6g}", f"{rate:.6g}",
              efficiency, f"{err.max():.2e}", note])

    def skip(method, workers, note):
        emit(["", "", workers, method, P, T, chunk, "", "", "", "", note])

    @contextlib.contextmanager
    def guarded(method, workers):
        """A method that raises gets a row saying so; the others go on."""
        try:
            yield
        except Exception as e:  # noqa: BLE001
            skip(method, workers, f"failed: {type(e).__name__}: {e}"[:300].replace("\n", " "))

    def task_note(seconds, task_s, workers):
        busy = sum(task_s) / (workers * seconds)
        return f"{len(task_s)} tasks of {np.mean(task_s):.3g} s mean, workers busy {busy:.0%}"

    # ---- one process, no Dask
    if "symraster_process" in wanted:
        with guarded("symraster_process", 0):
            fit_symraster(x, y[:8], w[:8])           # open the GPU, compile the kernels
            seconds, (beta, _) = timed(
                lambda: joined([fit_symraster(x, yb, wb) for yb, wb in chunks]),
                args.repeat, args.cap)
            row("symraster_process", 0, info["renderer"], 1, seconds, beta,
                f"la.weighted_lstsq chunk by chunk in one process, EGL device "
                f"{info['egl_device_index']}")
    if "torch_process" in wanted:
        with guarded("torch_process", 0):
            if not cudas:
                skip("torch_process", 0, "torch or CUDA missing")
            else:
                import torch

                fit_torch(x, y[:8], w[:8], devices[0])
                seconds, (beta, _) = timed(
                    lambda: joined([fit_torch(x, yb, wb, devices[0]) for yb, wb in chunks]),
                    args.repeat, args.cap)
                row("torch_process", 0, torch.cuda.get_device_name(devices[0]), 1, seconds,
                    beta, f"f64 bmm normal equations + cholesky + cholesky_solve chunk by "
                          f"chunk in one process, host arrays in and out; torch "
                          f"{torch.__version__}")

    # ---- W worker processes
    on_cluster = [m for m in ("symraster_dask", "torch_dask", "symraster_sent") if m in wanted]
    try:
        from distributed import Client, LocalCluster

        from symraster.dask import DevicePerWorker
    except ImportError as e:
        for workers in worker_counts:
            for m in on_cluster:
                skip(m, workers, f"dask.distributed missing: {e}")
        on_cluster = []
    # the sent method sends the chunks with the tasks on purpose (distributed warns of it)
    warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph", category=UserWarning)

    for workers in worker_counts if on_cluster else []:
        try:
            start = time.perf_counter()
            with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                client.wait_for_workers(workers)
                client.register_plugin(DevicePerWorker(devices))
                named = client.scheduler_info(n_workers=-1)["workers"]
                addresses = sorted(named, key=lambda a: int(named[a]["name"]))
                up = time.perf_counter() - start
                start = time.perf_counter()
                placed = []
                for i, (yb, wb) in enumerate(chunks):
                    where = addresses[i % workers]
                    fy, fw = client.scatter([yb, wb], workers=[where], hash=False)
                    placed.append((where, fy, fw))
                place_s = time.perf_counter() - start
                setup = f"cluster start {up:.1f} s, chunks placed in {place_s:.1f} s"

                def gather(fit, extra, send=False):
                    futures = [client.submit(fit, x, *((yb, wb) if send else (fy, fw)),
                                             *extra(where), workers=[where], pure=False)
                               for (where, fy, fw), (yb, wb) in zip(placed, chunks)]
                    return joined(client.gather(futures))

                ours = [m for m in ("symraster_dask", "symraster_sent") if m in wanted]
                if ours:
                    with guarded(ours[0], workers):
                        start = time.perf_counter()
                        who = {a: client.submit(worker_identity, workers=[a], pure=False)
                               .result() for a in addresses}
                        for a in addresses:
                            client.submit(fit_symraster, x, y[:8], w[:8], workers=[a],
                                          pure=False).result()
                        first = time.perf_counter() - start
                        egl = sorted({index for _, index, _ in who.values()})
                        device = " + ".join(sorted({r for _, _, r in who.values()}))
                        pids = {pid for pid, _, _ in who.values()}
                        assert len(pids) == workers and os.getpid() not in pids
                        for method in ours:
                            send = method == "symraster_sent"
                            with guarded(method, workers):
                                seconds, (beta, task_s) = timed(
                                    lambda send=send: gather(fit_symraster, lambda a: (), send),
                                    args.repeat, args.cap)
                                row(method, workers, device, len(egl), seconds, beta,
                                    f"{task_note(seconds, task_s, workers)}; EGL devices "
                                    f"{[who[a][1] for a in addresses]} of the workers; {setup}; "
                                    f"workers' first calls {first:.1f} s"
                                    + ("; chunks sent with the tasks" if send else
                                       "; chunks on the workers before the clock"))

                if "torch_dask" in wanted:
                    with guarded("torch_dask", workers):
                        if not cudas:
                            skip("torch_dask", workers, "torch or CUDA missing")
                        else:
                            cuda_of = {a: devices[i % len(devices)]
                                       for i, a in enumerate(addresses)}
                            start = time.perf_counter()
                            who = {a: client.submit(torch_identity, cuda_of[a], workers=[a],
                                                    pure=False).result() for a in addresses}
                            for a in addresses:
                                client.submit(fit_torch, x, y[:8], w[:8], cuda_of[a],
                                              workers=[a], pure=False).result()
                            first = time.perf_counter() - start
                            device = " + ".join(sorted({n for _, _, n in who.values()}))
                            seconds, (beta, task_s) = timed(
                                lambda: gather(fit_torch, lambda a: (cuda_of[a],)),
                                args.repeat, args.cap)
                            row("torch_dask", workers, device, len(set(cuda_of.values())),
                                seconds, beta,
                                f"{task_note(seconds, task_s, workers)}; CUDA devices "
                                f"{[cuda_of[a] for a in addresses]} of the workers; {setup}; "
                                f"workers' first calls (torch import, CUDA start) {first:.1f} s; "
                                "chunks on the workers before the clock")
        except Exception as e:  # noqa: BLE001  (the cluster itself: its methods' rows say so)
            for m in on_cluster:
                if not any(r[3] == m and r[2] == workers for r in rows):
                    skip(m, workers, f"failed: {type(e).__name__}: {e}"[:300]
                         .replace("\n", " "))

    for f in outs[1:]:
        f.close()
    return {"rows": rows, "beta": results}


if __name__ == "__main__":
    main()
