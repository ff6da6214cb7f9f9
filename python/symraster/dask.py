"""symraster with Dask's distributed scheduler: one GPU per worker process.

The functions need nothing special inside ``dask.array.map_blocks``/``blockwise`` or
``xarray.apply_ufunc(..., dask="parallelized")``: each block is a numpy stack, and each
process runs its blocks on its own GPU context (opened on its first call, used by all the
process's threads in turn). What a cluster needs is one worker process per GPU, each told its
device before its first call: ``SYMRASTER_EGL_DEVICE`` in each worker's environment (for
workers started by hand, one ``dask worker`` per GPU), or this module's worker plugin, which
gives a ``LocalCluster``'s workers the devices in turn::

    from dask.distributed import Client, LocalCluster
    from symraster.dask import DevicePerWorker

    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1)
    client = Client(cluster)
    client.register_plugin(DevicePerWorker([0, 1]))   # worker i on EGL device [0, 1][i % 2]

Worker processes must not be forked from a process that has used the GPU (a forked child
cannot use its parent's OpenGL context and raises ``DeviceError``): distributed's nanny (the
default) starts workers with multiprocessing's "spawn" method, as ``LocalCluster`` does.

Importing this module needs ``distributed`` (``pip install symraster[dask]``); the package
itself does not.
"""

from distributed import WorkerPlugin

__all__ = ["DevicePerWorker", "worker_device"]


def worker_device(name, devices):
    """The device of the worker named ``name`` (a ``LocalCluster`` numbers its workers 0, 1,
    ...; a name ending in digits counts by them): ``devices[i % len(devices)]``."""
    devices = list(devices)
    if not devices:
        raise ValueError("devices must name at least one EGL device index")
    text = str(name)
    digits = len(text) - len(text.rstrip("0123456789"))
    if digits == 0:
        raise ValueError(
            f"worker {name!r} has no number in its name to pick a device by; start it with "
            "SYMRASTER_EGL_DEVICE set, or name the workers 0, 1, ...")
    return devices[int(text[-digits:]) % len(devices)]


class DevicePerWorker(WorkerPlugin):
    """A worker plugin that points each worker process at its EGL device
    (``symraster.use_device``) when it starts, before any task runs: worker i of a
    ``LocalCluster`` gets ``devices[i % len(devices)]``."""

    name = "symraster-device"

    def __init__(self, devices):
        self.devices = list(devices)

    def setup(self, worker):
        import symraster

        symraster.use_device(worker_device(worker.name, self.devices))
