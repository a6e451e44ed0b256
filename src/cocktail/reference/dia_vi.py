"""Reference DIA-VI product: DIA's shifted, bounds-checked axpys with each slot's value decoded from the table."""

from .dia import diagonal_axpys
from .entries import Entries, diagonal_cells, flat, stored


def product(fmt, X):
    """``A @ X`` from ``offsets``, ``codes`` and ``table``: ``Y[i] += table[codes[d, i]] * X[i + offsets[d]]``.

    Only rows whose column ``i + offsets[d]`` lies inside the matrix are read; padding
    slots (``i >= rows``) and slots outside the matrix never are.
    """
    return diagonal_axpys(fmt, X, lambda d, lo, hi: fmt.table[fmt.codes[d, lo:hi]])


def entries(fmt) -> list[Entries]:
    """Cell ``[d, i]`` (as DIA's) has the value ``table[codes[d, i]]``: its position in ``table`` is its code.

    Alignment slots, slots whose column falls outside the matrix and fill (cells whose value
    is 0 that are not an explicit zero of the input) are left out.
    """
    rows, cols, slots = diagonal_cells(fmt)
    return [stored(fmt, rows, cols, flat(fmt.codes)[slots], fmt.table)]
