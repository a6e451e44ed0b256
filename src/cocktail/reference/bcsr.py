"""Reference BCSR product: one x segment per block, multiplied by the block's r rows."""

from ..arrays import get_xp, row_ids
from ..formats.block_grid import block_product
from .entries import Entries, block_entries


def product(fmt, X):
    """``A @ X`` from ``row_ptr``, ``col`` and ``data`` (r, nblocks, c)."""
    xp = get_xp(X)
    nb = int(fmt.col.shape[0])
    superrow = row_ids(fmt.row_ptr, nb).astype(xp.int64)
    return block_product(X, superrow, fmt.col, fmt.data.transpose(1, 0, 2), fmt.shape, fmt.dtype)


def entries(fmt) -> list[Entries]:
    """Cell ``(ri, cj)`` of block ``b`` is ``data[ri, b, cj]`` (flat ``(ri*nblocks + b)*c + cj``).

    Rows and columns of a partial block past the matrix edge are left out, then fill.
    """
    xp = fmt.xp
    nb = fmt.nblocks
    c = fmt.block[1]
    superrow = row_ids(fmt.row_ptr, nb).astype(xp.int64)
    return block_entries(fmt, superrow, fmt.col, lambda b, ri, cj: (ri * nb + b) * c + cj, fmt.data)
