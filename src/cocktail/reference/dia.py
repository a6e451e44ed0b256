"""Reference DIA product: one shifted, bounds-checked axpy per stored diagonal."""

from ..arrays import get_xp, to_numpy
from .entries import Entries, diagonal_entries


def product(fmt, X):
    """``A @ X`` from ``offsets`` and ``data``: ``Y[i] += data[d, i] * X[i + offsets[d]]``.

    Only rows whose column ``i + offsets[d]`` lies inside the matrix are read; padding
    slots (``i >= rows``) and slots outside the matrix never are.
    """
    return diagonal_axpys(fmt, X, lambda d, lo, hi: fmt.data[d, lo:hi])


def diagonal_axpys(fmt, X, values):
    """``Y[i] += values(d, lo, hi)[i - lo] * X[i + offsets[d]]`` for each stored diagonal ``d``, over the
    rows ``lo <= i < hi`` whose column lies inside the matrix (``values`` gives those rows' values)."""
    xp = get_xp(X)
    m, n = fmt.shape
    Y = xp.zeros((m, X.shape[1]), dtype=fmt.dtype)
    for d, off in enumerate(to_numpy(fmt.offsets).tolist()):
        lo, hi = max(0, -off), min(m, n - off)
        if lo < hi:
            Y[lo:hi] += values(d, lo, hi)[:, None] * X[lo + off:hi + off]
    return Y


def entries(fmt) -> list[Entries]:
    """Slot ``[d, i]`` (flat ``d*stride + i``) is row ``i``, column ``i + offsets[d]``.

    Alignment slots (``i >= rows``), slots whose column falls outside the matrix and fill
    (zero slots that are not an explicit zero of the input) are left out.
    """
    return diagonal_entries(fmt)
