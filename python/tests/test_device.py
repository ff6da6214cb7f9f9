"""Choosing the process's GPU: use_device and SYMRASTER_EGL_DEVICE (read by the Python package
at import, passed to the native open as an argument). Each case runs in a fresh interpreter,
since a process opens its GPU once."""

import os
import subprocess
import sys

import pytest

import symraster as la


def run(code, **env):
    """Runs ``code`` in a fresh interpreter with ``env`` added: (exit status, output)."""
    environment = dict(os.environ)
    environment.pop("SYMRASTER_EGL_DEVICE", None)
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def device():
    return la.info()["egl_device_index"], la.info()["egl_device_count"]


def test_variable_chooses_the_device(device):
    index, count = device
    status, out = run("import symraster as la; print(la.info()['egl_device_index'])",
                      SYMRASTER_EGL_DEVICE=str(index))
    assert status == 0 and out.split()[-1] == str(index), out
    status, out = run("import symraster as la; la.info()", SYMRASTER_EGL_DEVICE=str(count))
    assert status != 0 and "DeviceError" in out and f"index {count} asked for" in out, out
    status, out = run("import symraster", SYMRASTER_EGL_DEVICE="first")
    assert status != 0 and "SYMRASTER_EGL_DEVICE must be a device index" in out, out
    status, out = run("import symraster as la; la.info()", SYMRASTER_EGL_DEVICE=" ")
    assert status == 0, out  # empty: the default


def test_use_device(device):
    index, count = device
    code = (
        "import symraster as la\n"
        f"la.use_device({index}); la.use_device(None); la.use_device({index})\n"
        f"assert la.info()['egl_device_index'] == {index}\n"
        f"la.use_device({index})  # the open device: accepted\n"
        "try:\n"
        f"    la.use_device({index + 1})\n"
        "except la.DeviceError as e:\n"
        "    print('refused:', e)\n")
    status, out = run(code)
    assert status == 0 and f"refused: this process's GPU is open already, on EGL device {index}" \
        in out, out
    with pytest.raises(ValueError, match="0 or more"):
        la.use_device(-1)
    with pytest.raises(TypeError, match="integer"):
        la.use_device(1.5)
