"""dia: one thread per row over the diagonal format (Bell & Garland §4.1)."""

from __future__ import annotations

import numpy as np

from ..tuning import kernels as rules
from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name


def _expressions(v: str, i: str) -> list[str]:
    return [f"dia<{v}, {i}>"]


def launch(plan, x, y, alpha, beta) -> None:
    """One grid-stride pass over the rows; each block stages ``block_threads`` offsets at a time."""
    fmt = plan.storage
    m, n = fmt.shape
    if m == 0:
        return
    block = plan.params["block_threads"] or rules.block_threads()
    grid = device.grid_for(m, block, device.current())
    fn = source.function(SPEC, _expressions(value_type_name(fmt.dtype), index_type_name(fmt.index_dtype))[0],
                         plan.params["ldg"])
    I = fmt.index_dtype.type
    ndiag = int(fmt.offsets.shape[0])
    fn((grid,), (block,),
       (I(m), I(n), I(ndiag), np.int64(fmt.stride), fmt.offsets, fmt.data, x, y, alpha, beta),
       shared_mem=block * fmt.index_dtype.itemsize)


SPEC = KernelSpec(
    name="dia",
    formats=("dia",),
    source="dia",
    expressions=_expressions,
    launch=launch,
    defaults={"ldg": True, "block_threads": None},
    description="one thread per row, diagonal offsets staged in shared memory",
)
