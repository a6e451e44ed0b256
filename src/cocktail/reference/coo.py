"""Reference COO product: scatter each triple's product into its row."""

from .._xp import get_xp, scatter_add
from . import register


@register("coo")
def product(fmt, X):
    """``A @ X`` from ``row``, ``col`` and ``data``."""
    xp = get_xp(X)
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, fmt.row, fmt.data[:, None] * X[fmt.col])
