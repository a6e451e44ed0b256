"""Where each rank's rows (and entries of ``x``) begin: balanced by entries, plus one per row."""

from __future__ import annotations

import numpy as np


def balanced_offsets(indptr, parts: int) -> np.ndarray:
    """``parts + 1`` row offsets splitting a CSR's rows into ``parts`` consecutive ranges of nearly equal work.

    A row's work is its entries plus one (its ``y`` entry), so a matrix of empty rows still spreads its vectors
    and a dense row stays whole on one rank.  Ranges may be empty (more ranks than rows, or a row heavier than a
    share).  ``indptr`` is the host array of the whole matrix (rows + 1 pointers).
    """
    if not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValueError(f"parts must be a positive int, got {parts!r}")
    indptr = np.asarray(indptr, dtype=np.int64)
    rows = indptr.shape[0] - 1
    work = indptr + np.arange(rows + 1, dtype=np.int64)  # cumulative entries plus rows
    targets = (work[-1] * np.arange(parts + 1, dtype=np.float64) / parts)
    offsets = np.searchsorted(work, targets, side="left").astype(np.int64)
    offsets[0], offsets[-1] = 0, rows
    return np.maximum.accumulate(np.minimum(offsets, rows))


def even_offsets(size: int, parts: int) -> np.ndarray:
    """``parts + 1`` offsets splitting ``size`` items into ranges that differ by at most one."""
    base, extra = divmod(int(size), int(parts))
    counts = np.full(parts, base, dtype=np.int64)
    counts[:extra] += 1
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
