"""csr_spmm_merge: CSR times a block of k vectors with csr_merge's merge-path balance, each stored entry
read once per tile of columns, rows spanning shares fixed up deterministically.

A block kernel (``BLOCK_SPEC``) extending the load-balanced CSR kernels (csr_merge, csr_stream): a
matrix bound to one of them keeps its balance for a block.  Binding (once per
:class:`~.block_operands.BlockOperands`) computes where each share of the merge path starts and
lists the runs of shares carrying one row, so a product runs no search and allocates nothing.
"""

from __future__ import annotations

import numpy as np

from .config import integer_or_none
from .csr_spmm import BLOCK_PARAMS, COLUMNS_PER_LANE, LANES, block_shape, expression, launch_settings
from .device import capped_grid, grid_for
from .launch import ALPHA, X, Y, Launch, beta_arg
from .spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return ([expression("csr_spmm_merge", v, i, t, c) for t in LANES for c in COLUMNS_PER_LANE]
            + [f"csr_spmm_merge_fixup<{v}, {flag}>" for flag in ("false", "true")])


def shares_of(fmt, items: int):
    """``share_row`` (row ends before each share of ``items`` merge items, and ``m`` after the last) and
    the runs of shares that carry part of one row: ``(row, first share, count)``, as device arrays."""
    import cupy

    m, nnz = fmt.shape[0], int(fmt.nnz)
    total = m + nnz
    shares = -(-total // items)
    d = cupy.minimum(cupy.arange(shares + 1, dtype=cupy.int64) * items, total)
    indptr = fmt.indptr.astype(cupy.int64, copy=False)
    row_ends = cupy.arange(m, dtype=cupy.int64) + indptr[1:]  # a row end's place on the merge path
    share_row = cupy.searchsorted(row_ends, d, side="left")
    carry_row, consumed = share_row[1:], d[1:] - share_row[1:]
    carries = (carry_row < m) & (consumed > indptr[cupy.minimum(carry_row, m)])
    carrying = cupy.flatnonzero(carries)
    rows = carry_row[carrying]
    starts_run = cupy.ones(rows.shape, dtype=bool)
    starts_run[1:] = (rows[1:] != rows[:-1]) | (carrying[1:] != carrying[:-1] + 1)
    starts = cupy.flatnonzero(starts_run)
    count = cupy.diff(cupy.append(starts, rows.shape[0]))
    return share_row.astype(fmt.index_dtype), (rows[starts], carrying[starts], count)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """The shares' pass, then the fix-up of the runs of carries: short runs a thread per (run, column),
    long ones a block per run."""
    import cupy

    m, nnz = fmt.shape[0], int(fmt.nnz)
    items, t, c, block = config["items_per_share"], config["lanes"], config["columns_per_lane"], config["block_threads"]
    operands = config["operands"]
    share_row, (run_row, run_first, run_count) = shares_of(fmt, items)
    shares = int(share_row.shape[0]) - 1
    carry = cupy.empty(shares * operands.k, dtype=fmt.dtype)
    v, i = type_names(fmt)
    tiles = -(-operands.k // (t * c))
    main = Launch(BLOCK_SPEC.compiled(expression("csr_spmm_merge", v, i, t, c), config["ldg"], props.id),
                  grid_for(shares * tiles * t, block, props), block,
                  (np.int64(shares), np.int64(items), np.int64(m + nnz), share_row, *operands.args(),
                   fmt.indptr, fmt.indices, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate), carry),
                  fmt.dtype)
    launches = [main]
    long_run = run_count > config["short_run"]
    for is_long in (False, True):
        chosen = cupy.flatnonzero(long_run == is_long)
        runs = int(chosen.shape[0])
        if not runs:
            continue
        fn = BLOCK_SPEC.compiled(f"csr_spmm_merge_fixup<{v}, {'true' if is_long else 'false'}>", config["ldg"],
                                 props.id)
        grid = capped_grid(runs, props) if is_long else grid_for(runs * operands.k, block, props)
        launches.append(Launch(fn, grid, block,
                               (np.int64(runs), run_row[chosen], run_first[chosen], run_count[chosen], carry,
                                *operands.args(), Y, ALPHA), fmt.dtype))
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """The block shape (the rule ``spmm_merge_shape``), read path and block size; merge items per share
    and the longest run of carries fixed up a thread per column: given, else the rules'."""
    out = {**launch_settings(spec, p, props, rules), **block_shape(spec, p, rules.spmm_merge_shape)}
    for name, default in (("items_per_share", rules.SPMM_MERGE_ITEMS), ("short_run", rules.SPMM_MERGE_SHORT_RUN)):
        value = integer_or_none(default if p[name] is None else p[name])
        if value is None or value < 1:
            raise ValueError(f"{spec.name}: {name} must be a positive integer or None, got {p[name]!r}")
        out[name] = value
    return out


BLOCK_SPEC = own_kernel("csr_spmm_merge", ("csr",),
                        "merge-path shares of rows and nonzeros, a group of 1-32 lanes per share with strips of "
                        "the block's columns; rows spanning shares fixed up deterministically",
                        _expressions, bind, configure,
                        params={**BLOCK_PARAMS, "items_per_share": None, "short_run": None}, default=True,
                        extends=("csr_merge", "csr_stream"))
