"""bcsr: a group of lanes per superrow over blocked CSR (clSpMV §4.4.3)."""

from __future__ import annotations

import numpy as np

from .. import blocks
from ..launch import ALPHA, X, Y, Launch, beta_arg
from .rules import threads_per_superrow
from ..spec import EVERY_PRECISION, Sampled, UNLIMITED_FILL, own_kernel

#: Lanes per superrow the kernel accepts (powers of two dividing the warp; 32 is clSpMV's warp).
THREADS_PER_SUPERROW = (1, 2, 4, 8, 16, 32)


def _expressions(v: str, i: str) -> list[str]:
    return blocks.expressions("bcsr", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over superrows, ``threads_per_superrow`` lanes each."""
    m, n = fmt.shape
    superrows = int(fmt.row_ptr.shape[0]) - 1
    t, block = config["threads_per_superrow"], config["block_threads"]
    fn = blocks.compiled(SPEC, fmt, config["ldg"], props.id)
    I = fmt.index_dtype.type
    args = (I(superrows), I(m), I(n), np.int64(fmt.nblocks), np.int32(t), np.int32(blocks.vector_loads(fmt.data)),
            fmt.row_ptr, fmt.col, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, superrows * t, block, props, args, fmt.dtype)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Lanes per superrow: given, else the rule's for the mean blocks per superrow."""
    t = p["threads_per_superrow"]
    if t is None:
        superrows = int(fmt.row_ptr.shape[0]) - 1
        t = threads_per_superrow(fmt.nblocks / superrows if superrows else 0.0)
    if isinstance(t, bool) or t not in THREADS_PER_SUPERROW:
        raise ValueError(f"bcsr: threads_per_superrow must be one of {THREADS_PER_SUPERROW} or None, got {t!r}")
    return {**blocks.block_config(spec, fmt, p, props, rules), "threads_per_superrow": int(t)}


SPEC = own_kernel("bcsr", ("bcsr",),
                  "a group of 1-32 lanes per superrow of r x c blocks, shuffle reduction",
                  _expressions, bind, configure, params={"threads_per_superrow": None}, default=True,
                  profile=(Sampled("bcsr", "blocks", format_params=UNLIMITED_FILL, long_rows=True, per_block=True),),
                  precisions=EVERY_PRECISION, order=150, walk="blocks")
