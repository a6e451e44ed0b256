"""A Cocktail's CSR split among its parts on the device in two passes and no sort (part_split.cu).

:func:`split` decides, a thread per row walking its entries in order, which part takes each entry (a lookup table of
the diagonals parts' offsets, the count of the row's entries a prefix part took so far, else the rest), keeps that
part's number (a byte per entry) and counts every part's entries of every row; a scan per part (CuPy's) gives each
part's row pointers and one transfer their sizes.  :meth:`Split.part` then copies a part's entries, in canonical
order, a thread per row.  The parts are those :func:`cocktail.formats.cocktail._selected` and ``_subset`` make on the
host, to the bit.

Written against the array module of the CSR, so that a launcher running the kernels elsewhere (the tests' CPU
emulation, on NumPy arrays) checks this host side too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import get_xp
from . import block_build
from .block_build import INDICES, VALUE_WORDS, WORDS, index_type, word

#: Threads per block of both kernels (a row each).
BLOCK = 256
#: The most parts split on the device: a part's number is a byte, and the number of parts means no part.
MAX_PARTS = 255

#: The longest row split on the device (a thread walks each row's entries, the count then each part's copy: the
#: builds' :data:`~.block_build.THREAD_ROW_LIMIT`); a matrix with a longer row is split by the masks' CuPy passes
#: (:func:`takes`).
LONG_ROW = block_build.THREAD_ROW_LIMIT

STEM = "part_split"


def takes(csr, launch) -> bool:
    """Whether :func:`split` serves ``csr``: no row longer than :data:`LONG_ROW`.  One reduction and one transfer."""
    if not csr.nnz:
        return True
    xp = get_xp(csr.indptr)
    longest = xp.diff(csr.indptr).max().reshape(1)
    return int(launch.fetch(longest)[0]) <= LONG_ROW


def expressions() -> tuple[str, ...]:
    """Every instantiation: the count per index type, the fill per value word and index type."""
    count = tuple(f"part_split_count<{i}>" for i in INDICES.values())
    fill = tuple(f"part_split_fill<{WORDS[w]}, {i}>" for w in VALUE_WORDS for i in INDICES.values())
    return count + fill


@dataclass
class Split:
    """What :func:`split` found: every entry's part (``part_of``, a byte each) and each part's row pointers
    (``indptrs``, on the device) and entry count (``sizes``)."""

    csr: object
    launch: object
    part_of: object
    indptrs: list
    sizes: list

    def part(self, p: int):
        """``(data, indices, indptr)`` of part ``p``: its entries in canonical order.  One launch, none for an empty
        part."""
        csr = self.csr
        xp = get_xp(csr.indptr)
        size = self.sizes[p]
        data = block_build.uninitialised(xp, size, csr.data.dtype)
        indices = block_build.uninitialised(xp, size, csr.indices.dtype)
        if size:
            self.launch(STEM, f"part_split_fill<{word(csr.data.dtype)}, {index_type(csr.indptr.dtype)}>",
                        csr.shape[0], BLOCK, (csr.indptr, csr.indices, csr.data, np.int64(csr.shape[0]),
                                              self.part_of, np.int64(p), self.indptrs[p], indices, data))
        return data, indices, self.indptrs[p]


def _table(xp, shape, selectors):
    """The diagonals parts' lookup table (see part_split.cu), or None without such a part."""
    m, n = (int(d) for d in shape)
    listed = [(p, s[1]) for p, s in enumerate(selectors) if s[0] == "diagonals"]
    if not listed:
        return None
    table = xp.full(max(m + n - 1, 1), len(selectors), dtype=np.uint8)
    offsets = np.concatenate([o for _, o in listed])
    owners = np.concatenate([np.full(o.shape[0], p, dtype=np.uint8) for p, o in listed])
    inside = (offsets > -m) & (offsets < n)
    offsets, owners = offsets[inside], owners[inside]
    if offsets.size:
        unique, first = np.unique(offsets, return_index=True)  # the first part listing each
        table[xp.asarray(unique + (m - 1))] = xp.asarray(owners[first])
    return table


def split(csr, selectors, launch) -> Split:
    """Pass 1: which of the parts ``selectors`` takes each entry of ``csr``, in order, and every part's row pointers
    and size.  ``selectors``, checked, at most :data:`MAX_PARTS`: ``("diagonals", offsets)`` (a 1-D int64 NumPy
    array), ``("row_prefix", k)`` or ``("rest",)``.  One launch, a scan per part and one synchronisation (none
    without entries)."""
    xp = get_xp(csr.indptr)
    m, nnz = int(csr.shape[0]), int(csr.nnz)
    parts = len(selectors)
    if not 1 <= parts <= MAX_PARTS:
        raise ValueError(f"part_split: 1 to {MAX_PARTS} parts, got {parts}")
    codes = np.array([-1 if s[0] == "diagonals" else min(int(s[1]), nnz) if s[0] == "row_prefix" else nnz
                      for s in selectors], dtype=np.int64)
    counts = xp.zeros((parts, m + 1), dtype=csr.indptr.dtype)
    part_of = block_build.uninitialised(xp, nnz, np.uint8)
    if nnz:
        launch(STEM, f"part_split_count<{index_type(csr.indptr.dtype)}>", m, BLOCK,
               (csr.indptr, csr.indices, np.int64(m), np.int64(parts), xp.asarray(codes),
                _table(xp, csr.shape, selectors), counts, part_of))
    indptrs = [xp.cumsum(counts[p], dtype=csr.indptr.dtype) for p in range(parts)]
    sizes = [0] * parts
    if nnz:
        sizes = [int(v) for v in launch.fetch(xp.stack([ptr[-1] for ptr in indptrs]))]
    return Split(csr, launch, part_of, indptrs, sizes)
