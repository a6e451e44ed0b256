"""dia_spmm: DIA times a block of k vectors, a group of lanes per few consecutive rows, each in-matrix slot read
once per tile of columns.

A block kernel (``BLOCK_SPEC``) extending dia, on csr_spmm's instantiation grid (lanes per row, columns per
lane, chosen by the rule ``spmm_shape``; vector strips where the operands allow) times ``rows_per_group`` (1,
2 or 4 consecutive rows a group, the rule ``spmm_diagonal_rows``: X rows shared by adjacent diagonals are
loaded once for them): ``A.matmat(X)`` reads the diagonals once per tile of ``lanes * columns_per_lane``
columns instead of once per column, with ``X`` and ``Y`` in any memory order.
"""

from __future__ import annotations

import numpy as np

from ..csr_spmm import ROW_GROUP_PARAMS, configure_rows, expression, row_group_expressions, with_rows
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return row_group_expressions("dia_spmm", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over groups of ``rows_per_group`` rows, ``lanes`` lanes each."""
    m, n = fmt.shape
    t, c, block, rows = config["lanes"], config["columns_per_lane"], config["block_threads"], config["rows_per_group"]
    I = fmt.index_dtype.type
    fn = BLOCK_SPEC.compiled(with_rows(expression("dia_spmm", *type_names(fmt), t, c, config["vector"]), rows),
                             config["ldg"], props.id)
    args = (I(m), *config["operands"].args(), I(n), I(fmt.offsets.shape[0]), np.int64(fmt.stride), fmt.offsets,
            fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, -(-m // rows) * t, block, props, args, fmt.dtype)]


BLOCK_SPEC = own_kernel("dia_spmm", ("dia",),
                        "a group of 1-32 lanes per 1-4 consecutive rows, each lane a strip of up to 8 of the block's "
                        "columns; every in-matrix slot read once per tile of columns, adjacent diagonals sharing "
                        "their X rows",
                        _expressions, bind, configure_rows, params=dict(ROW_GROUP_PARAMS), default=True,
                        extends=("diagonals",))
