"""Out of memory is a MemoryError, never the interpreter killed: under an address-space
limit (RLIMIT_AS) too low for the native layer's copy of an input, the call raises
MemoryError with a one-line message and the interpreter carries on. Run in a child process,
whose limit cannot disturb the other tests."""

import subprocess
import sys
import textwrap

import pytest

resource = pytest.importorskip("resource")

CHILD = textwrap.dedent(
    """
    import resource
    import numpy as np
    import symraster as la

    # The GPU's context and worker up first, so that the limit binds only the calls below.
    la.cholesky(np.eye(4, dtype=np.float32), lower=True)
    la.batched_cholesky(np.eye(4, dtype=np.float32)[None])

    n = 8192
    a = np.zeros((n, n), dtype=np.float32)  # 256 MiB
    a[np.arange(n), np.arange(n)] = 4.0
    # 256 MiB, its rows reversed: a stack whose strides are not all non-negative is copied (a
    # dense one is lent to the library in place).
    stack = np.zeros((64, 1024, 1024), dtype=np.float32)[:, ::-1]
    with open("/proc/self/status") as status:
        used = next(int(l.split()[1]) for l in status if l.startswith("VmSize:")) * 1024
    # Room for half an array more: the native copy of either does not fit.
    limit = used + a.nbytes // 2
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    for call in (
        lambda: la.cholesky(a, lower=True, check_finite=False),
        lambda: la.batched_cholesky(stack, lower=True, check_finite=False),
    ):
        try:
            call()
            print("no error")
        except MemoryError as e:
            print("MemoryError:", e)
    print("alive")
    """
)


def test_no_memory_for_a_copy_is_memory_error_and_the_interpreter_lives():
    if not __import__("os").path.exists("/proc/self/status"):
        pytest.skip("needs /proc/self/status to set a limit above what the process holds")
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert lines[-1] == "alive", done.stdout
    errors = [line for line in lines if line.startswith("MemoryError:")]
    assert len(errors) == 2, done.stdout
    assert "not enough memory for a copy of the 8192x8192 array" in errors[0]
    assert "not enough memory for a copy of the 64x1024x1024 stack" in errors[1]
    assert all("GiB" in e for e in errors)
