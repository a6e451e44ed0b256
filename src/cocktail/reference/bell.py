"""Reference BELL product: every non-padding block slot (col != -1) of the K x stride grid."""

from .._xp import get_xp
from ..formats._blocks import block_product
from . import register


@register("bell")
def product(fmt, X):
    """``A @ X`` from ``col`` (K, stride) and ``data`` (K, r, stride, c)."""
    xp = get_xp(X)
    k, s = xp.nonzero(fmt.col != -1)
    vals = fmt.data.transpose(0, 2, 1, 3)[k, s]  # (nblocks, r, c)
    return block_product(X, s, fmt.col[k, s], vals, fmt.shape, fmt.dtype)
