"""ell_spmm: ELL times a block of k vectors, a row per group of lanes, each stored slot read once per tile
of columns.

A block kernel (``BLOCK_SPEC``) extending ell, on csr_spmm's instantiation grid (lanes per row, columns per
lane, chosen by the rule ``spmm_shape``): ``A.matmat(X)`` reads ELL's column-major slots once per tile of
``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and ``Y`` in any memory order.
"""

from __future__ import annotations

import numpy as np

from ..csr_spmm import BLOCK_PARAMS, COLUMNS_PER_LANE, LANES, configure, expression
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [expression("ell_spmm", v, i, t, c) for t in LANES for c in COLUMNS_PER_LANE]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, ``lanes`` lanes each, for the operands of the configuration."""
    m = fmt.shape[0]
    t, c, block = config["lanes"], config["columns_per_lane"], config["block_threads"]
    I = fmt.index_dtype.type
    fn = BLOCK_SPEC.compiled(expression("ell_spmm", *type_names(fmt), t, c), config["ldg"], props.id)
    args = (I(m), *config["operands"].args(), I(fmt.width), np.int64(fmt.stride), fmt.col, fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m * t, block, props, args, fmt.dtype)]


BLOCK_SPEC = own_kernel("ell_spmm", ("ell",),
                        "a group of 1-32 lanes per row, each lane a strip of up to 8 of the block's columns; "
                        "every slot read once per tile of columns",
                        _expressions, bind, configure, params=dict(BLOCK_PARAMS), default=True, extends=("full_width",))
