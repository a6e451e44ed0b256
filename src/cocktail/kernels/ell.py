"""ell: one thread per row over column-major ELLPACK (Bell & Garland §4.2)."""

from __future__ import annotations

import numpy as np

from ..tuning import kernels as rules
from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name


def _expressions(v: str, i: str) -> list[str]:
    return [f"ell<{v}, {i}>"]


def launch(plan, x, y, alpha, beta) -> None:
    """One grid-stride pass over the rows; each row stops at its first padding slot."""
    fmt = plan.storage
    m = fmt.shape[0]
    if m == 0:
        return
    block = plan.params["block_threads"] or rules.block_threads()
    grid = device.grid_for(m, block, device.current())
    fn = source.function(SPEC, _expressions(value_type_name(fmt.dtype), index_type_name(fmt.index_dtype))[0],
                         plan.params["ldg"])
    I = fmt.index_dtype.type
    fn((grid,), (block,), (I(m), I(fmt.width), np.int64(fmt.stride), fmt.col, fmt.data, x, y, alpha, beta))


SPEC = KernelSpec(
    name="ell",
    formats=("ell",),
    source="ell",
    expressions=_expressions,
    launch=launch,
    defaults={"ldg": True, "block_threads": None},
    description="one thread per row, column-major slots",
)
