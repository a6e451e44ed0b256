"""Reference BDIA product: walk each band's consecutive diagonals."""

from ..arrays import get_xp, to_numpy
from .entries import Entries, diagonal_entries


def product(fmt, X):
    """``A @ X`` from ``offsets``, ``band_ptr`` and ``data``.

    Row ``j`` of band ``b`` (``band_ptr[b] <= j < band_ptr[b+1]``) is the diagonal of offset
    ``offsets[b] + j - band_ptr[b]``; ``Y[i] += data[j, i] * X[i + offset]`` for the rows whose
    column lies inside the matrix.
    """
    xp = get_xp(X)
    m, n = fmt.shape
    Y = xp.zeros((m, X.shape[1]), dtype=fmt.dtype)
    ptr = to_numpy(fmt.band_ptr).tolist()
    for b, first in enumerate(to_numpy(fmt.offsets).tolist()):
        for j in range(ptr[b], ptr[b + 1]):
            off = first + j - ptr[b]
            lo, hi = max(0, -off), min(m, n - off)
            if lo < hi:
                Y[lo:hi] += fmt.data[j, lo:hi, None] * X[lo + off:hi + off]
    return Y


def entries(fmt) -> list[Entries]:
    """As DIA, with the offset of data row ``j`` expanded from the bands (``fmt.diagonals()``).

    Alignment slots, slots whose column falls outside the matrix and fill are left out.
    """
    return diagonal_entries(fmt)
