"""The operands of a block product ``Y = alpha*A@X + beta*Y``: k columns and both arrays' element steps.

Block kernels address ``X[r, c]`` as ``x[r * x_row_step + c * x_col_step]`` (and ``Y`` alike), so a
row-major, column-major or strided operand is read and written where it lies, without a copy.
Launches are bound for one :class:`BlockOperands` (its steps are kernel arguments).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Bytes a vector strip moves per load or store (float4, double2).
VECTOR_BYTES = 16


@dataclass(frozen=True)
class BlockOperands:
    """``k`` columns; ``x_steps`` and ``y_steps``: (row step, column step) in elements; ``aligned``: both
    arrays start on a 16-byte boundary."""

    k: int
    x_steps: tuple[int, int]
    y_steps: tuple[int, int]
    aligned: bool = True

    @classmethod
    def of(cls, X, Y) -> BlockOperands | None:
        """The steps of 2-D device arrays ``X`` (n, k) and ``Y`` (m, k), or None where a kernel cannot
        address them in place: a step that is negative or not whole elements, or a ``Y`` whose
        elements overlap (a zero step over more than one element)."""
        x_steps, y_steps = _steps(X), _steps(Y)
        if x_steps is None or y_steps is None:
            return None
        if any(step == 0 and size > 1 for step, size in zip(y_steps, Y.shape)):
            return None
        aligned = _address(X) % VECTOR_BYTES == 0 and _address(Y) % VECTOR_BYTES == 0
        return cls(int(X.shape[1]), x_steps, y_steps, bool(aligned))

    @classmethod
    def row_major(cls, k: int) -> BlockOperands:
        """C-ordered ``X`` and ``Y`` of ``k`` columns."""
        return cls(int(k), (int(k), 1), (int(k), 1))

    @classmethod
    def of_width(cls, k: int, shape, row_major: bool = True) -> BlockOperands:
        """Whole ``X`` and ``Y`` of ``k`` columns for a matrix of ``shape``: C-ordered, or F-ordered (each column
        contiguous)."""
        if row_major:
            return cls.row_major(k)
        m, n = shape
        return cls(int(k), (1, max(n, 1)), (1, max(m, 1)))

    @property
    def x_row_major(self) -> bool:
        """Whether consecutive columns of a row of ``X`` are adjacent (lanes over columns read coalesced)."""
        return self.x_steps[1] == 1 or self.k == 1

    def vectors_fit(self, columns: int, itemsize: int) -> bool:
        """Whether strips of ``columns`` adjacent columns can move in 16-byte words: both column steps 1,
        ``k`` and both row steps multiples of ``columns``, whole words, both arrays aligned (spmm.cuh)."""
        return (self.aligned and self.x_steps[1] == 1 and self.y_steps[1] == 1
                and (columns * itemsize) % VECTOR_BYTES == 0 and self.k % columns == 0
                and self.x_steps[0] % columns == 0 and self.y_steps[0] % columns == 0)

    def args(self) -> tuple:
        """The kernel arguments of COCKTAIL_BLOCK_ARGS (spmm.cuh)."""
        return tuple(np.int64(v) for v in (self.k, *self.x_steps, *self.y_steps))


def _address(a) -> int:
    """The address of ``a``'s first element (a CuPy or NumPy array)."""
    ptr = getattr(a.data, "ptr", None)
    return int(ptr) if ptr is not None else int(a.__array_interface__["data"][0])


def _steps(a) -> tuple[int, int] | None:
    """``a``'s strides in elements, or None where one is negative or not a whole number of elements."""
    item = a.dtype.itemsize
    steps = []
    for stride in a.strides:
        if stride < 0 or stride % item:
            return None
        steps.append(stride // item)
    return tuple(steps)
