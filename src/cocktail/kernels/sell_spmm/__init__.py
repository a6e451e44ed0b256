"""sell_spmm: SELL-C-sigma times a block of k vectors, a (permuted) row per group of lanes, each stored slot
read once per tile of columns.

A block kernel (``BLOCK_SPEC``) extending sell, on csr_spmm's instantiation grid (lanes per row, columns
per lane, chosen by the rule ``spmm_shape``; sell's ``threads_per_row`` is not used): ``A.matmat(X)`` reads
the slices once per tile of ``lanes * columns_per_lane`` columns, writing row ``p``'s results to
``Y[perm[p]]``, with ``X`` and ``Y`` in any memory order.
"""

from __future__ import annotations

import numpy as np

from ..csr_spmm import BLOCK_PARAMS, COLUMNS_PER_LANE, LANES, expression
from ..csr_spmm import configure as csr_spmm_configure
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..sell import permuted
from ..spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [expression("sell_spmm", v, i, t, c) for t in LANES for c in COLUMNS_PER_LANE]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over the permuted rows, ``lanes`` lanes each, for the operands of the configuration.

    The kernel reads slice pointers as 64-bit: the prepared ones (:func:`prepare`), else ``slice_ptr`` widened
    here.
    """
    m = fmt.shape[0]
    t, c, block = config["lanes"], config["columns_per_lane"], config["block_threads"]
    fn = BLOCK_SPEC.compiled(expression("sell_spmm", *type_names(fmt), t, c), config["ldg"], props.id)
    slice_ptr = config["prepared"] if config["prepared"] is not None else prepare(fmt)
    args = (fmt.index_dtype.type(m), *config["operands"].args(), np.int64(fmt.slice_height),
            np.int32(permuted(fmt)), slice_ptr, fmt.col, fmt.data, fmt.perm, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m * t, block, props, args, fmt.dtype)]


def prepare(fmt, props=None, rules=None):
    """The slice pointers as 64-bit, once per matrix (:meth:`~cocktail.SparseMatrix.prepare_block_products` or
    the first block product): a 32-bit ``slice_ptr`` is widened on the device then, so that binding a block
    product for new operands does no device work."""
    return fmt.slice_ptr.astype(np.int64, copy=False)


def configure(spec, fmt, p, props, rules) -> dict:
    """csr_spmm's block shape, read path and block size, and the prepared slice pointers, passed on."""
    return {**csr_spmm_configure(spec, fmt, p, props, rules), "prepared": p["prepared"]}


BLOCK_SPEC = own_kernel("sell_spmm", ("sell",),
                        "a group of 1-32 lanes per permuted row, each lane a strip of up to 8 of the block's "
                        "columns; every slot read once per tile of columns, the row permutation applied to Y",
                        _expressions, bind, configure, params={**BLOCK_PARAMS, "prepared": None}, default=True,
                        extends=("rows",), prepare=prepare)
