"""Properties of a CUDA device that launch configurations are computed from."""

from __future__ import annotations

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
    #: The launch policy, not the device's: launches bound with these props share the GPU with another stream's
    #: kernel, each grid-stride grid a block per chunk (:func:`for_launches`, :func:`grid_for`).
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


def for_launches(device_id: int, yielding: bool = False) -> DeviceProps:
    """The props launches on device ``device_id`` are bound with: :func:`props`, marked ``yielding`` where the
    launches share the GPU with a kernel another stream runs beside them.

    Yielding grids are a block per chunk, never one looping wave: their blocks retire all along, so that kernel
    (NCCL's halo exchange beside a distributed matrix's diagonal block) gets an SM as the first frees rather than
    after a whole wave (the exchange hidden 0-18% behind one-wave grids, 36% (weak) and 50% (strong) behind these
    with the transport's stream at the highest priority, on 2 H200s; docs/benchmarks.md, "Several GPUs").
    Kernels that size their own grids (cuSPARSE's, coo_segmented's wave of warps, csr_spmm_merge's shares) are
    as they were."""
    found = props(device_id)
    return dataclasses.replace(found, yielding=True) if yielding else found


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
    alone (host-side simulations).  Props marked ``yielding`` (:func:`for_launches`) take a block per chunk
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
