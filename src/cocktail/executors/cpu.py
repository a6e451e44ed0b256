"""The ``cpu`` executor: SciPy's compiled product where SciPy has the format's layout, else the reference.

A DIA whose SciPy copy (``ndiag`` x the columns its diagonals reach) would be far larger than the
format, or would not fit in free host memory, runs the reference product instead (kernel
``"reference"``; see :func:`~cocktail.reference.scipy_layout.dia_copy_fits`): a wide matrix with
a far diagonal is computed, not refused, and nothing of the size of its columns is allocated.
"""

from __future__ import annotations

from ..reference import arithmetic_form
from ..reference.scipy_layout import scipy_matrix
from .base import Executor
from .reference import HostReference, combine


class CpuExecutor(Executor):
    """``S @ x`` with the SciPy matrix built once from the format (csr, coo, dia, bcsr); the reference otherwise
    (other formats, a BCSR with a partial edge block, a DIA whose SciPy copy would not be worth making)."""

    name = "cpu"
    overlap_safe = True

    def __init__(self, storage):
        self.storage = storage
        # SciPy has no half arithmetic: a half or narrower-stored matrix is given to it in its arithmetic dtype.
        wide = arithmetic_form(storage)
        self._scipy, self._arithmetic = scipy_matrix(wide), wide.dtype
        self._fallback = HostReference(storage) if self._scipy is None else None
        self.kernel = "reference" if self._scipy is None else "scipy"

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*A@x + beta*y`` with SciPy's matvec (or the reference product)."""
        if self._fallback is not None:
            self._fallback.run(x, y, alpha, beta)
        else:
            combine(y, (self._scipy @ self._wide(x)).reshape(y.shape), alpha, beta)  # a 1-row COO answers a scalar

    def fresh(self, x, y_empty, alpha):
        """SciPy's own result array, scaled in place (no copy into ``y_empty``)."""
        if self._fallback is not None:
            return super().fresh(x, y_empty, alpha)
        y = (self._scipy @ self._wide(x)).reshape(y_empty.shape)
        if alpha != 1:
            y *= alpha
        return y.astype(y_empty.dtype, copy=False)

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """One product for the whole block."""
        return (True,)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """SciPy's product of the whole block (or the reference's)."""
        return (self.kernel,)

    def run_block(self, X, Y, alpha, beta) -> None:
        """The same for a block of vectors in one call."""
        if self._fallback is not None:
            self._fallback.run_block(X, Y, alpha, beta)
        else:
            combine(Y, self._scipy @ self._wide(X), alpha, beta)

    def _wide(self, x):
        """``x`` in the arithmetic dtype (SciPy takes no half operand)."""
        return x.astype(self._arithmetic, copy=False)
