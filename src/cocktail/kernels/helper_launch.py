"""Launches of the helper kernels that build formats on the device (:mod:`.block_build`, :mod:`.diagonal_build`,
:mod:`.sell_build`, :mod:`.part_split`).

The formats lie below this layer: importing this module provides them with :func:`launcher_for` and the launch
modules (:mod:`cocktail.formats._device_builds`; the package imports it).  A builder asks :func:`launcher_for` with
one of its CSR's arrays: CuPy's launcher (:class:`CupyLauncher`) for a CuPy array, None for a NumPy one (the host
path).  A launcher is called as ``launch(stem, expression, items, block, args)``
(a helper kernel of :data:`~.source.HELPERS`, a grid-stride loop over ``items``, ``None`` for a null pointer) and
gives a small device buffer back to the host with ``launch.fetch(buffer)``: the build's synchronisation.  Inside
:func:`launching` the builders take the device path with the launcher given, on NumPy arrays too (the tests' CPU
emulation of the kernels).
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..arrays import is_cupy_array
from ..formats import _device_builds
from . import block_build, csr_check, diagonal_build, part_split, sell_build

_ELSEWHERE = contextvars.ContextVar("cocktail_build_launcher", default=None)


class CupyLauncher:
    """Launches helper kernels on CuPy's current device and stream."""

    def __init__(self):
        from . import device

        self.props = device.current()

    def __call__(self, stem: str, expression: str, items: int, block: int, args) -> None:
        from . import device, source

        fn = source.helper(stem, expression, self.props.id)
        grid = device.grid_for(max(int(items), 1), block, self.props, fn)
        fn((grid,), (block,), tuple(np.uint64(0) if a is None else a for a in args))

    @staticmethod
    def fetch(buffer) -> np.ndarray:
        """``buffer`` (contiguous) on the host: one asynchronous copy on the current stream into pinned memory, then
        its synchronisation."""
        import cupy

        pinned = cupy.cuda.alloc_pinned_memory(max(buffer.nbytes, 1))
        host = np.frombuffer(pinned, np.uint8, buffer.nbytes)
        stream = cupy.cuda.get_current_stream()
        if buffer.nbytes:
            cupy.cuda.runtime.memcpyAsync(host.ctypes.data, buffer.data.ptr, buffer.nbytes,
                                          cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        return host.view(buffer.dtype).reshape(buffer.shape).copy()


def launcher_for(array):
    """The launcher of the device builds for ``array``'s matrix: the one :func:`launching` set, else CuPy's for a
    CuPy array, else None (build on the host)."""
    forced = _ELSEWHERE.get()
    if forced is not None:
        return forced
    return CupyLauncher() if is_cupy_array(array) else None


@contextlib.contextmanager
def launching(launcher):
    """Inside this block the format builders take their device path with ``launcher``, whatever their arrays (the
    tests run the kernels in a CPU emulation so, on NumPy arrays)."""
    token = _ELSEWHERE.set(launcher)
    try:
        yield launcher
    finally:
        _ELSEWHERE.reset(token)


_device_builds.provide(launcher_for, block_build, diagonal_build, csr_check, sell_build, part_split)
