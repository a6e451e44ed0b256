"""bcsr's rule: lanes per superrow."""

from __future__ import annotations

from ..config import power_of_two_covering

#: Lanes per superrow, the smallest power of two covering the mean blocks per superrow, within these bounds.
BCSR_MIN_THREADS, BCSR_MAX_THREADS = 2, 32


def threads_per_superrow(mean_blocks: float) -> int:
    """Lanes per superrow: the smallest power of two >= the mean blocks per superrow, in [2, 32]."""
    return power_of_two_covering(mean_blocks, BCSR_MIN_THREADS, BCSR_MAX_THREADS)
