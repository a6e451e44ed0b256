"""coo_segmented: warp segmented reduction over row-sorted COO (Bell & Garland §4.4).

Deterministic: every row is written by one warp or by the fix-up kernel, never by atomics.
Works on any COO object, including the COO parts of HYB and PKT (it reads only ``row``,
``col``, ``data`` and ``shape``).
"""

from __future__ import annotations

import numpy as np

from ..tuning import coo as coo_rules
from ..tuning import kernels as rules
from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name

#: Workspace key of the launch state (functions, partition, carry buffers) of the current device.
_STATE = "coo_segmented"


def _expressions(v: str, i: str) -> list[str]:
    return [f"coo_segmented<{v}, {i}>", f"coo_segmented_fixup<{v}, {i}>"]


def scale_y(y, beta) -> None:
    """``y = beta * y`` on the current stream before a kernel adds into y (beta == 0 never reads y)."""
    if beta == 0:
        y.fill(0)
    elif beta != 1:
        y *= beta


def warp_block_threads(kernel: str, params: dict, props) -> int:
    """Threads per block of a warp-per-task kernel: ``block_threads`` or the tuning rule, checked."""
    block = params["block_threads"]
    if block is None:
        block = rules.block_threads()
    return coo_rules.check_block_threads(kernel, block, props.max_threads_per_block)


def blocks_per_sm(fn, block: int) -> int:
    """Blocks of ``block`` threads of compiled kernel ``fn`` one SM holds (the driver's occupancy)."""
    from cupy.cuda import driver

    return max(1, int(driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, block, 0)))


def _state(plan, nnz: int) -> dict:
    """Launch state computed once per plan and device: functions, block, partition, carry buffers."""
    import cupy

    dev = cupy.cuda.Device().id
    state = plan.workspace.get(_STATE)
    if state is not None and state["device"] == dev:
        return state
    fmt = plan.storage
    props = device.current()
    block = warp_block_threads(SPEC.name, plan.params, props)
    v, i = value_type_name(fmt.dtype), index_type_name(fmt.index_dtype)
    main, fixup = (source.function(SPEC, e, plan.params["ldg"]) for e in _expressions(v, i))
    resident = coo_rules.resident_warps(props.sm_count, blocks_per_sm(main, block), block)
    interval, warps = coo_rules.segmented_partition(nnz, resident)
    state = {
        "device": dev,
        "main": main,
        "fixup": fixup,
        "block": block,
        "grid": -(-warps * coo_rules.WARP_SIZE // block),
        "interval": interval,
        "warps": warps,
        "carry_row": cupy.empty(warps, dtype=fmt.index_dtype),
        "carry_val": cupy.empty(warps, dtype=fmt.dtype),
    }
    plan.workspace[_STATE] = state
    return state


def launch(plan, x, y, alpha, beta) -> None:
    """Scale y by beta, one warp per interval of entries, then the fix-up of the carried rows."""
    fmt = plan.storage
    scale_y(y, beta)
    nnz = int(fmt.row.shape[0])
    if nnz == 0 or fmt.shape[0] == 0:
        return
    s = _state(plan, nnz)
    grid, block = (s["grid"],), (s["block"],)
    s["main"](grid, block, (np.int64(nnz), np.int64(s["interval"]), fmt.row, fmt.col, fmt.data, x, y, alpha,
                            s["carry_row"], s["carry_val"]))
    if s["warps"] > 1:  # a single interval ends at nnz and never carries
        s["fixup"](grid, block, (np.int64(s["warps"]), s["carry_row"], s["carry_val"], y, alpha))


SPEC = KernelSpec(
    name="coo_segmented",
    formats=("coo",),
    source="coo_segmented",
    expressions=_expressions,
    launch=launch,
    defaults={"ldg": True, "block_threads": None},
    description="warp segmented reduction over intervals, carries fixed up in warp order",
)
