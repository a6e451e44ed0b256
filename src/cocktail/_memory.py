"""Memory checks: refuse a build that cannot fit before allocating, and turn CuPy's out-of-memory into a clear error.

:func:`available` is the probe (free host memory for ``"cpu"``, free GPU memory plus what CuPy's
pool holds unused for ``"cuda"``); tests replace it.  :func:`require` compares a build's need,
given as named parts, with it and raises :class:`~cocktail.errors.DeviceMemoryError` naming
every part; :func:`fits` asks the same question of one allocation that has a smaller fallback.
``gpu_build`` runs a GPU build: CuPy's ``OutOfMemoryError`` becomes a ``DeviceMemoryError`` after
the pool's free blocks go back to the driver, so the CUDA context stays usable.  Low level:
imports nothing of Cocktail but the errors.
"""

from __future__ import annotations

import os
import re

from .errors import DeviceMemoryError, first_line

#: Needs below this many bytes are not probed: they fit anywhere Cocktail runs, and the probe
#: (reading /proc/meminfo or asking the driver) would only add to every small build.
PROBE_FLOOR = 1 << 26
_DEVICE_WORDS = {"cpu": "host", "cuda": "GPU"}


def _meminfo_available(path: str = "/proc/meminfo") -> int | None:
    """``MemAvailable`` of Linux's /proc/meminfo in bytes; None where there is no such file or line."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def host_available() -> int | None:
    """Bytes of host memory a new allocation can take; None when the OS does not say."""
    free = _meminfo_available()
    if free is not None:
        return free
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def gpu_available() -> int:
    """Bytes free on the current GPU: the driver's free memory plus the blocks CuPy's pool holds unused."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    return int(free) + int(cupy.get_default_memory_pool().free_bytes())


def available(device: str) -> int | None:
    """Free bytes on ``device`` (``"cpu"`` or ``"cuda"``); None when unknown (nothing is then refused)."""
    return gpu_available() if device == "cuda" else host_available()


def device_of(array) -> str:
    """``"cuda"`` for a CuPy array, else ``"cpu"``."""
    return "cuda" if type(array).__module__.startswith("cupy") else "cpu"


def csr_bytes(m: int, nnz: int, value_size: int, index_size: int) -> tuple[int, int]:
    """``(row pointers, entries)``: bytes of a CSR of ``m`` rows and ``nnz`` entries."""
    return (int(m) + 1) * index_size, int(nnz) * (index_size + value_size)


def size_text(nbytes: int) -> str:
    """``nbytes`` in decimal units, e.g. ``24.0 GB``, ``36 B``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def shape_text(shape) -> str:
    """``3,000,000,000 x 3`` for a shape."""
    return f"{int(shape[0]):,} x {int(shape[1]):,}"


def fits(nbytes: int, device: str) -> bool:
    """Whether an allocation of ``nbytes`` fits in ``device``'s free memory: True under :data:`PROBE_FLOOR`
    (not probed) and where the device does not say, as :func:`require` judges."""
    return _short_of(int(nbytes), device) is None


def _short_of(nbytes: int, device: str) -> int | None:
    """``device``'s free bytes where ``nbytes`` (at least :data:`PROBE_FLOOR`) do not fit in them, else None:
    the one probe behind :func:`fits` and :func:`require`."""
    if nbytes < PROBE_FLOOR:
        return None
    free = available(device)
    return None if free is None or nbytes <= free else free


def require(subject: str, parts, device: str) -> None:
    """Raise :class:`DeviceMemoryError` when the ``parts`` (``(what, bytes)`` pairs) of ``subject``
    need more than ``device`` has free.

    The message reads "``subject`` needs 72.0 GB of host memory (72,000,000,044 bytes): 24.0 GB
    for its CSR row pointers, ...; 12.3 GB available (...)".  Needs under :data:`PROBE_FLOOR`
    and devices that do not report their free memory pass.
    """
    parts = [(what, int(nbytes)) for what, nbytes in parts]
    needed = sum(nbytes for _, nbytes in parts)
    free = _short_of(needed, device)
    if free is None:
        return
    detail = ", ".join(f"{size_text(nbytes)} for {what}" for what, nbytes in parts if nbytes)
    raise DeviceMemoryError(
        f"{subject} needs {size_text(needed)} of {_DEVICE_WORDS.get(device, device)} memory ({needed:,} bytes): "
        f"{detail}; {size_text(free)} available ({free:,} bytes)",
        needed=needed, available=free, device=device)


_CUPY_OOM = re.compile(r"allocating ([\d,]+) bytes")


def _requested(exc: BaseException) -> int:
    """The size of the allocation CuPy's ``OutOfMemoryError`` reports (0 when it does not say)."""
    match = _CUPY_OOM.search(str(exc))
    return int(match.group(1).replace(",", "")) if match else 0


#: cudaErrorMemoryAllocation: what cudaMalloc raises when CuPy's pool is off (``set_allocator(None)``).
_CUDA_ERROR_MEMORY_ALLOCATION = 2


def gpu_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the GPU running out of memory: CuPy's ``OutOfMemoryError`` (its pool), or
    the CUDA runtime's allocation error (no pool, or the asynchronous allocator)."""
    if isinstance(exc, DeviceMemoryError):
        return False
    if isinstance(exc, MemoryError):
        return type(exc).__module__.startswith("cupy")
    return type(exc).__name__ == "CUDARuntimeError" and getattr(exc, "status", None) == _CUDA_ERROR_MEMORY_ALLOCATION


def release_gpu_pool() -> None:
    """Return CuPy's unused pool blocks (device and pinned host) to the driver."""
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


def gpu_build(subject: str, build, estimate: int = 0):
    """``build()``, a GPU build; an out-of-memory error inside it becomes a :class:`DeviceMemoryError` for ``subject``.

    The error gives at least the bytes the build had taken when it failed plus the allocation that
    failed (or ``estimate``, when larger) and the bytes free once the failed build's arrays are
    released.  It is raised outside the ``except`` clause, so the failed build's frames, and the
    arrays they hold, are gone before the pool's blocks go back to the driver; the caller should
    keep no large GPU array of its own in the frame that calls this.
    """
    import cupy

    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    try:
        return build()
    except Exception as exc:
        if not gpu_out_of_memory(exc):
            raise
        # Arrays of earlier work freed during the build can make the pool's use drop below `before`.
        taken = max(pool.used_bytes() - before, 0)
        failure = (max(taken + _requested(exc), estimate), first_line(exc))
    release_gpu_pool()
    needed, cause = failure
    free = available("cuda")
    # Without CuPy's pool the runtime's error does not say the size it was asked for.
    need_text = f"at least {size_text(needed)} ({needed:,} bytes)" if needed else "more than is free"
    raise DeviceMemoryError(f"{subject} ran out of GPU memory: it needs {need_text}; {size_text(free)} available "
                            f"({free:,} bytes) after releasing the failed build (CuPy: {cause})",
                            needed=needed, available=free, device="cuda")
