"""Reference COO product: scatter each triple's product into its row."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``row``, ``col`` and ``data``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, fmt.row, fmt.data[:, None] * X[fmt.col])


def entries(fmt) -> list[Entries]:
    """Every triple: ``row[t]``, ``col[t]``, ``data[t]``."""
    xp = fmt.xp
    return [make(fmt.row, fmt.col, xp.arange(fmt.data.shape[0], dtype=xp.int64), fmt.data)]
