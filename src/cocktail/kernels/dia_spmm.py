"""dia_spmm: DIA times a block of k vectors, a row per group of lanes, each in-matrix slot read once per tile
of columns.

A block kernel (``BLOCK_SPEC``) extending dia, on csr_spmm's instantiation grid (lanes per row, columns per
lane, chosen by the rule ``spmm_shape``): ``A.matmat(X)`` reads the diagonals once per tile of
``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and ``Y`` in any memory order.
"""

from __future__ import annotations

import numpy as np

from .csr_spmm import BLOCK_PARAMS, COLUMNS_PER_LANE, LANES, configure, expression
from .device import grid_for
from .launch import ALPHA, X, Y, Launch, beta_arg
from .spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [expression("dia_spmm", v, i, t, c) for t in LANES for c in COLUMNS_PER_LANE]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, ``lanes`` lanes each, for the operands of the configuration."""
    m, n = fmt.shape
    t, c, block = config["lanes"], config["columns_per_lane"], config["block_threads"]
    I = fmt.index_dtype.type
    fn = BLOCK_SPEC.compiled(expression("dia_spmm", *type_names(fmt), t, c), config["ldg"], props.id)
    args = (I(m), *config["operands"].args(), I(n), I(fmt.offsets.shape[0]), np.int64(fmt.stride), fmt.offsets,
            fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch(fn, grid_for(m * t, block, props), block, args, fmt.dtype)]


BLOCK_SPEC = own_kernel("dia_spmm", ("dia",),
                        "a group of 1-32 lanes per row, each lane a strip of up to 8 of the block's columns; "
                        "every in-matrix slot read once per tile of columns",
                        _expressions, bind, configure, params=dict(BLOCK_PARAMS), default=True, extends=("dia",))
