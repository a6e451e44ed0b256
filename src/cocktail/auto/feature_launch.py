"""The plumbing of the features' fused device pass (:func:`~.features.quick_facts`, :func:`~.features.compute`
on the GPU): one zeroed device buffer of named sections the kernels write (:class:`_Summary`), read back by one
copy and one synchronisation, and the launcher of the feature helper kernels on CuPy's current device and
stream (:class:`_CupyLauncher`).
"""

from __future__ import annotations

import numpy as np


class _Summary:
    """Named sections of one zeroed device buffer: what the fused kernels write and the host reads after the one
    transfer (:meth:`fetch`)."""

    def __init__(self, xp, sections: dict):
        self.layout, offset = {}, 0
        for name, (dtype, shape) in sections.items():
            dtype = np.dtype(dtype)
            self.layout[name] = (offset, dtype, shape)
            offset += -(-int(np.prod(shape)) * dtype.itemsize // 8) * 8
        self.buffer = xp.zeros(max(offset, 8), dtype=np.uint8)

    def __getitem__(self, name):
        return self._view(self.buffer, name)

    def _view(self, buffer, name):
        offset, dtype, shape = self.layout[name]
        size = int(np.prod(shape)) * dtype.itemsize
        return buffer[offset:offset + size].view(dtype).reshape(shape)

    def fetch(self, launcher) -> dict:
        """Every section on the host, after the one copy and synchronisation."""
        host = launcher.fetch(self.buffer)
        return {name: self._view(host, name) for name in self.layout}


class _CupyLauncher:
    """Launches the feature helper kernels on CuPy's current device and stream."""

    def __init__(self):
        from ..kernels import device

        self.props = device.current()

    def __call__(self, stem: str, expression: str, items: int, block: int, args, shared: int = 0) -> None:
        from ..kernels import device, source

        fn = source.helper(stem, expression, self.props.id)
        grid = device.grid_for(max(int(items), 1), block, self.props, fn, shared)
        fn((grid,), (block,), tuple(np.uint64(0) if a is None else a for a in args), shared_mem=shared)

    @staticmethod
    def fetch(buffer):
        """``buffer`` in pinned host memory: one asynchronous copy on the current stream, then its synchronisation."""
        import cupy

        pinned = cupy.cuda.alloc_pinned_memory(buffer.nbytes)
        host = np.frombuffer(pinned, np.uint8, buffer.nbytes)
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(host.ctypes.data, buffer.data.ptr, buffer.nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        return host


def _index_type(csr) -> str:
    return "int" if csr.indptr.dtype == np.int32 else "long long"
