"""ell: one thread per row over column-major ELLPACK (Bell & Garland §4.2)."""

from __future__ import annotations

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from ..spec import EVERY_PRECISION, Sampled, UNLIMITED_FILL, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"ell<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows; each row stops at its first padding slot."""
    m = fmt.shape[0]
    block = config["block_threads"]
    I = fmt.index_dtype.type
    args = (I(m), I(fmt.width), np.int64(fmt.stride), fmt.col, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    return [Launch.striding(fn, m, block, props, args, fmt.dtype)]


SPEC = own_kernel("ell", ("ell",),
                  "one thread per row, column-major slots",
                  _expressions, bind, row_kernel, default=True,
                  profile=(Sampled("ell", "rows", format_params=UNLIMITED_FILL),),
                  precisions=EVERY_PRECISION, order=70, walk="full_width")
