"""Reference ELL product: each row sums its ``width`` slots, skipping padding (``col == -1``)."""

from .._xp import get_xp, scatter_add
from . import register


@register("ell")
def product(fmt, X):
    """``A @ X`` from the ``(width, stride)`` arrays ``col`` and ``data``.

    Slot ``[k, i]`` is entry ``k`` of row ``i``; rows ``>= fmt.shape[0]`` are padding.
    """
    xp = get_xp(X)
    m = fmt.shape[0]
    width = fmt.col.shape[0]
    col = fmt.col[:, :m]
    real = col >= 0
    # Slots taken k-major, as the kernel visits them: each row accumulates k = 0, 1, ... in order.
    rows = xp.broadcast_to(xp.arange(m), (width, m))[real]
    Y = xp.zeros((m, X.shape[1]), dtype=fmt.dtype)
    return scatter_add(Y, rows, fmt.data[:, :m][real][:, None] * X[col[real]])
