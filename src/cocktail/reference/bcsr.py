"""Reference BCSR product: one x segment per block, multiplied by the block's r rows."""

from .._xp import get_xp, row_ids
from ..formats._blocks import block_product
from . import register


@register("bcsr")
def product(fmt, X):
    """``A @ X`` from ``row_ptr``, ``col`` and ``data`` (r, nblocks, c)."""
    xp = get_xp(X)
    nb = int(fmt.col.shape[0])
    superrow = row_ids(fmt.row_ptr, nb).astype(xp.int64)
    return block_product(X, superrow, fmt.col, fmt.data.transpose(1, 0, 2), fmt.shape, fmt.dtype)
