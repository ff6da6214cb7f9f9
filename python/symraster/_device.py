"""Which GPU (EGL device) this process runs on: ``use_device(index)``, or the environment
variable ``SYMRASTER_EGL_DEVICE`` (the command line's name for the same choice), read here at
import. The Rust library never reads the environment; the index goes to the native open as an
argument. One process holds one GPU context, opened on its first GPU call, so the choice is
made before that call: one worker process per GPU (with Dask, one worker per GPU, each given
its index through the variable or ``symraster.dask.DevicePerWorker``).
"""

import operator
import os

from . import _native
from ._errors import DeviceError

VARIABLE = "SYMRASTER_EGL_DEVICE"


def use_device(index):
    if index is not None:
        try:
            index = operator.index(index)
        except TypeError:
            raise TypeError(
                f"the device index must be an integer or None, not {type(index).__name__}"
            ) from None
        if index < 0:
            raise ValueError(f"the device index must be 0 or more, not {index}")
    opened = _native.select_device(index)
    if opened is not None:
        raise DeviceError(
            f"this process's GPU is open already, on EGL device {opened}; choose the device "
            "before the process's first GPU call (one process holds one GPU context)")


def from_environment():
    """The device named by ``SYMRASTER_EGL_DEVICE``, where it is set and not empty."""
    value = os.environ.get(VARIABLE, "").strip()
    if not value:
        return
    try:
        index = int(value)
    except ValueError:
        index = -1
    if index < 0:
        raise DeviceError(
            f"environment variable {VARIABLE} must be a device index (0, 1, ...), "
            f"not {value!r}")
    use_device(index)
