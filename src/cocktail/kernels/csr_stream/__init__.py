"""csr_stream: CSR in balanced warp items with products staged in shared memory (after CSR-Adaptive).

The items are cut once, when the matrix is bound: runs of rows of at most ``32 * items_per_lane``
nonzeros, rows longer than ``own_row`` (a quarter of an item by default) in items of their own,
and rows longer than an item in pieces of that many.  Deterministic: the pieces of a long row are
added in a fixed order by the warp that takes the row's last ticket.  The piece sums and tickets
belong to the bound matrix, so two products of one matrix must not run at the same time on two
streams (as with csr_merge's carries); a ticket returns to zero by itself after every product.
"""

from __future__ import annotations

import numpy as np

from ...precision import compute_dtype
from ..device import WARP_SIZE, capped_grid
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import flag, row_kernel
from ...formats.csr_family import CHUNK_SHIFT
from ..row_rules import long_tailed
from .rules import STREAM_ITEMS_PER_LANE, partition_shape, staged_block_threads
from ..spec import (CSR_FORMATS, CSR_VALUES, EVERY_PRECISION, STORED_VALUES, Sampled, cpp_bool, csr_columns,
                   csr_values, own_kernel, type_names)

#: Nonzeros per lane of an item that the source is instantiated for.
ITEMS_PER_LANE = (4, 8, 16)
#: The (values, short shift) pairs instantiated: every value mode with full columns, and the formats with a
#: ``short_columns`` parameter (csr_pattern, csr_vi; csr has none) with short ones.
VALUES_AND_COLUMNS = tuple((mode, 0) for mode in CSR_VALUES) + tuple((mode, CHUNK_SHIFT) for mode in CSR_VALUES
                                                                     if mode != STORED_VALUES)
#: Nonzeros per lane of the items that the device profile samples.
SAMPLED_ITEMS = (8, 16)


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, k, s, mode, shift) for k in ITEMS_PER_LANE for s in (True, False)
            for mode, shift in VALUES_AND_COLUMNS]


def expression(v: str, i: str, items: int, stream: bool, values: int = STORED_VALUES, short_shift: int = 0) -> str:
    """The instantiation for ``items`` nonzeros per lane, with or without evict-first matrix loads, of a csr,
    csr_pattern or csr_vi matrix (``values``: :func:`~.spec.csr_values`' mode) with full columns or short ones
    (``short_shift``: :func:`~.spec.csr_columns`' shift)."""
    return f"csr_stream<{v}, {i}, {items}, {cpp_bool(stream)}, {values}, {short_shift}>"


