"""Reference BELL product: every non-padding block slot (col != -1) of the K x stride grid."""

from ..arrays import get_xp
from ..formats.block_grid import block_product
from .entries import Entries, block_entries


def product(fmt, X):
    """``A @ X`` from ``col`` (K, stride) and ``data`` (K, r, stride, c)."""
    xp = get_xp(X)
    k, s = xp.nonzero(fmt.col != -1)
    vals = fmt.data.transpose(0, 2, 1, 3)[k, s]  # (nblocks, r, c)
    return block_product(X, s, fmt.col[k, s], vals, fmt.shape, fmt.dtype)


def entries(fmt) -> list[Entries]:
    """Real slot ``(k, s)`` (``col[k, s] != -1``): cell ``(ri, cj)`` is ``data[k, ri, s, cj]``.

    Padding slots, rows and columns of a partial block past the matrix edge, then fill,
    are left out.
    """
    xp = fmt.xp
    r, c = fmt.block
    stride = fmt.stride
    k, s = xp.nonzero(fmt.col != -1)
    k, s = k.astype(xp.int64), s.astype(xp.int64)

    def position(b, ri, cj):
        return ((k[b] * r + ri) * stride + s[b]) * c + cj

    return block_entries(fmt, s, fmt.col[k, s], position, fmt.data)
