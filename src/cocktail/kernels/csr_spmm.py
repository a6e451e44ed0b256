"""csr_spmm: CSR times a row-major block of k vectors, each stored entry read once per tile of columns.

A block kernel (``BLOCK_SPEC``): its launches are bound for one column count ``k`` (a
configuration parameter the executor fills from the operands), so ``A.matmat(X)`` costs the
matrix's bytes once per tile of ``lanes * columns_per_lane`` columns instead of once per column.
It extends the row kernels (csr_scalar, csr_vector: a row per thread or group of lanes); a matrix
bound to a load-balanced kernel (csr_merge, csr_stream) multiplies a block one column at a time,
keeping its balance, until the planner weighs block kernels.
"""

from __future__ import annotations

import numpy as np

from .config import block_threads, flag, integer_or_none
from .device import grid_for
from .launch import ALPHA, X, Y, Launch, beta_arg
from .spec import own_kernel, type_names

#: Lanes per row and columns per lane the source is instantiated for.
LANES = (1, 2, 4, 8, 16, 32)
COLUMNS_PER_LANE = (1, 2, 4, 8)


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, t, c) for t in LANES for c in COLUMNS_PER_LANE]


def expression(v: str, i: str, lanes: int, columns: int) -> str:
    """The instantiation for ``lanes`` lanes per row, ``columns`` columns per lane."""
    return f"csr_spmm<{v}, {i}, {lanes}, {columns}>"


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, ``lanes`` lanes each, for the ``k`` columns of the configuration."""
    m = fmt.shape[0]
    t, c, block = config["lanes"], config["columns_per_lane"], config["block_threads"]
    fn = BLOCK_SPEC.compiled(expression(*type_names(fmt), t, c), config["ldg"], props.id)
    args = (fmt.index_dtype.type(m), np.int64(config["k"]), fmt.indptr, fmt.indices, fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    return [Launch(fn, grid_for(m * t, block, props), block, args, fmt.dtype)]


def configure(spec, fmt, p, props, rules) -> dict:
    """The column count ``k`` (required: the executor's), and lanes per row and columns per lane: given,
    else the rule's for ``k``."""
    k = integer_or_none(p["k"])
    if k is None:
        raise ValueError(f"{spec.name}: k (the columns of X) must be a positive integer, got {p['k']!r}")
    if k < 1:
        raise ValueError(f"{spec.name}: k (the columns of X) must be a positive integer, got {k}")
    lanes, columns = rules.spmm_shape(k)
    lanes = lanes if p["lanes"] is None else p["lanes"]
    columns = columns if p["columns_per_lane"] is None else p["columns_per_lane"]
    if isinstance(lanes, bool) or lanes not in LANES:
        raise ValueError(f"{spec.name}: lanes must be one of {LANES} or None, got {lanes!r}")
    if isinstance(columns, bool) or columns not in COLUMNS_PER_LANE:
        raise ValueError(f"{spec.name}: columns_per_lane must be one of {COLUMNS_PER_LANE} or None, got {columns!r}")
    return {"ldg": flag(spec.name, "ldg", p["ldg"]),
            "block_threads": block_threads(spec.name, p["block_threads"], props, rules.BLOCK_THREADS),
            "k": k, "lanes": int(lanes), "columns_per_lane": int(columns)}


BLOCK_SPEC = own_kernel("csr_spmm", ("csr",),
                        "a group of 1-32 lanes per row, each lane a strip of up to 8 of the block's columns; "
                        "every entry read once per tile of columns",
                        _expressions, bind, configure,
                        params={"k": None, "lanes": None, "columns_per_lane": None}, default=True,
                        extends=("csr_scalar", "csr_vector"))
