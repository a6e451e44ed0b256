"""Reference CSR product: scatter each entry's product into its row."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``indptr``, ``indices`` and ``data``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, fmt.row_ids(), fmt.data[:, None] * X[fmt.indices])


def entries(fmt) -> list[Entries]:
    """Every stored entry: row from ``indptr``, column ``indices[t]``, value ``data[t]``."""
    xp = fmt.xp
    return [make(fmt.row_ids(), fmt.indices, xp.arange(fmt.nnz, dtype=xp.int64), fmt.data)]
