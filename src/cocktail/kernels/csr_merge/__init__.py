"""csr_merge: merge-path load-balanced CSR (Merrill & Garland, SC16), deterministic carry fix-up."""

from __future__ import annotations

import numpy as np

from ...precision import compute_dtype
from ..device import capped_grid
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import integer_or_none, row_kernel
from ..row_rules import long_tailed
from .rules import MERGE_ITEMS_PER_THREAD
from ..spec import EVERY_PRECISION, Sampled, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"csr_merge<{v}, {i}>", f"csr_merge_fixup<{v}, {i}>"]


def merge_grid(m: int, nnz: int, items: int, block: int) -> tuple[int, int]:
    """(threads, blocks) covering the ``m + nnz`` merge items, ``items`` per thread, ``block`` threads per block."""
    threads = max(1, -(-(m + nnz) // items))
    return threads, -(-threads // block)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """The merge-path pass, then (with more than one block) the fix-up of rows spanning blocks.

    The per-block carry buffers are allocated here, once.  A grid past the device limit is capped:
    the kernel's blocks loop over the merge blocks.
    """
    import cupy

    m, nnz = fmt.shape[0], int(fmt.nnz)
    block, items = config["block_threads"], config["items_per_thread"]
    _, blocks = merge_grid(m, nnz, items, block)
    carry_row, carry_val = cupy.empty(blocks, dtype=fmt.index_dtype), cupy.empty(blocks, dtype=compute_dtype(fmt.dtype))
    main_expr, fixup_expr = _expressions(*type_names(fmt))
    I = fmt.index_dtype.type
    main = Launch(SPEC.compiled(main_expr, config["ldg"], props.id), capped_grid(blocks, props), block,
                  (I(m), I(nnz), np.int64(items), fmt.indptr, fmt.indices, fmt.data, X, Y, ALPHA,
                   beta_arg(fmt, accumulate), carry_row, carry_val),
                  fmt.dtype, shared_mem=(block + 1) * fmt.index_dtype.itemsize)
    if blocks == 1:  # the last block's carry is always empty (row m)
        return [main]
    fixup_fn = SPEC.compiled(fixup_expr, config["ldg"], props.id)
    fixup = Launch.striding(fixup_fn, blocks, block, props, (np.int64(blocks), I(m), carry_row, carry_val, Y, ALPHA),
                            fmt.dtype)
    return [main, fixup]


def configure(spec, fmt, p, props, rules) -> dict:
    """Merge items per thread: given, else the rule's."""
    k = p["items_per_thread"]
    if k is None:
        k = MERGE_ITEMS_PER_THREAD
    k = integer_or_none(k)
    if k is None or k < 1:
        raise ValueError(f"csr_merge: items_per_thread must be a positive integer or None, "
                         f"got {p['items_per_thread']!r}")
    return {**row_kernel(spec, fmt, p, props, rules), "items_per_thread": k}


SPEC = own_kernel("csr_merge", ("csr",),
                  "merge-path load balancing over row ends and nonzeros, deterministic carry fix-up",
                  _expressions, bind, configure, params={"items_per_thread": None},
                  profile=(Sampled("csr_merge", "rows", long_rows=True),),
                  precisions=EVERY_PRECISION, order=30, colour="#7cb342", walk="balanced",
                  default=True, precedence=3, default_when=long_tailed)
