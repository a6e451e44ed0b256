"""csr_vector: a group of threads per row, shuffle-reduced (Bell & Garland §4.3, Baskaran & Bordawekar §4)."""

from __future__ import annotations

from ..tuning import kernels as rules
from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name

#: Threads per row the source is instantiated for.
THREADS_PER_ROW = (2, 4, 8, 16, 32)


def _expressions(v: str, i: str) -> list[str]:
    return [_expression(v, i, t, a) for t in THREADS_PER_ROW for a in (True, False)]


def _expression(v: str, i: str, threads: int, aligned: bool) -> str:
    return f"csr_vector<{v}, {i}, {threads}, {'true' if aligned else 'false'}>"


def threads_per_row(plan) -> int:
    """The plan's threads per row: its ``threads_per_row`` parameter, else the tuning rule on the mean row length.

    The rule's answer is cached in ``plan.workspace``; a value outside ``THREADS_PER_ROW`` is a ``ValueError``.
    """
    t = plan.params["threads_per_row"]
    if t is None:
        if "threads_per_row" not in plan.workspace:
            fmt = plan.storage
            mean = fmt.nnz / fmt.shape[0] if fmt.shape[0] else 0.0
            plan.workspace["threads_per_row"] = rules.csr_vector_threads(mean)
        t = plan.workspace["threads_per_row"]
    if t not in THREADS_PER_ROW:
        raise ValueError(f"csr_vector: threads_per_row must be one of {THREADS_PER_ROW} or None, got {t!r}")
    return int(t)


def block_threads(plan, props) -> int:
    """Threads per block: the parameter or the tuning rule; whole warps, within the device limit."""
    block = plan.params["block_threads"] or rules.block_threads()
    if block % props.warp_size or not 0 < block <= props.max_threads_per_block:
        raise ValueError(f"{plan.spec.name}: block_threads must be a multiple of {props.warp_size} "
                         f"up to {props.max_threads_per_block}, got {block}")
    return block


def launch(plan, x, y, alpha, beta) -> None:
    """A grid-stride pass over rows, ``threads_per_row`` lanes each."""
    fmt = plan.storage
    m = fmt.shape[0]
    if m == 0:
        return
    t = threads_per_row(plan)
    props = device.current()
    block = block_threads(plan, props)
    grid = device.grid_for(m * t, block, props)
    expr = _expression(value_type_name(fmt.dtype), index_type_name(fmt.index_dtype), t, bool(plan.params["aligned"]))
    fn = source.function(SPEC, expr, plan.params["ldg"])
    fn((grid,), (block,), (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, fmt.data, x, y, alpha, beta))


SPEC = KernelSpec(
    name="csr_vector",
    formats=("csr",),
    source="csr_vector",
    expressions=_expressions,
    launch=launch,
    defaults={"threads_per_row": None, "aligned": True, "ldg": True, "block_threads": None},
    description="a group of 2-32 threads per row, shuffle reduction, optionally aligned to the group width",
)
