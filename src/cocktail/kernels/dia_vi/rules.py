"""dia_vi's rule: rows per thread."""

from __future__ import annotations

#: Rows per thread when a thread's codes of a diagonal can be loaded as one word (else 1).
DIA_VI_ROWS_PER_THREAD = 4


def rows_per_thread(aligned) -> int:
    """DIA_VI_ROWS_PER_THREAD when ``aligned(rows)`` says the codes of that many rows load as one word (a warp
    then reads 128 contiguous bytes of codes per diagonal), else 1."""
    return DIA_VI_ROWS_PER_THREAD if aligned(DIA_VI_ROWS_PER_THREAD) else 1
