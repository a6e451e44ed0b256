"""Rules over a CSR matrix's row lengths that several kernels' default rules share (``KernelSpec.default_when``)."""

from __future__ import annotations

#: A CSR matrix runs a load-balanced kernel (csr_merge, or csr_stream where csr_merge does not read its format)
#: when its longest row is this many times the mean and at least LONG_TAIL_MIN_LONGEST.
LONG_TAIL_OVER_MEAN = 64.0
LONG_TAIL_MIN_LONGEST = 2048


def long_tailed(rows) -> bool:
    """Whether a matrix of this :class:`~cocktail.kernels.spec.RowShape` has rows long enough past the mean to
    need a load-balanced kernel."""
    return rows.longest >= LONG_TAIL_MIN_LONGEST and rows.longest > LONG_TAIL_OVER_MEAN * max(rows.mean, 1.0)
