"""Reference SELL product: slice by slice, each permuted row sums its slots, then y[perm[p]]."""

from ..arrays import get_xp, scatter_add
from .entries import Entries, make


def product(fmt, X):
    """``A @ X`` from ``slice_ptr``, ``slice_width``, ``col`` (short ones through ``slice_base``: ``fmt.columns()``),
    ``data`` and ``perm``.

    Slot ``slice_ptr[s] + k*C + r`` (``k < slice_width[s]``, ``r < C``) is entry ``k`` of
    permuted row ``s*C + r``; padding (column -1) and rows past the matrix are skipped.
    """
    xp = get_xp(X)
    m = fmt.shape[0]
    c = int(fmt.params["slice_height"])
    ptr = fmt.slice_ptr.astype(xp.int64)
    sizes = fmt.slice_width.astype(xp.int64) * c
    # Every (slice, offset < width*C) pair, k-major within a slice as the kernel walks them.
    starts = xp.cumsum(sizes) - sizes
    flat = xp.arange(int(sizes.sum()), dtype=xp.int64)
    s = xp.searchsorted(starts + sizes, flat, side="right")
    within = flat - starts[s]
    slot = ptr[s] + within
    p = s * c + within % c
    col = fmt.columns()[slot]
    real = (col >= 0) & (p < m)
    Yp = xp.zeros((m, X.shape[1]), dtype=fmt.dtype)
    scatter_add(Yp, p[real], fmt.data[slot][real][:, None] * X[col[real]])
    Y = xp.zeros_like(Yp)
    Y[fmt.perm.astype(xp.int64)] = Yp
    return Y


def entries(fmt) -> list[Entries]:
    """Slot ``t = slice_ptr[s] + k*C + r``: permuted row ``s*C + r``, original row ``perm[s*C + r]``.

    Padding (``col == -1``, which includes the missing rows of a partial last slice) is
    left out; the permuted row must also lie inside the matrix.
    """
    xp = fmt.xp
    m = fmt.shape[0]
    c = fmt.slice_height
    ptr = fmt.slice_ptr.astype(xp.int64)
    columns = fmt.columns()
    slot = xp.nonzero(columns >= 0)[0].astype(xp.int64)
    s = xp.searchsorted(ptr, slot, side="right") - 1  # empty slices share their pointer: the last wins
    p = s * c + (slot - ptr[s]) % c
    slot, p = slot[p < m], p[p < m]
    return [make(fmt.perm.astype(xp.int64)[p], columns[slot], slot, fmt.data)]
