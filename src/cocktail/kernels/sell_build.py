"""SELL's and ELL's arrays built on the device in two passes over the CSR and no sort (sell_build.cu).

:func:`slices` finds, a thread per row, every slice's longest row and, for short columns, its lowest and highest
column (a row's first and last entry); the format then scans the slices' widths (CuPy's) and brings the few facts
its checks need to the host in one transfer.  :func:`write` writes every slot, a thread per row of the slices: the
row's entries, then its padding, so neither output is filled first.  ELL is the one slice of ``stride`` rows
(:func:`ell`).  The arrays are those the formats' scatters make on the host, to the bit.

Written against the array module of the CSR, so that a launcher running the kernels elsewhere (the tests' CPU
emulation, on NumPy arrays) checks this host side too.
"""

from __future__ import annotations

import numpy as np

from ..arrays import get_xp
from ..formats.sell import SHORT_PADDING
from . import block_build
from .block_build import INDICES, VALUE_WORDS, WORDS, index_type, word

#: Threads per block of both kernels (a row of the slices each).
BLOCK = 256

#: The widest slice written on the device (a thread writes each row's slots, its entries then its padding: the
#: builds' :data:`~.block_build.THREAD_ROW_LIMIT`); wider slices are written by CuPy's scatter.
LONG_ROW = block_build.THREAD_ROW_LIMIT

STEM = "sell_build"
#: The type of a short column (a 16-bit offset from its slice's lowest column).
SHORT = "unsigned short"


def expressions() -> tuple[str, ...]:
    """Every instantiation: the slices' pass per index type, the write per value word, index type and column type
    (the index type, or short columns)."""
    slices = tuple(f"sell_build_slices<{i}>" for i in INDICES.values())
    write = tuple(f"sell_build_write<{WORDS[w]}, {i}, {c}>" for w in VALUE_WORDS for i in INDICES.values()
                  for c in (i, SHORT))
    return slices + write


def slices(csr, c: int, nslices: int, perm, spans: bool, launch):
    """Pass 1: ``(longest, lo, hi)``, int64 per slice of ``c`` rows (``perm[p]`` the row at position ``p``, None:
    unpermuted): the most entries a row of the slice holds and, with ``spans``, the lowest and highest column it
    stores (the largest int64 and -1 for a slice holding nothing; both None without ``spans``).  One launch (none
    without rows), no synchronisation."""
    xp = get_xp(csr.indptr)
    m = int(csr.shape[0])
    longest = xp.zeros(nslices, dtype=np.int64)
    lo = hi = None
    if spans:
        lo = xp.full(nslices, np.iinfo(np.int64).max, dtype=np.int64)
        hi = xp.full(nslices, -1, dtype=np.int64)
    if m:
        launch(STEM, f"sell_build_slices<{index_type(csr.indptr.dtype)}>", m, BLOCK,
               (csr.indptr, csr.indices, np.int64(m), np.int64(c), perm, longest, lo, hi))
    return longest, lo, hi


def write(csr, c: int, ptr, total: int, perm, base, launch):
    """Pass 2: ``(col, data)``, flat, the ``total`` slots of the slices of ``c`` rows whose slice ``s`` starts at
    ``ptr[s]`` (int64, on the device, ``ptr[-1] == total``; ``perm`` as for :func:`slices`): each row's columns
    (less ``base[s]`` as 16-bit short columns where ``base``, int64, is given, else in the index dtype) and values
    in its first slots, the padding (-1, or SHORT_PADDING for short columns, and a zero value) in the others.  One launch,
    none without slots."""
    xp = get_xp(csr.indptr)
    short = base is not None
    col = block_build.uninitialised(xp, total, np.uint16 if short else csr.index_dtype)
    data = block_build.uninitialised(xp, total, csr.data.dtype)
    if total:
        itype = index_type(csr.indptr.dtype)
        rows = (int(ptr.shape[0]) - 1) * int(c)
        launch(STEM, f"sell_build_write<{word(csr.data.dtype)}, {itype}, {SHORT if short else itype}>", rows,
               BLOCK, (csr.indptr, csr.indices, csr.data, np.int64(csr.shape[0]), np.int64(rows), np.int64(c),
                       perm, ptr, base, np.int64(SHORT_PADDING if short else -1), col, data))
    return col, data


def ell(csr, width: int, stride: int, launch):
    """ELL's ``(col, data)``, each ``(width, stride)``: the one slice of ``stride`` rows, ``width`` slots wide
    (at least the longest row).  One launch, none without slots."""
    xp = get_xp(csr.indptr)
    total = int(width) * int(stride)
    ptr = xp.arange(2, dtype=np.int64) * total  # [0, total], made on the device
    col, data = write(csr, stride, ptr, total, None, None, launch)
    return col.reshape(width, stride), data.reshape(width, stride)
