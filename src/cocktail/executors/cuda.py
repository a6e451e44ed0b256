"""The ``cuda`` executor: the matrix's kernel bound once into launches; a product only fills four slots."""

from __future__ import annotations

from .. import kernels
from ..kernels import device
from ..tuning.kernel_rules import choose_kernel
from ..tuning.launch_rules import configure, user_view
from .base import Executor


class CudaExecutor(Executor):
    """The launches of one kernel bound to one stored matrix on the current device."""

    name = "cuda"

    def __init__(self, storage, spec, params: dict, accumulate: bool = False):
        import cupy

        if storage.dtype.kind == "c":
            raise TypeError(f"kernel {spec.name!r} has no {storage.dtype.name} instantiation; GPU kernels take "
                            "float32 and float64 (complex runs on the reference executor)")
        props = device.props(cupy.cuda.Device().id)
        self.kernel = spec.name
        self.spec = spec
        full = configure(spec, storage, params, props)
        self.config = user_view(full)
        self.launches = tuple(spec.bind(storage, full, props, accumulate)) if storage.shape[0] else ()
        self.nondeterministic = kernels.nondeterministic(spec, full)
        self._current_stream = cupy.cuda.get_current_stream

    def run(self, x, y, alpha, beta) -> None:
        """Fill the per-product slots of every launch and issue them on the current stream."""
        stream = self._current_stream().ptr
        xp, yp = x.data.ptr, y.data.ptr
        for launch in self.launches:
            launch(xp, yp, alpha, beta, stream)


def create(storage, spec, params: dict, required: bool, accumulate: bool = False, deterministic: bool = False):
    """The cuda executor with ``spec`` (None: the kernel ``cocktail.tuning`` picks), or the device reference.

    Without a kernel for the format or dtype, the device reference path runs, unless
    ``required`` (``executor="cuda"`` was asked for), which is a ``ValueError``.
    ``deterministic``: the picked kernel is one declared deterministic, where the format has one.
    """
    if spec is None:
        name = choose_kernel(storage, deterministic)
        if name is None:
            if required or params:
                raise ValueError(f"no GPU kernel multiplies {storage.name} matrices of {storage.dtype.name}; "
                                 "leave executor=None to run the device reference path")
            from .reference import DeviceReference

            return DeviceReference(storage)
        spec = kernels.get(name)
    return CudaExecutor(storage, spec, params, accumulate)
