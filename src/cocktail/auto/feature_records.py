"""The records the features are handed over in: host values only, frozen.

:class:`Features` holds one matrix's counts (:func:`~.features.compute` measures them): its diagonals'
(:class:`DiagonalCounts`, or :class:`TableDiagonals` for a matrix occupying very many), its blocks' of every
candidate shape (:class:`BlockStats`) and the widest rows of its row groups (:class:`GroupWidths`, which
answers the padded slots a group-padded layout stores).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..arrays import get_xp, to_numpy

#: Distinct values are counted up to this many (one more than a one-byte code addresses); more count as this.
DISTINCT_CAP = 257


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class DiagonalCounts:
    """Nonzeros on every occupied diagonal (clSpMV §4.2): host arrays sorted by offset.

    ``offsets`` (int64): ``col - row`` of each diagonal holding at least one stored entry;
    ``counts`` (int64): its stored entries (explicit zeros count).  ``shape`` is the
    matrix shape, used for the diagonal lengths.
    """

    shape: tuple
    offsets: np.ndarray
    counts: np.ndarray

    def lengths(self) -> np.ndarray:
        """In-matrix cells of each occupied diagonal: ``min(m, n - k) - max(0, -k)``."""
        m, n = self.shape
        k = self.offsets
        return np.minimum(m, n - k) - np.maximum(0, -k)

    def fill(self) -> np.ndarray:
        """``counts / lengths`` of each occupied diagonal (1.0: every cell stored)."""
        return self.counts / self.lengths() if self.offsets.shape[0] else np.zeros(0)

    def dense_diagonals(self, threshold: float) -> np.ndarray:
        """Offsets (sorted) of the diagonals whose fill ``count / length`` is at least ``threshold``."""
        return self.offsets[self.fill() >= threshold]

    def __len__(self) -> int:
        return int(self.offsets.shape[0])

    def most(self) -> int:
        """The most entries on one diagonal (0 without any)."""
        return int(self.counts.max()) if len(self) else 0

    def lowest(self) -> int:
        """The lowest occupied offset; only asked of a matrix with entries."""
        return int(self.offsets[0])

    def fuller(self, bound: float, strict: bool = True) -> tuple:
        """``(offsets, counts)`` (offsets rising) of the diagonals holding more than (``strict``) or at least
        ``bound`` entries."""
        keep = self.counts > bound if strict else self.counts >= bound
        return self.offsets[keep], self.counts[keep]

    def __eq__(self, other):
        if not isinstance(other, DiagonalCounts):
            return NotImplemented
        return (tuple(self.shape) == tuple(other.shape) and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.counts, other.counts))

    __hash__ = None


class TableDiagonals(DiagonalCounts):
    """:class:`DiagonalCounts` of a matrix occupying many diagonals (a graph's 10^5-10^6), kept as the device's
    count per diagonal: how many, the most entries on one and the lowest offset are known, the sorted arrays are
    read off the table only when first asked (the planner of such a matrix never asks; a list of 10^6
    diagonals costs milliseconds to copy).  The table (4 bytes a diagonal) stays on the device until then."""

    def __init__(self, shape, table, occupied: int, most: int, lowest: int):  # noqa: D107 - no dataclass fields set
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_facts", (int(occupied), int(most), int(lowest)))

    @functools.cached_property
    def _arrays(self):
        xp = get_xp(self._table)
        slots = xp.flatnonzero(self._table)
        offsets = to_numpy(slots).astype(np.int64) + (1 - int(self.shape[0]))
        counts = to_numpy(self._table[slots]).astype(np.int64)
        object.__setattr__(self, "_table", None)
        return _readonly(offsets), _readonly(counts)

    offsets = property(lambda self: self._arrays[0], doc="As :attr:`DiagonalCounts.offsets`, read on first use.")
    counts = property(lambda self: self._arrays[1], doc="As :attr:`DiagonalCounts.counts`, read on first use.")

    def __len__(self) -> int:
        return self._facts[0]

    def most(self) -> int:
        return self._facts[1]

    def lowest(self) -> int:
        return self._facts[2]

    def fuller(self, bound: float, strict: bool = True) -> tuple:
        """As :meth:`DiagonalCounts.fuller`, read off the table on its device while the arrays are not (a
        graph's few full diagonals, without copying its million others)."""
        if "_arrays" in vars(self):
            return super().fuller(bound, strict)
        xp = get_xp(self._table)
        slots = xp.flatnonzero(self._table > bound if strict else self._table >= bound)
        counts = to_numpy(self._table[slots]).astype(np.int64)
        return to_numpy(slots).astype(np.int64) + (1 - int(self.shape[0])), counts


@dataclass(frozen=True)
class BlockStats:
    """The ``r x c`` blocks of a matrix on the aligned block grid (clSpMV §4.4).

    ``total``: blocks holding at least one stored entry; ``max_per_superrow``: the most such
    blocks in one super-row (``r`` consecutive rows); ``dense``: blocks with all ``r*c``
    cells stored (a block reaching past the matrix edge is never dense); ``fill``:
    ``total*r*c / nnz``, value slots per stored entry (1.0 when ``nnz`` is 0);
    ``superrow_histogram``: super-rows per bucket of their block count, bucket layout
    :func:`~.feature_histograms.length_buckets` of ``max_per_superrow``; ``sliced_total``: block slots of SBELL with
    :data:`~.features.SBELL_HEIGHT` super-rows per slice (each slice as wide as its fullest super-row).
    """

    total: int
    max_per_superrow: int
    dense: int
    fill: float
    superrow_histogram: tuple = ()
    sliced_total: int = 0


@dataclass(frozen=True, eq=False)
class GroupWidths:
    """The widest row of every group of ``size`` consecutive rows (the last group may be partial).

    ``counts[w]`` is the number of groups whose widest row holds ``w`` entries, for ``w`` up
    to ``cap``; ``counts[cap+1]`` counts the wider groups and ``over_sum`` sums their widths;
    ``max_width`` is the widest row.
    With ``size`` = C this gives SELL's slots; with ``size`` = 32 / t the steps of a warp of a
    CSR kernel with ``t`` lanes per row; with ``size`` = 1 the exact row-length distribution.
    """

    size: int
    counts: np.ndarray
    over_sum: int
    cap: int
    max_width: int = 0

    def padded_slots(self, lanes: int = 1, limit: int | None = None, skip: int = 0) -> int:
        """Slots when every row of a group is padded to the group's widest row.

        ``lanes`` rounds each width up to a multiple of it (lanes share a row); ``skip`` first
        removes that many entries from every row (a part taken before) and ``limit`` keeps at
        most that many (a part holding a row prefix).
        """
        widths, counts, known = self._occupied
        key = (lanes, limit, skip)
        if key in known:  # the planner asks the same few questions of every variant
            return known[key]
        wide = np.maximum(widths - skip, 0)
        if limit is not None:
            wide = np.minimum(wide, limit)
        steps = -(-wide // lanes)
        total = int((counts * steps).sum())
        over = int(self.counts[self.cap + 1])
        if over:  # widths past the cap: their mean width, lanes rounding neglected
            mean = max(self.over_sum / over - skip, 0)
            total += int(over * -(-(mean if limit is None else min(mean, limit)) // lanes))
        known[key] = total * lanes * self.size
        return known[key]

    @functools.cached_property
    def _occupied(self) -> tuple:
        """``(widths, counts, answers)``: the widths up to the cap that some group has, their counts, and
        the answers of :meth:`padded_slots` so far."""
        counts = self.counts[:self.cap + 1]
        widths = np.nonzero(counts)[0].astype(np.int64)
        return widths, counts[widths].astype(np.int64), {}

    def __eq__(self, other):
        if not isinstance(other, GroupWidths):
            return NotImplemented
        return ((self.size, self.over_sum, self.cap, self.max_width)
                == (other.size, other.over_sum, other.cap, other.max_width)
                and np.array_equal(self.counts, other.counts))

    __hash__ = None

    def covered(self, limit: int) -> int:
        """Entries of the rows' first ``limit`` positions (exact for ``size`` 1): ``sum(min(L, limit))``."""
        return self.padded_slots(1, limit=limit) if self.size == 1 else 0


@dataclass(frozen=True)
class Features:
    """Structural features of one matrix, host values only (see :func:`~.features.compute`).

    ``mean_row`` is ``nnz / m`` (0.0 without rows); ``max_row`` the longest row (0 without
    rows).  ``row_length_edges`` is the bucket layout of ``row_length_histogram``
    (:func:`~.feature_histograms.length_buckets` of ``max_row``); the histogram sums to the row count.
    ``blocks`` maps every ``(r, c)`` of :data:`~.features.BLOCK_SIZES` to its :class:`BlockStats` (those
    :func:`~.features.compute` left out by its ``block_fill_limit`` are missing);
    ``groups`` maps every size of :data:`~.features.GROUP_SIZES` to its :class:`GroupWidths`.
    ``distinct_values`` counts the distinct values of the entries and zero (the value of
    DIA-VI's padding), at most :data:`DISTINCT_CAP`; ``one_value``: every entry holds one value (by its
    bits: a pattern matrix, stored with no value per entry by the planner's pattern cut).  ``x_scatter`` maps a value size in bytes
    to how scattered the matrix's gathers of ``x`` are (:func:`~.features.x_scatter`: 0 as the calibration's
    rows of adjacent columns, 1 as its uniformly scattered rows).
    """

    shape: tuple
    nnz: int
    mean_row: float
    max_row: int
    row_length_edges: tuple
    row_length_histogram: tuple
    diagonal_counts: DiagonalCounts
    blocks: MappingProxyType
    groups: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    distinct_values: int = DISTINCT_CAP
    one_value: bool = False
    x_scatter: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def dense_diagonals(self, threshold: float) -> np.ndarray:
        """Offsets of the diagonals whose fill (count / in-matrix length) is at least ``threshold``."""
        return self.diagonal_counts.dense_diagonals(threshold)

    __hash__ = None
