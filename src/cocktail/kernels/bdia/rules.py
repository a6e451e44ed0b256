"""bdia's rule: diagonals per staged piece."""

from __future__ import annotations

#: Bytes of shared memory a block's staged slice of x may take by default (caps piece_width).
#: 16 KiB keeps 8 blocks of 256 threads per SM on H100 (228 KiB) and fits the 48 KiB portable limit.
BDIA_SHARED_BUDGET = 16 * 1024


def piece_width(widest_band: int, block: int, itemsize: int) -> int:
    """Diagonals per staged piece: the widest band, capped so that a block's slice of x (``block + piece - 1``
    values) fits ``BDIA_SHARED_BUDGET``; at least 1."""
    cap = BDIA_SHARED_BUDGET // int(itemsize) - int(block) + 1
    return max(1, min(int(widest_band), cap))
