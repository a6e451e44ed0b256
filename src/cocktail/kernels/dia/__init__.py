"""dia: one thread per row over the diagonal format (Bell & Garland §4.1)."""

from __future__ import annotations

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from ..spec import EVERY_PRECISION, Sampled, UNLIMITED_FILL, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"dia<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows; each block stages ``block_threads`` offsets at a time."""
    m, n = fmt.shape
    block = config["block_threads"]
    I = fmt.index_dtype.type
    args = (I(m), I(n), I(fmt.offsets.shape[0]), np.int64(fmt.stride), fmt.offsets, fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    shared = block * fmt.index_dtype.itemsize
    return [Launch.striding(fn, m, block, props, args, fmt.dtype, shared)]


SPEC = own_kernel("dia", ("dia",),
                  "one thread per row, diagonal offsets staged in shared memory",
                  _expressions, bind, row_kernel, default=True,
                  profile=(Sampled("dia", "band", format_params=UNLIMITED_FILL),),
                  precisions=EVERY_PRECISION, order=110, walk="diagonals")
