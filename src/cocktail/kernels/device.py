"""Properties of a CUDA device that launch configurations are computed from."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from dataclasses import dataclass

#: Lanes per warp on every NVIDIA GPU; the warp-per-task kernels are written for it.
WARP_SIZE = 32


@dataclass(frozen=True)
class DeviceProps:
    """The few device properties the binders and rules use."""

    id: int
    name: str
    sm_count: int
    max_threads_per_block: int
    max_threads_per_sm: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    max_grid_x: int
    warp_size: int
    l2_bytes: int
    compute_capability: tuple[int, int]
    #: Launches bound with these props share the GPU with another stream's kernel: see :func:`yielding_grids`.
    yielding: bool = False


@functools.lru_cache(maxsize=None)
def props(device_id: int) -> DeviceProps:
    """Properties of device ``device_id`` (read once per device)."""
    import cupy

    p = cupy.cuda.runtime.getDeviceProperties(device_id)
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    return DeviceProps(
        id=device_id,
        name=name,
        sm_count=int(p["multiProcessorCount"]),
        max_threads_per_block=int(p["maxThreadsPerBlock"]),
        max_threads_per_sm=int(p["maxThreadsPerMultiProcessor"]),
        shared_memory_per_block=int(p["sharedMemPerBlock"]),
        shared_memory_per_block_optin=int(p.get("sharedMemPerBlockOptin", p["sharedMemPerBlock"])),
        max_grid_x=int(p["maxGridSize"][0]),
        warp_size=int(p["warpSize"]),
        l2_bytes=int(p["l2CacheSize"]),
        compute_capability=(int(p["major"]), int(p["minor"])),
    )


_YIELDING = contextvars.ContextVar("cocktail_yielding_grids", default=False)


@contextlib.contextmanager
def yielding_grids(on: bool = True):
    """Launches bound inside this block (their executors made here, and every launch those bind later) size each
    grid-stride grid a block per chunk, never one looping wave: blocks retire all along, so a kernel that another
    stream runs beside them (NCCL's halo exchange beside a distributed matrix's diagonal block) gets an SM as the
    first frees rather than after the whole grid.  The distributed matrix builds its blocks so (the
    exchange hidden 0-18% behind one-wave grids, 36% (weak) and 50% (strong) behind these with the transport's
    stream at the highest priority, on 2 H200s; docs/benchmarks.md, "Several GPUs").  Kernels that size their own
    grids (cuSPARSE's, coo_segmented's wave of warps, csr_spmm_merge's shares) are as they were.  ``on=False``
    leaves the grids as they are around it (for callers that yield only sometimes)."""
    if not on:
        yield
        return
    token = _YIELDING.set(True)
    try:
        yield
    finally:
        _YIELDING.reset(token)


def yielding() -> bool:
    """Whether launches bound now yield (inside :func:`yielding_grids`): what a plan's race was timed with, and
    what a launch bound later for the same matrix must take again."""
    return _YIELDING.get()


def for_launches(device_id: int) -> DeviceProps:
    """The props launches on device ``device_id`` are bound with: :func:`props`, marked ``yielding`` inside
    :func:`yielding_grids`."""
    found = props(device_id)
    return dataclasses.replace(found, yielding=True) if yielding() else found


def current() -> DeviceProps:
    """Properties of CuPy's current device."""
    import cupy

    return props(cupy.cuda.Device().id)


def grid_for(items: int, block: int, props: DeviceProps, function, shared_mem: int = 0) -> int:
    """Blocks for a grid-stride loop over ``items`` by compiled ``function``.

    A grid that needs no loop (at most as many blocks as the SMs hold by threads alone) is one block per
    ``block`` items: the hardware balances its waves.  A larger one is one wave of the function's own occupancy
    (its registers and ``shared_mem`` bytes a block), so no block loops in a later wave: a grid sized by threads
    alone (8 blocks of 256 an SM) overran it where registers fit fewer (40 registers fit 6), and its last blocks
    looped alone, 1.2-1.6x slower on the H200 (scripts/occupancy_probe.py).  ``function=None`` sizes by threads
    alone (host-side simulations).  Props marked ``yielding`` (:func:`yielding_grids`) take a block per chunk
    always.
    """
    blocks = -(-items // block)
    if props.yielding:
        return capped_grid(blocks, props)
    by_threads = props.sm_count * max(1, props.max_threads_per_sm // block)
    if function is None or blocks <= by_threads:
        return capped_grid(min(blocks, by_threads), props)
    return capped_grid(props.sm_count * blocks_per_sm(function, block, shared_mem), props)


def capped_grid(blocks: int, props: DeviceProps) -> int:
    """``blocks``, at least 1 and at most the device's ``gridDim.x`` limit: the grid of a kernel whose
    blocks loop over ``blocks`` units of work (block-, warp- or grid-stride), so a larger count is split
    into passes rather than launched past the limit."""
    return max(1, min(int(blocks), props.max_grid_x))


def function_pointer(function) -> int:
    """The ``CUfunction`` handle of a compiled kernel (a ``cupy.RawKernel`` or a CuPy ``Function``)."""
    inner = getattr(function, "kernel", function)  # RawModule.get_function returns a RawKernel
    return int(inner.ptr)


def blocks_per_sm(function, block: int, shared_mem: int = 0) -> int:
    """Blocks of ``block`` threads of compiled ``function`` one SM holds (the driver's occupancy)."""
    from cupy.cuda import driver

    ptr = function_pointer(function)
    return max(1, int(driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, block, shared_mem)))
