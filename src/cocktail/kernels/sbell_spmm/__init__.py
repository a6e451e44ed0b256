"""sbell_spmm: SBELL times a block of k vectors, a superrow per group of lanes, each stored block read once per
tile of columns.

A block kernel (``BLOCK_SPEC``) extending sbell: a group of 1-32 lanes per superrow, each lane holding a strip
of the tile's columns for each of the block's ``r`` rows (lanes and columns per lane chosen by the rule
``block_spmm_shape``), so ``A.matmat(X)`` reads the slices once per tile of ``lanes * columns_per_lane``
columns instead of once per column, with ``X`` and ``Y`` in any memory order.  Instantiations: every block
shape, columns per lane as :data:`.blocks_spmm.COLUMNS_PER_LANE` allows.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import blocks_spmm
from ..blocks_spmm import block_shapes  # noqa: F401  (its instantiation grid)
from ..spec import own_kernel

_expressions = functools.partial(blocks_spmm.expressions, "sbell_spmm")


def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
    """A grid-stride pass over superrows, ``lanes`` lanes each; each reads its slice's slots and stops at padding.

    The kernel reads slice pointers as 64-bit: the prepared ones (:func:`prepare`), else ``slice_ptr`` widened
    here.
    """
    slice_ptr = config["prepared"] if config["prepared"] is not None else prepare(fmt)
    return blocks_spmm.superrow_launches(BLOCK_SPEC, fmt, config, props, accumulate, (np.int64(fmt.slice_height),),
                                         (slice_ptr, fmt.col))


def prepare(fmt, props=None, rules=None):
    """The slice pointers as 64-bit, once per matrix (:meth:`~cocktail.SparseMatrix.prepare_block_products` or
    the first block product): a 32-bit ``slice_ptr`` is widened on the device then, so that binding a block
    product for new operands does no device work."""
    return fmt.slice_ptr.astype(np.int64, copy=False)


def configure(spec, fmt, p, props, rules) -> dict:
    """The blocked block kernels' shape, read path and block size, and the prepared slice pointers, passed on."""
    return {**blocks_spmm.configure(spec, fmt, p, props, rules), "prepared": p["prepared"]}


BLOCK_SPEC = own_kernel("sbell_spmm", ("sbell",),
                        "a group of 1-32 lanes per superrow of r x c blocks in slices, each lane a strip of up to 8 "
                        "of the block's columns for each of the r rows; every block slot read once per tile of "
                        "columns",
                        _expressions, bind, configure, params={**blocks_spmm.PARAMS, "prepared": None}, default=True,
                        extends=("blocks",), prepare=prepare)