def partition(indptr, capacity: int, own_row: int, rows_per_item: int):
    """``(item_row, item_nz)`` of the items, each with a sentinel ``(m, nnz)`` at the end.

    A row with more than ``own_row`` nonzeros is an item of its own, cut into pieces of
    ``capacity`` when it is longer; the other rows are cut into runs that start at the first row
    at or past every ``capacity - own_row`` nonzeros and every ``rows_per_item`` rows, so a run
    holds at most ``capacity`` nonzeros and ``rows_per_item`` rows.  Computed with the array
    module of ``indptr``; the arrays have its dtype.
    """
    from ...arrays import get_xp

    xp = get_xp(indptr)
    if xp is not np:
        return _partition_on_device(indptr, capacity, own_row, rows_per_item)
    ptr = indptr.astype(xp.int64)
    m, nnz = int(ptr.shape[0]) - 1, int(ptr[-1])
    lengths = ptr[1:] - ptr[:-1]
    step = capacity - own_row
    long_rows = xp.nonzero(lengths > own_row)[0]
    starts = xp.concatenate([
        xp.searchsorted(ptr, xp.arange(0, nnz, step, dtype=xp.int64), side="left"),
        xp.arange(0, m, rows_per_item, dtype=xp.int64),
        long_rows, long_rows + 1,
    ])
    starts = xp.unique(starts[starts < m])
    first_len = lengths[starts]
    pieces = xp.where(first_len > own_row, xp.maximum((first_len + capacity - 1) // capacity, 1), 1)
    item_row = xp.repeat(starts, pieces)
    group_first = xp.cumsum(pieces) - pieces  # item index of each run's first item
    piece = xp.arange(item_row.shape[0], dtype=xp.int64) - xp.repeat(group_first, pieces)
    item_nz = ptr[item_row] + piece * capacity
    item_row = xp.concatenate([item_row, xp.asarray([m], dtype=xp.int64)])
    item_nz = xp.concatenate([item_nz, xp.asarray([nnz], dtype=xp.int64)])
    return item_row.astype(indptr.dtype), item_nz.astype(indptr.dtype)


def _partition_on_device(indptr, capacity: int, own_row: int, rows_per_item: int):
    """:func:`partition` of device row pointers: each row's pieces, their inclusive scan, the items written (two
    launches of stream_partition.cu and one synchronisation, for the number of items)."""
    import cupy

    from .. import device, source

    if capacity <= own_row or rows_per_item < 1:
        raise ValueError(f"csr_stream: items of {capacity} nonzeros need own_row below them and rows_per_item >= 1, "
                         f"got own_row={own_row}, rows_per_item={rows_per_item}")
    props = device.current()
    index = "int" if indptr.dtype == np.int32 else "long long"
    m = int(indptr.shape[0]) - 1
    sizes = (np.int64(m), np.int64(capacity))
    pieces = cupy.empty(m + 1, dtype=np.int64)
    fn = source.helper("stream_partition", f"stream_pieces<{index}>", props.id)
    fn((device.grid_for(m + 1, 256, props, fn),), (256,), (indptr, *sizes, np.int64(own_row), np.int64(rows_per_item),
                                                            pieces))
    ends = cupy.cumsum(pieces)
    items = int(ends[-1])  # the one synchronisation
    item_row, item_nz = cupy.empty(items, dtype=indptr.dtype), cupy.empty(items, dtype=indptr.dtype)
    fn = source.helper("stream_partition", f"stream_items<{index}>", props.id)
    fn((device.grid_for(m + 1, 256, props, fn),), (256,), (indptr, *sizes, pieces, ends, item_row, item_nz))
    return item_row, item_nz


def stream_grid(n_items: int, block: int, props) -> int:
    """Blocks of ``block`` threads for one warp per item, capped at the device's grid limit (the kernel's
    warps loop over the items, so a capped grid still covers them all)."""
    return capped_grid(-(-int(n_items) // (block // WARP_SIZE)), props)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One warp per item; the items, the piece sums and the tickets are allocated here, once."""
    import cupy

    k, block = config["items_per_lane"], config["block_threads"]
    capacity = WARP_SIZE * k
    item_row, item_nz = partition(fmt.indptr, capacity, config["own_row"], config["rows_per_item"])
    n_items = int(item_row.shape[0]) - 1
    partial = cupy.empty(max(n_items, 1), dtype=compute_dtype(fmt.dtype))
    ticket = cupy.zeros(max(n_items, 1), dtype=np.uint32)
    warps = block // WARP_SIZE
    values, codes, mode = csr_values(fmt)
    indices, column_base, shift = csr_columns(fmt)
    fn = SPEC.compiled(expression(*type_names(fmt), k, config["stream"], mode, shift), config["ldg"], props.id)
    args = (np.int64(n_items), item_row, item_nz, fmt.indptr, indices, values, codes, column_base, X, Y, ALPHA,
            beta_arg(fmt, accumulate), partial, ticket)
    return [Launch(fn, stream_grid(n_items, block, props), block, args, fmt.dtype,
                   shared_mem=warps * capacity * compute_dtype(fmt.dtype).itemsize)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Nonzeros per lane of an item: given, else the rule's; the staged products must fit in shared memory."""
    k = STREAM_ITEMS_PER_LANE if p["items_per_lane"] is None else p["items_per_lane"]
    if isinstance(k, bool) or k not in ITEMS_PER_LANE:
        raise ValueError(f"csr_stream: items_per_lane must be one of {ITEMS_PER_LANE} or None, "
                         f"got {p['items_per_lane']!r}")
    config = {**row_kernel(spec, fmt, p, props, rules), "items_per_lane": int(k),
              "stream": flag(spec.name, "stream", p["stream"])}
    per_thread = int(k) * compute_dtype(fmt.dtype).itemsize
    if p["block_threads"] is None:  # the rule's block, smaller where its staging would not fit
        config["block_threads"] = staged_block_threads(config["block_threads"], per_thread,
                                                             props.shared_memory_per_block)
    shared = config["block_threads"] * per_thread
    if shared > props.shared_memory_per_block:
        raise ValueError(f"csr_stream: block_threads={config['block_threads']} with items_per_lane={k} stages "
                         f"{shared} bytes of products, more than the {props.shared_memory_per_block} bytes of shared "
                         "memory a block may use; choose fewer threads or items")
    own_row, rows_per_item = partition_shape(k)
    return {**config, "own_row": own_row, "rows_per_item": rows_per_item}


SPEC = own_kernel("csr_stream", CSR_FORMATS,
                  "balanced warp items of up to 32*items_per_lane nonzeros, products staged in shared memory",
                  _expressions, bind, configure, params={"items_per_lane": None, "stream": True},
                  profile=tuple(Sampled(f"csr_stream(k={k})", "rows", kernel_params={"items_per_lane": k},
                                        long_rows=True) for k in SAMPLED_ITEMS),
                  precisions=EVERY_PRECISION, layouts=("short_columns",), order=40, colour="#00897b",
                  walk="balanced", default=True, precedence=2, default_when=long_tailed)
