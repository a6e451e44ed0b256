"""bell: one thread per superrow over blocked ELLPACK (clSpMV §4.4.1)."""

from __future__ import annotations

import numpy as np

from .. import blocks
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import Sampled, UNLIMITED_FILL, own_kernel


def _expressions(v: str, i: str) -> list[str]:
    return blocks.expressions("bell", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the superrows; each stops at its first padding slot."""
    m, n = fmt.shape
    superrows = fmt.superrows
    block = config["block_threads"]
    fn = blocks.compiled(SPEC, fmt, config["ldg"], props.id)
    I = fmt.index_dtype.type
    args = (I(superrows), I(m), I(n), I(fmt.width), np.int64(fmt.stride), np.int32(blocks.vector_loads(fmt.data)),
            fmt.col, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, superrows, block, props, args, fmt.dtype)]


SPEC = own_kernel("bell", ("bell",),
                  "one thread per superrow of r x c blocks, column-major block slots",
                  _expressions, bind, blocks.block_config, default=True,
                  profile=(Sampled("bell", "blocks", format_params=UNLIMITED_FILL, per_block=True),), order=160,
                  walk="blocks")
