"""csr_stream: CSR in equal warp items of ``32 * items_per_lane`` nonzeros, products staged in
shared memory (after CSR-Adaptive, with merge-based CSR's row splitting).

The first row ending in each item is found once, when the matrix is bound.  Deterministic: the
shares of a row that spans items are added in item order by the warp that finishes last.
"""

from __future__ import annotations

import numpy as np

from .device import WARP_SIZE, blocks_per_sm
from .launch import ALPHA, X, Y, Launch, beta_arg
from .spec import KernelSpec, type_names

#: Nonzeros per lane of an item that the source is instantiated for.
ITEMS_PER_LANE = (4, 8, 16)


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, k, s) for k in ITEMS_PER_LANE for s in (True, False)]


def expression(v: str, i: str, items: int, stream: bool) -> str:
    """The instantiation for ``items`` nonzeros per lane, with or without evict-first matrix loads."""
    return f"csr_stream<{v}, {i}, {items}, {'true' if stream else 'false'}>"


def item_rows(indptr, capacity: int):
    """``item_row`` (``n_items + 1`` entries, the dtype of ``indptr``): the first row that ends in each
    item of ``capacity`` nonzeros (0 for the first item, which also takes the empty rows in front),
    then ``m``.  At least one item, also without nonzeros.  Computed with the array module of ``indptr``.
    """
    from .._xp import get_xp

    xp = get_xp(indptr)
    ptr = indptr.astype(xp.int64)
    m, nnz = int(ptr.shape[0]) - 1, int(ptr[-1])
    n_items = max(1, -(-nnz // capacity))
    starts = xp.arange(n_items, dtype=xp.int64) * capacity
    rows = xp.searchsorted(ptr[1:], starts, side="right")
    rows[0] = 0
    return xp.concatenate([rows, xp.asarray([m], dtype=xp.int64)]).astype(indptr.dtype)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid of resident warps looping over the items; the item rows, the row shares and the
    tickets are allocated here, once."""
    import cupy

    k, block = config["items_per_lane"], config["block_threads"]
    capacity = WARP_SIZE * k
    item_row = item_rows(fmt.indptr, capacity)
    n_items = int(item_row.shape[0]) - 1
    head = cupy.empty(n_items, dtype=fmt.dtype)
    tail = cupy.empty(n_items, dtype=fmt.dtype)
    ticket = cupy.zeros(n_items, dtype=np.uint32)
    warps = block // WARP_SIZE
    I = fmt.index_dtype.type
    fn = SPEC.compiled(expression(*type_names(fmt), k, config["stream"]), config["ldg"], props.id)
    args = (np.int64(n_items), I(fmt.shape[0]), np.int64(fmt.nnz), item_row, fmt.indptr, fmt.indices, fmt.data,
            X, Y, ALPHA, beta_arg(fmt, accumulate), head, tail, ticket)
    shared = warps * capacity * fmt.dtype.itemsize
    resident = props.sm_count * blocks_per_sm(fn, block, shared)  # the warps loop over the items
    return [Launch(fn, min(-(-n_items // warps), resident), block, args, fmt.dtype, shared_mem=shared)]


SPEC = KernelSpec(
    name="csr_stream",
    formats=("csr",),
    source="csr_stream",
    expressions=_expressions,
    bind=bind,
    defaults={"items_per_lane": None, "stream": True, "ldg": True, "block_threads": None},
    description="equal warp items of 32*items_per_lane nonzeros, products staged in shared memory, rows split across items",
    deterministic=True,
)
