"""csr_merge: merge-path load-balanced CSR (Merrill & Garland, SC16), deterministic carry fix-up."""

from __future__ import annotations

import numpy as np

from ..tuning import kernels as rules
from . import device, source
from .csr_vector import block_threads
from .spec import KernelSpec, index_type_name, value_type_name


def _expressions(v: str, i: str) -> list[str]:
    return [f"csr_merge<{v}, {i}>", f"csr_merge_fixup<{v}, {i}>"]


def items_per_thread(plan) -> int:
    """Merge items (row ends + nonzeros) per thread: the parameter, else the tuning rule; a positive integer."""
    k = plan.params["items_per_thread"]
    if k is None:
        k = rules.MERGE_ITEMS_PER_THREAD
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"csr_merge: items_per_thread must be a positive integer or None, got {k!r}")
    return int(k)


def merge_grid(m: int, nnz: int, items: int, block: int) -> tuple[int, int]:
    """(threads, blocks) covering the ``m + nnz`` merge items, ``items`` per thread, ``block`` threads per block."""
    threads = max(1, -(-(m + nnz) // items))
    return threads, -(-threads // block)


def _carries(plan, blocks: int):
    """The per-block carry buffers (row, partial sum), allocated on the first product."""
    import cupy

    ws = plan.workspace.get("carries")
    if ws is None or ws[0].shape[0] != blocks:
        fmt = plan.storage
        ws = (cupy.empty(blocks, dtype=fmt.index_dtype), cupy.empty(blocks, dtype=fmt.dtype))
        plan.workspace["carries"] = ws
    return ws


def launch(plan, x, y, alpha, beta) -> None:
    """The merge-path pass, then (with more than one block) the fix-up of rows spanning blocks."""
    fmt = plan.storage
    m = fmt.shape[0]
    if m == 0:
        return
    nnz = int(fmt.nnz)
    props = device.current()
    block = block_threads(plan, props)
    items = items_per_thread(plan)
    _, blocks = merge_grid(m, nnz, items, block)
    carry_row, carry_val = _carries(plan, blocks)
    v, i = value_type_name(fmt.dtype), index_type_name(fmt.index_dtype)
    I = fmt.index_dtype.type
    main = source.function(SPEC, f"csr_merge<{v}, {i}>", plan.params["ldg"])
    main((blocks,), (block,),
         (I(m), I(nnz), np.int64(items), fmt.indptr, fmt.indices, fmt.data, x, y, alpha, beta, carry_row, carry_val),
         shared_mem=(block + 1) * fmt.index_dtype.itemsize)
    if blocks > 1:  # the last block's carry is always empty (row m)
        fixup = source.function(SPEC, f"csr_merge_fixup<{v}, {i}>", plan.params["ldg"])
        fixup((device.grid_for(blocks, block, props),), (block,),
              (np.int64(blocks), I(m), carry_row, carry_val, y, alpha))


SPEC = KernelSpec(
    name="csr_merge",
    formats=("csr",),
    source="csr_merge",
    expressions=_expressions,
    launch=launch,
    defaults={"items_per_thread": None, "block_threads": None, "ldg": True},
    description="merge-path load balancing over row ends and nonzeros, deterministic carry fix-up",
    deterministic=True,
)
