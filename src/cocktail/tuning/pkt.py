"""The rules that size PKT packets: vertices per packet and threads per packet.

Bell & Garland §3.6 bound a packet by the local (shared) memory that caches its slice of
``x`` and ``y``; their footnote gives about 2,000 vertices in single precision on 16 KB.
We budget the 48 KiB of shared memory a CUDA block may use without opting in.

The limits of the layout itself (``MAX_PACKET_ROWS``, ``MAX_THREADS_PER_PACKET``) are facts
of the format and live in :mod:`cocktail.formats.pkt`; the caps below stay inside them.
"""

from __future__ import annotations

#: Shared memory one packet's ``x_local`` and ``y_local`` may use together (bytes).
SHARED_MEMORY_BUDGET = 48 * 1024
#: Packet sizes are rounded down to a multiple of this (one warp).
PACKET_ROWS_MULTIPLE = 32
#: Largest default packet: more rows per block gives diminishing returns and long builds.
PACKET_ROWS_CAP = 4096
#: Largest default number of threads (lanes) per packet.
THREADS_PER_PACKET_CAP = 256


def default_packet_rows(itemsize: int) -> int:
    """Vertices per packet so that ``x_local`` and ``y_local`` fit in ``SHARED_MEMORY_BUDGET``.

    ``2 * rows * itemsize <= SHARED_MEMORY_BUDGET``, rounded down to a multiple of
    ``PACKET_ROWS_MULTIPLE`` and capped at ``PACKET_ROWS_CAP``: 4096 for float32,
    3072 for float64 and complex64, 1536 for complex128.
    """
    rows = SHARED_MEMORY_BUDGET // (2 * int(itemsize))
    rows -= rows % PACKET_ROWS_MULTIPLE
    return max(PACKET_ROWS_MULTIPLE, min(PACKET_ROWS_CAP, rows))


def default_threads_per_packet(packet_rows: int) -> int:
    """Lanes per packet: ``packet_rows`` rounded up to a warp multiple, at most ``THREADS_PER_PACKET_CAP``."""
    warps = -(-int(packet_rows) // 32)
    return max(32, min(THREADS_PER_PACKET_CAP, warps * 32))
