"""csr_stream's rules: nonzeros per lane, the shape of its partition and its block size."""

from __future__ import annotations

from ..device import WARP_SIZE

#: Nonzeros per lane of a warp item (an item holds 32 times as many).
STREAM_ITEMS_PER_LANE = 8
#: Rows longer than this share of an item get items of their own (their lanes then reduce them together);
#: shorter rows are packed into runs, so a run's start is never more than this far behind its nominal place
#: and a run fills about ``1 - share`` of an item on average.
STREAM_OWN_ROW_SHARE = 1 / 4
#: Rows per run of short rows, as a multiple of the item's nonzeros (bounds the lane-per-row loop on runs of
#: empty or one-entry rows).
STREAM_ROWS_PER_NONZERO = 1


def partition_shape(items_per_lane: int) -> tuple[int, int]:
    """``(own_row, rows_per_item)`` of the partition for ``items_per_lane`` nonzeros per lane."""
    capacity = WARP_SIZE * int(items_per_lane)
    return max(1, int(capacity * STREAM_OWN_ROW_SHARE)), max(1, int(capacity * STREAM_ROWS_PER_NONZERO))


def staged_block_threads(block: int, bytes_per_thread: int, shared_limit: int) -> int:
    """The rule's ``block`` threads, halved (whole warps, at least one) until what each thread stages in shared
    memory fits the block's ``shared_limit`` (products of a complex128 matrix at 16 items per lane)."""
    while block > WARP_SIZE and block * bytes_per_thread > shared_limit:
        block = max(WARP_SIZE, block // 2 // WARP_SIZE * WARP_SIZE)
    return block
