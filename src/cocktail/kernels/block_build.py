"""The blocked formats' arrays built on the device in two passes over the CSR and no sort (block_build.cu).

:func:`count` counts every super-row's distinct ``r x c`` blocks (a thread per super-row merges its r sorted rows)
and keeps, per group of ``group`` super-rows, the most blocks one of them holds; an inclusive scan of those (CuPy's)
gives the groups' block-slot pointers, and one transfer the total slots, the last group's and the explicit zeros.
:func:`write` then writes every block's first column and scatters the values into dense, zero-filled blocks laid out
as the format wants (:class:`Layout`).  The arrays are those :func:`cocktail.formats.block_grid.extract` and the
formats' scatters make on the host, to the bit.

Written against the array module of the CSR, so that a launcher running the kernels elsewhere (the tests' CPU
emulation, on NumPy arrays) checks this host side too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import get_xp

#: Threads per block of both kernels (a super-row each).
BLOCK = 256
#: The most rows of a super-row the kernels merge (block_build.cu's BLOCK_BUILD_ROWS).
MAX_ROWS = 8
#: The longest row a thread of the device builds that walk a row's entries one after another (sell_build's slots,
#: part_split's copies) takes: some 0.13 µs an entry, so one row much longer holds the whole pass (on an H200, mip1's
#: two rows of 66,463 entries held a Cocktail's split for 29.7 ms, against 3.2 ms for the masks' CuPy passes;
#: holdout_preferential's of 3,543: 5.2 ms against 3.2).  Longer rows are left to CuPy's passes.
THREAD_ROW_LIMIT = 512

STEM = "block_build"
#: The kernels' word type moving a value of each size in bytes (DIA-VI's one-byte codes included).
WORDS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long", 16: "word16"}
VALUE_WORDS = (2, 4, 8, 16)
INDICES = {4: "int", 8: "long long"}


def expressions(kernel: str, words=VALUE_WORDS) -> tuple[str, ...]:
    """Every instantiation of ``kernel`` (templated on a value word and the index type)."""
    return tuple(f"{kernel}<{WORDS[w]}, {i}>" for w in words for i in INDICES.values())


def word(dtype) -> str:
    """The word type of the kernels moving one value of ``dtype``."""
    return WORDS[np.dtype(dtype).itemsize]


def index_type(dtype) -> str:
    """The kernels' index type for indices of ``dtype``."""
    return INDICES[np.dtype(dtype).itemsize]


def zero_mask(dtype) -> np.uint64:
    """The bits of a value of ``dtype`` (a floating or complex type) that are zero exactly when it compares equal to
    zero: every bit but the sign bit of each real part (for a 16-byte complex, of each 8-byte half)."""
    dtype = np.dtype(dtype)
    part = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    one = (1 << (8 * part - 1)) - 1  # all bits of one part but its sign
    mask = one if dtype.itemsize <= part or part == 8 else one | (one << (8 * part))
    return np.uint64(mask)


@dataclass(frozen=True)
class Counted:
    """What :func:`count` found: ``ptr`` (groups+1,) int64 on the device, the groups' first block slots (each
    group's slots are its widest super-row's blocks times ``group``); ``slots``: their total; ``last``: the last
    group's slots (0 without groups); ``zeros``: the stored values equal to zero."""

    group: int
    groups: int
    ptr: object
    slots: int
    last: int
    zeros: int


@dataclass(frozen=True)
class Layout:
    """Where :func:`write` puts block ``k`` of super-row slot ``s`` (``u = s % group`` of group ``g = s // group``):
    its first column at ``col[ptr[g] + u + k*group]``, its unit (row) ``ri`` at
    ``data[(ptr[g]*pmul + u + k*kstep + ri*rstep)*c : ... + c]``; ``slots`` super-row slots are written (past the
    super-rows, and past a slot's blocks up to its group's width, as padding: column -1, values 0)."""

    slots: int
    kstep: int
    rstep: int
    pmul: int


def count(csr, r: int, c: int, group: int, launch) -> Counted:
    """Pass 1: the block slots of every group of ``group`` super-rows of ``csr`` (see :class:`Counted`).  One launch,
    CuPy's scan (none with at most one group) and one synchronisation."""
    if not 1 <= r <= MAX_ROWS:
        raise ValueError(f"block_build: blocks of at most {MAX_ROWS} rows, got r={r}")
    xp = get_xp(csr.indptr)
    m = int(csr.shape[0])
    superrows = -(-m // r)
    group = max(int(group), 1)
    groups = -(-superrows // group)
    out = xp.zeros(groups + 2, dtype=np.int64)  # [0, group maxima..., explicit zeros]
    if not superrows:  # no rows: nothing to count
        return Counted(group, 0, out[:1], 0, 0, 0)
    launch(STEM, f"block_build_counts<{word(csr.data.dtype)}, {index_type(csr.indptr.dtype)}>", superrows, BLOCK,
           (csr.indptr, csr.indices, csr.data, np.int64(m), np.int64(superrows), np.int32(r), np.int64(c),
            np.int64(group), np.int64(groups), zero_mask(csr.data.dtype), out))
    if groups > 1:
        scan = xp.cumsum(out)
        tail = [int(v) for v in launch.fetch(scan[groups - 1:])]  # ptr[groups-1], ptr[groups], ptr[groups] + zeros
        slots, last, zeros = tail[1], tail[1] - tail[0], tail[2] - tail[1]
        return Counted(group, groups, scan[:groups + 1], slots, last, zeros)
    # one group: [0, slots, zeros] are already its pointers and the count
    slots, zeros = (int(v) for v in launch.fetch(out[1:]))
    return Counted(group, groups, out[:2], slots, slots, zeros)


def write(csr, r: int, c: int, counted: Counted, layout: Layout, col, data, launch) -> None:
    """Pass 2: ``col`` (index dtype) and ``data`` (``csr.data``'s dtype, flat), uninitialised, written whole as
    ``layout`` places the blocks :func:`count` counted.  One launch, none without blocks (nothing to write)."""
    if not layout.slots or not counted.slots:
        return
    m = int(csr.shape[0])
    launch(STEM, f"block_build_write<{word(csr.data.dtype)}, {index_type(csr.indptr.dtype)}>", layout.slots, BLOCK,
           (csr.indptr, csr.indices, csr.data, np.int64(m), np.int64(-(-m // r)), np.int32(r), np.int64(c),
            np.int64(counted.group), np.int64(layout.slots), counted.ptr, np.int64(layout.kstep),
            np.int64(layout.rstep), np.int64(layout.pmul), col, data))


def uninitialised(xp, size: int, dtype):
    """A flat array the kernels write whole (the tests fill it with garbage, to see that they do)."""
    return xp.empty(int(size), dtype=dtype)
