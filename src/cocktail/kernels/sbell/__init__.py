"""sbell: one thread per superrow over sliced blocked ELLPACK (clSpMV §4.4.2)."""

from __future__ import annotations

import numpy as np

from .. import blocks
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import Sampled, UNLIMITED_FILL, own_kernel

#: Slice height (superrows) of the device profile's samples; the planner plans SBELL with it.
SAMPLED_HEIGHT = 32


def _expressions(v: str, i: str) -> list[str]:
    return blocks.expressions("sbell", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the superrows; each reads its slice's slots and stops at padding.

    The slice pointers go to the kernel as int64 (a copy, once, when the format holds them in
    int32), so one instantiation serves both pointer widths.
    """
    m, n = fmt.shape
    superrows = fmt.superrows
    block = config["block_threads"]
    fn = blocks.compiled(SPEC, fmt, config["ldg"], props.id)
    I = fmt.index_dtype.type
    args = (I(superrows), I(m), I(n), np.int64(fmt.slice_height), np.int32(blocks.vector_loads(fmt.data)),
            fmt.slice_ptr.astype(np.int64, copy=False), fmt.col, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, superrows, block, props, args, fmt.dtype)]


SPEC = own_kernel("sbell", ("sbell",),
                  "one thread per superrow of r x c blocks, slices of slice_height superrows",
                  _expressions, bind, blocks.block_config, default=True,
                  profile=(Sampled("sbell", "blocks", format_params={"slice_height": SAMPLED_HEIGHT, **UNLIMITED_FILL},
                                   per_block=True),), order=170, walk="blocks")
