"""csr_vector's rules: when the CSR formats run it, and its threads per row."""

from __future__ import annotations

from ..config import power_of_two_covering

#: Rows this long on average go to csr_vector rather than csr_scalar (Bell & Garland §4.3).
VECTOR_MIN_MEAN_ROW = 4.0
#: Threads per row: the smallest power of two covering the mean row length, within these bounds.
VECTOR_MIN_THREADS, VECTOR_MAX_THREADS = 2, 32


def long_mean_row(rows) -> bool:
    """Whether a CSR matrix of this :class:`~cocktail.kernels.spec.RowShape` runs csr_vector by default."""
    return rows.mean >= VECTOR_MIN_MEAN_ROW


def threads_per_row(mean_row_length: float) -> int:
    """Threads per row: the smallest power of two >= the mean row length, in [2, 32]."""
    return power_of_two_covering(mean_row_length, VECTOR_MIN_THREADS, VECTOR_MAX_THREADS)
