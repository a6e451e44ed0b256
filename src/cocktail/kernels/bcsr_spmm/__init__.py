"""bcsr_spmm: BCSR times a block of k vectors, a superrow per group of lanes, each stored block read once per
tile of columns.

A block kernel (``BLOCK_SPEC``) extending bcsr: a group of 1-32 lanes per superrow, each lane holding a strip
of the tile's columns for each of the block's ``r`` rows (lanes and columns per lane chosen by the rule
``block_spmm_shape``; bcsr's ``threads_per_superrow`` is not used), so ``A.matmat(X)`` reads the blocks once
per tile of ``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and ``Y`` in any memory
order.  Instantiations: every block shape, columns per lane as :data:`.blocks_spmm.COLUMNS_PER_LANE` allows.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import blocks_spmm
from ..blocks_spmm import block_shapes, configure  # noqa: F401  (block_shapes: its instantiation grid)
from ..spec import own_kernel

_expressions = functools.partial(blocks_spmm.expressions, "bcsr_spmm")


def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
    """A grid-stride pass over superrows, ``lanes`` lanes each, for the operands of the configuration."""
    return blocks_spmm.superrow_launches(BLOCK_SPEC, fmt, config, props, accumulate, (np.int64(fmt.nblocks),),
                                         (fmt.row_ptr, fmt.col))


BLOCK_SPEC = own_kernel("bcsr_spmm", ("bcsr",),
                        "a group of 1-32 lanes per superrow of r x c blocks, each lane a strip of up to 8 of the "
                        "block's columns for each of the r rows; every block read once per tile of columns",
                        _expressions, bind, configure, params=dict(blocks_spmm.PARAMS), default=True,
                        extends=("blocks",))
