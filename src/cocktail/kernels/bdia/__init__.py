"""bdia: one thread per row over the banded diagonal format, each band's slice of x staged in shared memory
(clSpMV §4.2.2)."""

from __future__ import annotations

import numbers

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from .rules import piece_width
from ..spec import Sampled, UNLIMITED_FILL, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"bdia<{v}, {i}>"]


def widest_band(band_ptr) -> int:
    """Diagonals in the widest band (0 without bands), from band pointers on either device."""
    if band_ptr.shape[0] < 2:
        return 0
    return int((band_ptr[1:] - band_ptr[:-1]).max())


def shared_bytes(block: int, piece: int, itemsize: int) -> int:
    """Dynamic shared memory of one block: the ``block + piece - 1`` staged values of ``x``."""
    return (int(block) + int(piece) - 1) * int(itemsize)


def band_args(fmt) -> tuple:
    """The arguments both bdia kernels start with: ``m, n, nbands, stride``.

    The kernels take ``band_ptr`` as int64 whatever its stored type (it is widened only when
    ``ndiag`` does not fit the index type; see :func:`band_ptr64`).
    """
    m, n = fmt.shape
    I = fmt.index_dtype.type
    return I(m), I(n), np.int64(fmt.offsets.shape[0]), np.int64(fmt.stride)


def band_ptr64(fmt):
    """``band_ptr`` as int64 (a copy of nbands+1 values when stored as int32; the launch keeps it alive)."""
    return fmt.band_ptr.astype(np.int64, copy=False)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows; each block stages ``block_threads + piece_width - 1`` values of x."""
    m = fmt.shape[0]
    block, piece = config["block_threads"], config["piece_width"]
    args = (*band_args(fmt), np.int32(piece), fmt.offsets, band_ptr64(fmt), fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    shared = shared_bytes(block, piece, fmt.dtype.itemsize)
    return [Launch.striding(fn, m, block, props, args, fmt.dtype, shared)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Diagonals per staged piece: given, else the rule's; the staged slice of x must fit in shared memory."""
    config = row_kernel(spec, fmt, p, props, rules)
    block, itemsize = config["block_threads"], fmt.dtype.itemsize
    piece = p["piece_width"]
    if piece is None:
        piece = piece_width(widest_band(fmt.band_ptr), block, itemsize)
    if isinstance(piece, bool) or not isinstance(piece, numbers.Integral) or piece < 1:
        raise ValueError(f"bdia: piece_width must be a positive integer or None, got {piece!r}")
    need = shared_bytes(block, piece, itemsize)
    if need > props.shared_memory_per_block:
        raise ValueError(f"bdia: piece_width={int(piece)} with block_threads={block} stages {block + int(piece) - 1} "
                         f"values of x ({need} bytes), more than the {props.shared_memory_per_block} bytes of shared "
                         f"memory a block may use; choose a smaller piece_width")
    return {**config, "piece_width": int(piece)}


SPEC = own_kernel("bdia", ("bdia",),
                  "one thread per row, each band's slice of x staged in shared memory, piece_width diagonals at a time",
                  _expressions, bind, configure, params={"piece_width": None}, default=True,
                  profile=(Sampled("bdia", "band", format_params=UNLIMITED_FILL),), order=120, walk="bands")
