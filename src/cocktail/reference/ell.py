"""Reference ELL product: each row sums its ``width`` slots, skipping padding (``col == -1``)."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


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


def entries(fmt) -> list[Entries]:
    """Slot ``[k, i]`` (flat ``k*stride + i``) of a real row ``i < rows`` with ``col != -1``.

    Listed row by row, each row's slots in order (k = 0, 1, ...).  Padding (``col == -1``)
    and the alignment rows ``i >= rows`` are left out.
    """
    xp = fmt.xp
    m = fmt.shape[0]
    stride = fmt.stride
    i, k = xp.nonzero(fmt.col[:, :m].T >= 0)
    return [make(i, fmt.col[k, i], k * stride + i, fmt.data)]
