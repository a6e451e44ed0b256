"""csr_spmm_merge: CSR times a block of k vectors with csr_merge's merge-path balance, each stored entry
read once per tile of columns, rows spanning shares fixed up deterministically.

A block kernel (``BLOCK_SPEC``) extending the load-balanced CSR kernels (csr_merge, csr_stream, and
cuSPARSE's, from the block width the rule ``spmm_min_columns`` gives) and the COO kernels (a row-sorted
COO is CSR's column indices and values with explicit rows: its row pointers are built once): a matrix
bound to one of them keeps its balance for a block.  When a matrix's executor
is made, :func:`prepare` computes where each share of the merge path starts, lists the runs of shares
carrying one row and makes the carry buffer, so a block product of any width runs no search,
allocates nothing and can be captured from its first call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...arrays import get_xp
from ..config import integer_or_none
from ..csr_spmm import VECTOR_BLOCK_PARAMS, block_shape, expression, launch_settings, vector_expressions
from ..device import capped_grid, grid_for
from ..launch import ALPHA, X, Y, Launch, beta_arg
from .rules import SPMM_MERGE_CHUNK, SPMM_MERGE_SHORT_RUN, items_per_share, merge_shape
from ..spec import csr_values, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return (vector_expressions("csr_spmm_merge", v, i, patterns=(False, True))
            + [f"csr_spmm_merge_fixup<{v}, {flag}>" for flag in ("false", "true")])


def row_pointers(fmt):
    """``indptr`` of a CSR (or csr_pattern) matrix, or of a row-sorted COO one (built on the device: where each
    row starts)."""
    if fmt.name != "coo":
        return fmt.indptr
    xp = get_xp(fmt.row)
    rows = xp.arange(fmt.shape[0] + 1, dtype=fmt.index_dtype)
    return xp.searchsorted(fmt.row, rows, side="left").astype(fmt.index_dtype)


def entries(fmt) -> tuple:
    """The column indices and values a share walks: CSR's ``indices`` and ``data`` (a csr_pattern matrix's one
    ``value``), or COO's ``col`` and ``data`` (a row-sorted COO holds them in CSR's order)."""
    return (fmt.col, fmt.data) if fmt.name == "coo" else (fmt.indices, csr_values(fmt)[0])


def shares_of(fmt, items: int, indptr=None):
    """``share_row`` (row ends before each share of ``items`` merge items, and ``m`` after the last) and
    the runs of shares that carry part of one row: ``(row, first share, count)``, as device arrays.
    ``indptr``: the matrix's row pointers (default :func:`row_pointers`).  On the arrays' device (NumPy's
    on the host, for the tests)."""
    indptr = row_pointers(fmt) if indptr is None else indptr
    cupy = get_xp(indptr)
    m, nnz = fmt.shape[0], int(fmt.nnz)
    total = m + nnz
    shares = -(-total // items)
    d = cupy.minimum(cupy.arange(shares + 1, dtype=cupy.int64) * items, total)
    indptr = indptr.astype(cupy.int64, copy=False)
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


@dataclass
class Shares:
    """What every block product of one matrix shares: its row pointers (a COO matrix's built once), the
    shares' starts, the runs of carries split at ``short_run`` (short: a thread per column; long: a block
    per run) and a carry buffer of ``chunk`` columns per share (a product runs its block ``chunk`` columns
    at a time)."""

    items: int
    short_run: int
    chunk: int
    indptr: object
    share_row: object
    short: tuple
    long: tuple
    carry: object

    @property
    def shares(self) -> int:
        """The number of shares."""
        return int(self.share_row.shape[0]) - 1

    @classmethod
    def of(cls, fmt, items: int, short_run: int, chunk: int) -> Shares:
        """The shares of ``fmt`` (device work and a host synchronisation: made once, not per product)."""
        indptr = row_pointers(fmt)
        cupy = get_xp(indptr)
        share_row, (run_row, run_first, run_count) = shares_of(fmt, items, indptr)
        long_run = run_count > short_run
        split = []
        for chosen in (cupy.flatnonzero(~long_run), cupy.flatnonzero(long_run)):
            split.append((run_row[chosen], run_first[chosen], run_count[chosen]))
        carry = cupy.empty((int(share_row.shape[0]) - 1) * chunk, dtype=fmt.dtype)
        return cls(items, short_run, chunk, indptr, share_row, split[0], split[1], carry)


def prepare(fmt, props, rules) -> Shares:
    """The shares for the rules' items (:func:`merge_items`) and a carry buffer of SPMM_MERGE_CHUNK columns,
    once per matrix."""
    items = merge_items(fmt, props)
    return Shares.of(fmt, items, SPMM_MERGE_SHORT_RUN, SPMM_MERGE_CHUNK)


def merge_items(fmt, props) -> int:
    """Merge items per share: the rule's for this matrix's ``m + nnz`` on this device."""
    return items_per_share(fmt.shape[0] + int(fmt.nnz), props.sm_count * props.max_threads_per_sm)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """Per chunk of columns, the shares' pass, then the fix-up of the runs of carries: short runs a thread
    per (run, column), long ones a block per run.  The shares come prepared (:func:`prepare`) unless the
    configuration asks for other ones."""
    m, nnz = fmt.shape[0], int(fmt.nnz)
    items, t, c, block = config["items_per_share"], config["lanes"], config["columns_per_lane"], config["block_threads"]
    operands = config["operands"]
    tile = t * c
    chunk = max(config["chunk"], tile)
    shares = config["prepared"]
    if shares is None or (shares.items, shares.short_run, shares.chunk) != (items, config["short_run"], chunk):
        shares = Shares.of(fmt, items, config["short_run"], chunk)
    v, i = type_names(fmt)
    main_fn = BLOCK_SPEC.compiled(expression("csr_spmm_merge", v, i, t, c, config["vector"], fmt.pattern_only),
                                  config["ldg"], props.id)
    fixups = [(BLOCK_SPEC.compiled(f"csr_spmm_merge_fixup<{v}, {'true' if is_long else 'false'}>", config["ldg"],
                                   props.id, (v, i)), runs, is_long)
              for runs, is_long in ((shares.short, False), (shares.long, True)) if runs[0].shape[0]]
    launches = []
    for col0 in range(0, operands.k, chunk):
        width = min(chunk, operands.k - col0)
        tiles = -(-width // tile)
        args = (np.int64(shares.shares), np.int64(shares.items), np.int64(m + nnz), shares.share_row,
                np.int64(col0), np.int64(chunk), *operands.args(), shares.indptr, *entries(fmt),
                X, Y, ALPHA, beta_arg(fmt, accumulate), shares.carry)
        launches.append(Launch.striding(main_fn, shares.shares * tiles * t, block, props, args, fmt.dtype))
        for fn, (run_row, run_first, run_count), is_long in fixups:
            runs = int(run_row.shape[0])
            grid = capped_grid(runs, props) if is_long else grid_for(runs * width, block, props, fn)
            launches.append(Launch(fn, grid, block, (np.int64(runs), run_row, run_first, run_count, shares.carry,
                                                     np.int64(col0), np.int64(chunk), *operands.args(), Y, ALPHA),
                                   fmt.dtype))
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """The block shape (the rule :func:`.rules.merge_shape`; vector strips where the operands allow them and the
    chunk holds whole strips), read path and block size; merge items per share,
    the longest run of carries fixed up a thread per column and the columns per launch: given, else the
    rules'; the prepared shares (:func:`prepare`), passed on."""
    itemsize = np.dtype(fmt.dtype).itemsize
    out = {**launch_settings(spec, p, props, rules),
           **block_shape(spec, p, lambda k, row_major: merge_shape(k, row_major, itemsize), itemsize)}
    defaults = {"items_per_share": lambda: merge_items(fmt, props),
                "short_run": lambda: SPMM_MERGE_SHORT_RUN, "chunk": lambda: SPMM_MERGE_CHUNK}
    for name, default in defaults.items():
        value = integer_or_none(default() if p[name] is None else p[name])
        if value is None or value < 1:
            raise ValueError(f"{spec.name}: {name} must be a positive integer or None, got {p[name]!r}")
        out[name] = value
    if out["vector"] and out["chunk"] % out["columns_per_lane"]:  # a vector strip must not straddle chunks
        if p["vector"]:
            raise ValueError(f"{spec.name}: vector strips need chunk a multiple of columns_per_lane, got chunk "
                             f"{out['chunk']} and {out['columns_per_lane']} columns per lane")
        out["vector"] = False
    prepared = p["prepared"]
    if prepared is not None and not isinstance(prepared, Shares):
        raise ValueError(f"{spec.name}: prepared must be the matrix's Shares (made by prepare()), "
                         f"got {prepared!r}")
    out["prepared"] = prepared
    return out


BLOCK_SPEC = own_kernel("csr_spmm_merge", ("csr", "coo", "csr_pattern"),
                        "merge-path shares of rows and nonzeros, a group of 1-32 lanes per share with strips of "
                        "the block's columns; rows spanning shares fixed up deterministically",
                        _expressions, bind, configure,
                        params={**VECTOR_BLOCK_PARAMS, "items_per_share": None, "short_run": None, "chunk": None,
                                "prepared": None},
                        default=True, extends=("balanced", "entries"), prepare=prepare)
