"""sell's rule: threads per row."""

from __future__ import annotations

from ..config import power_of_two_covering

#: Threads per row, the smallest power of two giving each lane at most SELL_SLOTS_PER_LANE slots of the mean slice
#: width, within these bounds (the kernel is instantiated for 1, 2, 4, 8).
SELL_MIN_THREADS, SELL_MAX_THREADS = 1, 8
SELL_SLOTS_PER_LANE = 8


def threads_per_row(mean_slice_width: float) -> int:
    """Threads per row: the smallest power of two t with ``mean_slice_width / t <= SELL_SLOTS_PER_LANE``, in [1, 8].

    Every row of a slice walks the slice's width (up to its own length), so the mean slice
    width is the work per row.  Slots of one column are coalesced across rows already, so a
    single lane per row suits short rows; longer rows get more lanes so that a warp keeps more
    loads in flight and the shuffle reduction stays short next to the loads.
    """
    return power_of_two_covering(mean_slice_width / SELL_SLOTS_PER_LANE, SELL_MIN_THREADS, SELL_MAX_THREADS)
