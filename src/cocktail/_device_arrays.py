"""Accepting GPU arrays from other libraries without copies, and moving host arrays to the GPU fast."""

from __future__ import annotations

import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .arrays import is_cupy_array


def as_device_array(obj, name: str):
    """A ``cupy.ndarray`` viewing ``obj``'s device memory (CuPy, ``__cuda_array_interface__`` or DLPack).

    NumPy arrays and other host objects are a ``TypeError``: Cocktail never copies silently.
    """
    if is_cupy_array(obj):
        return obj
    import cupy

    if hasattr(obj, "__cuda_array_interface__"):
        return cupy.asarray(obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device_type, _ = obj.__dlpack_device__()
        if int(device_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return cupy.from_dlpack(obj)
    raise TypeError(
        f"{name} is a {type(obj).__module__}.{type(obj).__name__} in host memory but the matrix is on "
        "the GPU; pass a device array (cupy.asarray(x)): Cocktail never copies silently"
    )


#: Host arrays of fewer bytes in all go up with one ``cupy.asarray`` each: below this the threads
#: and chunks cost more than they save.
THREADED_MIN_BYTES = 4 << 20
#: Bytes per pinned staging buffer (one chunk of one array).
CHUNK_BYTES = 8 << 20
#: At most this many threads fill the staging buffers (never more than the CPUs).
MAX_COPY_THREADS = 4

_lock = threading.Lock()
_rings = {}  # device id -> _Ring
_pool = None


class _Ring:
    """Pinned staging buffers kept for the process, each with the event of the last copy that read it."""

    def __init__(self, slots: int):
        import cupy
        import cupyx

        self.buffers = [cupyx.empty_pinned(CHUNK_BYTES, dtype=np.uint8) for _ in range(slots)]
        self.events = [cupy.cuda.Event(disable_timing=True) for _ in range(slots)]


def copy_threads() -> int:
    """How many threads fill the staging buffers: one per CPU, at most :data:`MAX_COPY_THREADS`."""
    return max(1, min(MAX_COPY_THREADS, os.cpu_count() or 1))


def upload(arrays) -> list:
    """Device copies of ``arrays`` on the current stream (a device array is returned as it is).

    Where cupyx copies each host array whole into pinned memory on the calling thread and then
    starts its transfer, large host arrays here go in chunks of :data:`CHUNK_BYTES`: threads copy
    chunks into a ring of pinned buffers while the copy engine moves the ones already staged.
    Returns once every transfer is queued; work queued after it on the stream reads the copies.
    """
    import cupy

    host = [a for a in arrays if isinstance(a, np.ndarray)]  # sizes and dtypes: no copy needed yet
    total = sum(a.nbytes for a in host)
    threads = copy_threads()
    odd = any(not a.dtype.isnative or a.dtype.hasobject for a in host)  # left to cupy, which names them
    if total < THREADED_MIN_BYTES or threads < 2 or odd:
        return [cupy.asarray(a) for a in arrays]
    out, pieces = [], []
    for a in arrays:
        if not isinstance(a, np.ndarray):
            out.append(cupy.asarray(a))
            continue
        a = np.ascontiguousarray(a)
        device = cupy.empty(a.shape, a.dtype)
        source = a.reshape(-1).view(np.uint8)
        pieces += [(source, device, lo, min(a.nbytes, lo + CHUNK_BYTES)) for lo in range(0, a.nbytes, CHUNK_BYTES)]
        out.append(device)
    with _lock:
        _stage(pieces, threads)
    return out


def _stage(pieces, threads: int) -> None:
    """Queue the transfer of every ``(source bytes, device array, lo, hi)``: threads stage, this thread posts."""
    import cupy

    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(MAX_COPY_THREADS, thread_name_prefix="cocktail-upload")
    device_id = cupy.cuda.Device().id
    ring = _rings.get(device_id)
    if ring is None:
        ring = _rings[device_id] = _Ring(2 * MAX_COPY_THREADS)
    stream = cupy.cuda.get_current_stream()
    slots = len(ring.buffers)
    staged = deque()

    def post():
        slot, filled, (_, device, lo, hi) = staged.popleft()
        filled.result()
        cupy.cuda.runtime.memcpyAsync(device.data.ptr + lo, ring.buffers[slot].ctypes.data, hi - lo,
                                      cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
        ring.events[slot].record(stream)

    for i, piece in enumerate(pieces):
        if len(staged) >= threads:
            post()
        slot = i % slots
        ring.events[slot].synchronize()  # the copy that last read this buffer has finished
        source, _, lo, hi = piece
        staged.append((slot, _pool.submit(np.copyto, ring.buffers[slot][: hi - lo], source[lo:hi]), piece))
    while staged:
        post()
