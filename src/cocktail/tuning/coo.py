"""Rules that split a COO matrix's entries among warps (kernels coo_segmented and coo_atomic).

Both kernels give every warp a contiguous run of entries whose length is a multiple of
``WARP_SIZE`` (one coalesced load of ``row``, ``col`` and ``data`` per step), only the last
run of the matrix being cut short by the entry count.
"""

from __future__ import annotations

import math
import numbers

from ..kernels.device import WARP_SIZE  # the kernels read one entry per lane per step


def units(nnz: int) -> int:
    """Warp-sized groups of entries: ``ceil(nnz / WARP_SIZE)``."""
    return -(-int(nnz) // WARP_SIZE)


def resident_warps(sm_count: int, blocks_per_sm: int, block_threads: int) -> int:
    """Warps the device runs at once: ``sm_count * blocks_per_sm * block_threads / WARP_SIZE`` (at least 1).

    ``blocks_per_sm`` is the kernel's occupancy (its registers limit it below
    ``max_threads_per_sm / block_threads`` when they are many).
    """
    return max(1, int(sm_count) * int(blocks_per_sm) * (int(block_threads) // WARP_SIZE))


def segmented_partition(nnz: int, resident: int) -> tuple[int, int]:
    """``(interval, warps)`` for coo_segmented (Bell & Garland §4.4).

    One wave of warps fills every SM: the entries are cut into intervals of
    ``WARP_SIZE * ceil(units / resident)`` entries, one per warp, so
    ``warps = ceil(nnz / interval) <= resident``.  ``(0, 0)`` without entries.
    """
    u = units(nnz)
    if u == 0:
        return 0, 0
    interval = WARP_SIZE * -(-u // max(1, int(resident)))
    return interval, -(-int(nnz) // interval)


def atomic_warps(nnz: int, omega: float, sm_count: int, cores_per_sm: int) -> int:
    """Warps of coo_atomic (Flegar & Anzt §3.2): ``ceil(omega * SMs * cores / WARP_SIZE)``.

    ``omega`` threads per core, capped by the number of warp-sized groups of entries so
    that every warp has at least one; 0 without entries.
    """
    omega = check_omega(omega)
    u = units(nnz)
    if u == 0:
        return 0
    return max(1, min(u, math.ceil(omega * int(sm_count) * int(cores_per_sm) / WARP_SIZE)))


def atomic_chunks(nnz: int, warps: int) -> list[tuple[int, int]]:
    """``[(begin, end), ...]``: the entries of each coo_atomic warp (the kernel's own arithmetic).

    ``units`` groups shared as evenly as possible: the first ``units % warps`` warps take
    ``units // warps + 1`` groups, the others ``units // warps``, so chunk sizes are multiples
    of ``WARP_SIZE`` differing by at most one group (the last chunk ends at ``nnz``).
    """
    u = units(nnz)
    q, extra = divmod(u, warps)
    out = []
    for w in range(warps):
        first = w * q + min(w, extra)
        stop = WARP_SIZE * (first + q + (w < extra))
        out.append((WARP_SIZE * first, min(stop, int(nnz))))
    return out


def check_omega(omega) -> float:
    """``omega`` as a positive finite number; ``ValueError`` otherwise."""
    if isinstance(omega, bool) or not isinstance(omega, numbers.Real) or not (
            math.isfinite(omega) and omega > 0):
        raise ValueError(f"coo_atomic: omega must be a positive number, got {omega!r}")
    return float(omega)
