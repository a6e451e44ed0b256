"""bcsr_spmm: BCSR times a block of k vectors, a superrow per group of lanes, each stored block read once per
tile of columns.

A block kernel (``BLOCK_SPEC``) extending bcsr: a group of 1-32 lanes per superrow, each lane holding a strip
of the tile's columns for each of the block's ``r`` rows (lanes and columns per lane chosen by the rule
``block_spmm_shape``; bcsr's ``threads_per_superrow`` is not used), so ``A.matmat(X)`` reads the blocks once
per tile of ``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and ``Y`` in any memory
order.  Instantiations: every block shape, columns per lane as :data:`.blocks_spmm.COLUMNS_PER_LANE` allows.
"""

from __future__ import annotations

import numpy as np

from .. import blocks_spmm
from ..blocks_spmm import configure
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import own_kernel

#: The (lanes, columns per lane) it takes for a stored matrix: its instantiation grid for the block's rows.
block_shapes = blocks_spmm.block_shapes


def _expressions(v: str, i: str) -> list[str]:
    return blocks_spmm.expressions("bcsr_spmm", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over superrows, ``lanes`` lanes each, for the operands of the configuration."""
    t, block = config["lanes"], config["block_threads"]
    fn = blocks_spmm.compiled(BLOCK_SPEC, fmt, config["columns_per_lane"], config["ldg"], props.id)
    args = (*blocks_spmm.launch_head(fmt, config), np.int64(fmt.nblocks), blocks_spmm.vector_loads(fmt.data),
            fmt.row_ptr, fmt.col, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, fmt.superrows * t, block, props, args, fmt.dtype)]


BLOCK_SPEC = own_kernel("bcsr_spmm", ("bcsr",),
                        "a group of 1-32 lanes per superrow of r x c blocks, each lane a strip of up to 8 of the "
                        "block's columns for each of the r rows; every block read once per tile of columns",
                        _expressions, bind, configure, params=dict(blocks_spmm.PARAMS), default=True,
                        extends=("blocks",))
