"""coo_atomic: balanced warp chunks with atomic row updates (Flegar & Anzt 2017, §3).

Not deterministic: rows shared by several warps are summed by floating-point atomics.
Works on any COO object, including the COO parts of HYB and PKT (it reads only ``row``,
``col``, ``data`` and ``shape``).
"""

from __future__ import annotations

import numpy as np

from ..tuning import coo as coo_rules
from ..tuning import kernels as rules
from . import device, source
from .coo_segmented import scale_y, warp_block_threads
from .spec import KernelSpec, index_type_name, value_type_name

#: Workspace key of the launch state of the current device.
_STATE = "coo_atomic"


def _expressions(v: str, i: str) -> list[str]:
    return [f"coo_atomic<{v}, {i}>"]


def warps_for(nnz: int, omega, props) -> int:
    """Warps of one launch: ``omega`` (None: Flegar & Anzt's rule by nnz) threads per core, capped by the chunks."""
    if omega is None:
        omega = rules.coo_omega(nnz)
    return coo_rules.atomic_warps(nnz, omega, props.sm_count, rules.cores_per_sm(props.compute_capability))


def _state(plan, nnz: int) -> dict:
    """Launch state computed once per plan and device: function, warps, block and grid."""
    import cupy

    dev = cupy.cuda.Device().id
    state = plan.workspace.get(_STATE)
    if state is not None and state["device"] == dev:
        return state
    fmt = plan.storage
    props = device.current()
    warps = warps_for(nnz, plan.params["omega"], props)
    block = warp_block_threads(SPEC.name, plan.params, props)
    state = {
        "device": dev,
        "function": source.function(SPEC, _expressions(value_type_name(fmt.dtype),
                                                       index_type_name(fmt.index_dtype))[0], plan.params["ldg"]),
        "warps": warps,
        "block": block,
        "grid": -(-warps * coo_rules.WARP_SIZE // block),
    }
    plan.workspace[_STATE] = state
    return state


def launch(plan, x, y, alpha, beta) -> None:
    """Scale y by beta, then one warp per chunk of entries adding row sums with atomics."""
    fmt = plan.storage
    scale_y(y, beta)
    nnz = int(fmt.row.shape[0])
    if nnz == 0 or fmt.shape[0] == 0:
        return
    s = _state(plan, nnz)
    s["function"]((s["grid"],), (s["block"],),
                  (np.int64(nnz), np.int64(s["warps"]), fmt.row, fmt.col, fmt.data, x, y, alpha))


SPEC = KernelSpec(
    name="coo_atomic",
    formats=("coo",),
    source="coo_atomic",
    expressions=_expressions,
    launch=launch,
    defaults={"omega": None, "ldg": True, "block_threads": None},
    deterministic=False,
    description="equal warp chunks, segmented scan, one atomicAdd per row segment",
)
