"""bdia_direct: one thread per row over the banded diagonal format, x read directly (clSpMV §4.2.2)."""

from __future__ import annotations

from ..bdia import band_args, band_ptr64
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from ..spec import Sampled, UNLIMITED_FILL, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"bdia_direct<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows, no shared memory."""
    m = fmt.shape[0]
    block = config["block_threads"]
    args = (*band_args(fmt), fmt.offsets, band_ptr64(fmt), fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    return [Launch.striding(fn, m, block, props, args, fmt.dtype)]


SPEC = own_kernel("bdia_direct", ("bdia",),
                  "one thread per row over the bands, x read directly (no staging)",
                  _expressions, bind, row_kernel,
                  profile=(Sampled("bdia_direct", "band", format_params=UNLIMITED_FILL),), order=130,
                  colour="#4a148c", walk="bands")
