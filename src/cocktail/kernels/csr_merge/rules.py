"""csr_merge's rules: when the CSR formats run a load-balanced kernel, and its merge items per thread."""

from __future__ import annotations

#: A CSR matrix runs a load-balanced kernel (csr_merge, or csr_stream where csr_merge does not read its format)
#: when its longest row is this many times the mean and at least MERGE_MIN_LONGEST.
MERGE_LONGEST_OVER_MEAN = 64.0
MERGE_MIN_LONGEST = 2048
#: Merge items (row ends + nonzeros) per thread (Merrill & Garland use 7 on Maxwell-class GPUs).
MERGE_ITEMS_PER_THREAD = 7


def long_tailed(rows) -> bool:
    """Whether a matrix of this :class:`~cocktail.kernels.spec.RowShape` has rows long enough past the mean to
    need a load-balanced kernel."""
    return rows.longest >= MERGE_MIN_LONGEST and rows.longest > MERGE_LONGEST_OVER_MEAN * max(rows.mean, 1.0)
