"""Reference CSR-pattern product: the one value times each row's sum of gathered ``x``."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``indptr``, ``indices`` and ``value``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    scatter_add(Y, fmt.row_ids(), X[fmt.indices])
    Y *= fmt.value[0]
    return Y


def entries(fmt) -> list[Entries]:
    """Every stored entry: row from ``indptr``, column ``indices[t]``, position 0 of ``value``."""
    xp = fmt.xp
    return [make(fmt.row_ids(), fmt.indices, xp.zeros(fmt.nnz, dtype=xp.int64), fmt.value)]
