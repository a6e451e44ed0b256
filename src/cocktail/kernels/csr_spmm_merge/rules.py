"""csr_spmm_merge's rules: merge items per share, lanes and columns, columns per launch."""

from __future__ import annotations

from ..block_operands import VECTOR_BYTES
from ..config import power_of_two_covering

#: Merge items (row ends + nonzeros) per share, at most and at least (fewer on smaller matrices, so that
#: SPMM_MERGE_SHARES_PER_THREAD_SLOT shares per resident thread of the device keep it busy), and the longest run of
#: shares carrying one row that the fix-up sums a thread per column (longer runs get a block each).
SPMM_MERGE_ITEMS, SPMM_MERGE_MIN_ITEMS, SPMM_MERGE_SHORT_RUN = 128, 16, 8
SPMM_MERGE_SHARES_PER_THREAD_SLOT = 0.25
#: Columns per launch (the carry buffer made once per matrix holds this many per share).  Every launch walks the
#: whole matrix: at k = 64, 64 columns a launch ran 2.0-3.1x faster than 16 on powerlaw_1M and rmat19 (H200,
#: float32 and float64, docs/benchmarks/2026-11-26-h200-spmm/merge_sweep_35650d5.json.gz, measured by
#: scripts/spmm_merge_sweep.py, removed after 1bf8873; in git history); the buffer is shares x 64 values.
SPMM_MERGE_CHUNK = 64
#: Lanes per share, within these bounds, and columns per lane: SPMM_MERGE_COLUMNS, or for a row-major X a 16-byte
#: word of them (4 float32, 2 float64: vector strips, 1.1-1.3x faster at k = 16 in the same sweep).  A share is a
#: long serial walk, so the kernel wants many lanes in flight more than long strips: narrower strips and more lanes
#: (idle ones included when k is small) than csr_spmm.
SPMM_MERGE_MIN_LANES, SPMM_MERGE_MAX_LANES, SPMM_MERGE_COLUMNS = 4, 8, 2


def items_per_share(merge_items: int, resident_threads: int) -> int:
    """Merge items per share for a matrix of ``merge_items`` (``m + nnz``): enough shares for
    SPMM_MERGE_SHARES_PER_THREAD_SLOT of the device's ``resident_threads`` each, within
    [SPMM_MERGE_MIN_ITEMS, SPMM_MERGE_ITEMS]."""
    wanted_shares = max(1.0, resident_threads * SPMM_MERGE_SHARES_PER_THREAD_SLOT)
    return int(min(SPMM_MERGE_ITEMS, max(SPMM_MERGE_MIN_ITEMS, merge_items // wanted_shares)))


def merge_shape(k: int, row_major: bool = True, itemsize: int = 8) -> tuple[int, int]:
    """``(lanes per share, columns per lane)`` for ``k`` columns of values of ``itemsize`` bytes: strips of
    SPMM_MERGE_COLUMNS columns, or for a row-major X of a 16-byte word of columns (at least SPMM_MERGE_COLUMNS),
    lanes the smallest power of two covering ``k`` within [SPMM_MERGE_MIN_LANES, SPMM_MERGE_MAX_LANES] (wider
    blocks run in tiles, each its own unit of work)."""
    columns = max(SPMM_MERGE_COLUMNS, VECTOR_BYTES // itemsize) if row_major else SPMM_MERGE_COLUMNS
    return power_of_two_covering(k / columns, SPMM_MERGE_MIN_LANES, SPMM_MERGE_MAX_LANES), columns
