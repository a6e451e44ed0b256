"""dia_vi_spmm: DIA-VI times a block of k vectors, a row per group of lanes, each in-matrix code read once
per tile of columns, the value table in shared memory.

A block kernel (``BLOCK_SPEC``) extending dia_vi, on csr_spmm's instantiation grid (lanes per row, columns
per lane, chosen by the rule ``spmm_shape``) times ``rows_per_group`` (1, 2 or 4 consecutive rows a group,
the rule ``spmm_diagonal_rows``: X rows shared by adjacent diagonals are loaded once for them; dia_vi's
``rows_per_thread`` is not used, so any row stride and codes address serve): ``A.matmat(X)`` reads the
codes once per tile of ``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and
``Y`` in any memory order.
"""

from __future__ import annotations

import numpy as np

from ..csr_spmm import ROW_GROUP_PARAMS, configure_rows, expression, row_group_expressions, with_rows
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return row_group_expressions("dia_vi_spmm", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over groups of ``rows_per_group`` rows, ``lanes`` lanes each; each block stages the
    value table once."""
    m, n = fmt.shape
    t, c, block, rows = config["lanes"], config["columns_per_lane"], config["block_threads"], config["rows_per_group"]
    I = fmt.index_dtype.type
    ntable = int(fmt.table.shape[0])
    fn = BLOCK_SPEC.compiled(with_rows(expression("dia_vi_spmm", *type_names(fmt), t, c, config["vector"]), rows),
                             config["ldg"], props.id)
    args = (I(m), *config["operands"].args(), I(n), I(fmt.offsets.shape[0]), np.int64(fmt.stride),
            np.int32(ntable), fmt.offsets, fmt.codes, fmt.table, X, Y, ALPHA, beta_arg(fmt, accumulate))
    shared = ntable * fmt.dtype.itemsize
    return [Launch.striding(fn, -(-m // rows) * t, block, props, args, fmt.dtype, shared)]


BLOCK_SPEC = own_kernel("dia_vi_spmm", ("dia_vi",),
                        "a group of 1-32 lanes per 1-4 consecutive rows, each lane a strip of up to 8 of the block's "
                        "columns; every in-matrix code read once per tile of columns, the value table in shared "
                        "memory",
                        _expressions, bind, configure_rows, params=dict(ROW_GROUP_PARAMS),
                        default=True,
                        extends=("diagonals",))
