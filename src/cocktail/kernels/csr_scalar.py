"""csr_scalar: one thread per row (Bell & Garland §4.3)."""

from __future__ import annotations

from .device import grid_for
from .launch import ALPHA, X, Y, Launch, beta_arg
from .config import row_kernel
from .spec import Sampled, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"csr_scalar<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows."""
    m = fmt.shape[0]
    block = config["block_threads"]
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    args = (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch(fn, grid_for(m, block, props), block, args, fmt.dtype)]


SPEC = own_kernel("csr_scalar", ("csr",),
                  "one thread per row",
                  _expressions, bind, row_kernel, profile=(Sampled("csr_scalar", "rows"),))
