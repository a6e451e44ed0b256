"""bell_spmm: BELL times a block of k vectors, a superrow per group of lanes, each stored block read once per
tile of columns.

A block kernel (``BLOCK_SPEC``) extending bell: a group of 1-32 lanes per superrow, each lane holding a strip
of the tile's columns for each of the block's ``r`` rows (lanes and columns per lane chosen by the rule
``block_spmm_shape``), so ``A.matmat(X)`` reads the block slots once per tile of ``lanes * columns_per_lane``
columns instead of once per column, with ``X`` and ``Y`` in any memory order.  Instantiations: every block
shape, columns per lane as :data:`.blocks_spmm.COLUMNS_PER_LANE` allows.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import blocks_spmm
from ..blocks_spmm import block_shapes, configure  # noqa: F401  (block_shapes: its instantiation grid)
from ..spec import own_kernel

_expressions = functools.partial(blocks_spmm.expressions, "bell_spmm")


def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
    """A grid-stride pass over superrows, ``lanes`` lanes each; each stops at its first padding slot."""
    return blocks_spmm.superrow_launches(BLOCK_SPEC, fmt, config, props, accumulate,
                                         (fmt.index_dtype.type(fmt.width), np.int64(fmt.stride)), (fmt.col,))


BLOCK_SPEC = own_kernel("bell_spmm", ("bell",),
                        "a group of 1-32 lanes per superrow of r x c blocks, each lane a strip of up to 8 of the "
                        "block's columns for each of the r rows; every block slot read once per tile of columns",
                        _expressions, bind, configure, params=dict(blocks_spmm.PARAMS), default=True,
                        extends=("blocks",))
