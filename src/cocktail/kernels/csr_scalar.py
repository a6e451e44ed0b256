"""csr_scalar: one thread per row (Bell & Garland §4.3)."""

from __future__ import annotations

from ..tuning import kernels as rules
from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name


def _expressions(v: str, i: str) -> list[str]:
    return [f"csr_scalar<{v}, {i}>"]


def launch(plan, x, y, alpha, beta) -> None:
    """One grid-stride pass over the rows."""
    fmt = plan.storage
    m = fmt.shape[0]
    if m == 0:
        return
    block = plan.params["block_threads"] or rules.block_threads()
    grid = device.grid_for(m, block, device.current())
    fn = source.function(SPEC, _expressions(value_type_name(fmt.dtype), index_type_name(fmt.index_dtype))[0],
                         plan.params["ldg"])
    fn((grid,), (block,), (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, fmt.data, x, y, alpha, beta))


SPEC = KernelSpec(
    name="csr_scalar",
    formats=("csr",),
    source="csr_scalar",
    expressions=_expressions,
    launch=launch,
    defaults={"ldg": True, "block_threads": None},
    description="one thread per row",
)
