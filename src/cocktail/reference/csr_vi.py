"""Reference CSR-VI product: each entry's value decoded from the table by its code, times its gathered ``x``."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``indptr``, the columns (``indices``, short ones decoded with ``column_base``), ``codes`` and
    ``table``: row ``i`` adds ``table[codes[j]] * X[column j]``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, fmt.row_ids(), fmt.table[fmt.codes][:, None] * X[fmt.columns()])


def entries(fmt) -> list[Entries]:
    """Every stored entry: row from ``indptr``, column ``t`` (decoded where short), position ``codes[t]`` of ``table``."""
    return [make(fmt.row_ids(), fmt.columns(), fmt.codes, fmt.table)]
