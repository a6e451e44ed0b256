"""Reference CSR-pattern product: each entry's one value times its gathered ``x``, added into its row (as CSR's)."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``indptr``, the columns (``indices``, short ones decoded with ``column_base``) and ``value``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, fmt.row_ids(), fmt.value[0] * X[fmt.columns()])


def entries(fmt) -> list[Entries]:
    """Every stored entry: row from ``indptr``, column ``t`` (decoded where short), position 0 of ``value``."""
    xp = fmt.xp
    return [make(fmt.row_ids(), fmt.columns(), xp.zeros(fmt.nnz, dtype=xp.int64), fmt.value)]
