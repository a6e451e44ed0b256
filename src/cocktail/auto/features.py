"""Structural features of a sparse matrix: what the clSpMV planner measures (Su & Keutzer §3-4).

clSpMV decides a matrix's Cocktail partition from counts alone (§3.2, §4): the row-length
distribution (flat formats ELL/SELL/CSR/COO), the number of nonzeros on every diagonal
and which diagonals are dense (DIA/BDIA), and, for every candidate block size, the
number of nonzero blocks per super-row and of dense blocks (BCSR/BELL/SBELL).  One count
is of values, not structure: the distinct values (DIA-VI stores at most 256).  Beyond
clSpMV, one count is of locality: how scattered the gathers of ``x`` are (:func:`x_scatter`),
which the profile's adjacent-column samples cannot see.
:func:`compute` gathers those counts from a canonical :class:`~cocktail.formats.csr.CSR`
with array operations only (NumPy or CuPy: sorts, ``bincount``, ``cumsum``,
``searchsorted``; the only Python loop is over :data:`BLOCK_SIZES`) and returns them as
host values in a frozen :class:`Features` (its records are in :mod:`.feature_records`, the histograms it counts
in :mod:`.feature_histograms`, the fused device pass's buffer and launcher in :mod:`.feature_launch`).

This module measures; it decides nothing.  The only fixed numbers here are layouts: the
candidate block sizes and the power-of-two buckets of the histograms
(:func:`length_buckets`).  Every threshold on these features belongs to the planner.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType

import numpy as np

from ..arrays import bit_keys, get_xp, stable_argsort, to_numpy
from ..formats.csr_pattern import one_value as holds_one_value
from ..kernels.sbell import SAMPLED_HEIGHT as SAMPLED_SBELL_HEIGHT
from .feature_histograms import _LENGTH_BUCKETS, _bucket_counts, _count_into, length_buckets, length_histogram
from .feature_launch import _CupyLauncher, _Summary, _index_type
from .feature_records import (DISTINCT_CAP, BlockStats, DiagonalCounts, Features, GroupWidths, TableDiagonals,
                              _readonly)

#: Candidate block shapes ``(r, c)``: ``r`` rows by ``c`` columns, on the aligned block grid.  The
#: heights of one width rise, each dividing the next (:func:`compute` leaves out a taller shape by it).
BLOCK_SIZES = ((1, 4), (2, 4), (4, 4), (8, 4), (1, 8), (2, 8), (4, 8), (8, 8), (2, 2), (3, 3))

#: Sizes of the row groups whose widest row :class:`GroupWidths` counts: the slice heights of
#: SELL (32..256) and the rows one warp covers in the CSR kernels (32 / lanes per row).
GROUP_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: Widths above this are counted together (their sum kept): the count arrays stay small.
WIDTH_CAP = 4096
#: Super-rows per slice of SBELL, the layout whose block slots :class:`BlockStats` counts: the slice
#: height the sbell kernel's profile samples are taken with.
SBELL_HEIGHT = SAMPLED_SBELL_HEIGHT

#: Rows of a group whose gathers of ``x`` :func:`x_scatter` counts together (the rows one warp of
#: csr_scalar covers), the most groups it samples, and the bytes of one memory sector.
SCATTER_GROUP = 32
SCATTER_GROUPS = 4096
#: About the most entries :func:`x_scatter` sorts (fewer groups are sampled on matrices of long rows).
SCATTER_ENTRIES = 1 << 22
SECTOR_BYTES = 32
#: Value sizes :func:`x_scatter` is computed for (float32, float64).
SCATTER_ITEMSIZES = (4, 8)

#: Values in the sample whose distinct values are counted first (a spread of the entries).
DISTINCT_SAMPLE = 4096

_FINGERPRINT_VERSION = "features-v1"
_KEY_LIMIT = 1 << 62  # block keys below it, doubled, fit in int64 (an overflow guard)


def _row_blocks(xp, rows, cols, c: int):
    """The distinct ``1 x c`` blocks, in CSR order: (row, block column, all ``c`` cells stored).

    A canonical CSR is sorted by (row, col), so equal (row, col // c) entries are adjacent.
    """
    nnz = int(rows.shape[0])
    bj = cols // c
    first = xp.ones(nnz, dtype=bool)
    if nnz > 1:
        first[1:] = (rows[1:] != rows[:-1]) | (bj[1:] != bj[:-1])
    starts = xp.nonzero(first)[0]
    ends = xp.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1:] = nnz
    return rows[starts], bj[starts], (ends - starts) == c


def _sorted_blocks(xp, bi, bj, full, block_cols: int, superrows: int):
    """Sort row-blocks by (bi, bj, full): ``(same, sorted_bi, sorted_full)``.

    ``same(k)`` tells for each position ``i`` whether position ``i + k`` holds the same block;
    ``sorted_bi`` is the super-row of every sorted position.
    """
    if superrows * block_cols < _KEY_LIMIT:
        key = xp.sort((bi * block_cols + bj) * 2 + full.astype(xp.int64))
        block = key >> 1

        def same(k):
            return block[k:] == block[:block.shape[0] - k]

        return same, block // block_cols, (key & 1).astype(bool)
    # A key would overflow int64: lexicographic stable sorts.
    order = stable_argsort(full.astype(xp.int64))
    order = order[stable_argsort(bj[order])]
    order = order[stable_argsort(bi[order])]
    sbi, sbj, sfull = bi[order], bj[order], full[order]

    def same(k):
        size = sbi.shape[0] - k
        return (sbi[k:] == sbi[:size]) & (sbj[k:] == sbj[:size])

    return same, sbi, sfull


def _block_stats(xp, row_blocks, r: int, c: int, shape, nnz: int, max_row: int) -> BlockStats:
    """:class:`BlockStats` of the ``r x c`` blocks from the ``1 x c`` row-blocks (:func:`_row_blocks`),
    reduced on the device and brought to the host in one transfer."""
    m, n = shape
    superrows, block_cols = -(-m // r), -(-n // c)
    if not superrows:
        return BlockStats(0, 0, 0, 1.0, (0,), 0)
    rows, bj, full = row_blocks
    nrb = int(rows.shape[0])
    if r == 1:  # the row-blocks are the blocks, already sorted
        first, dense, block_bi = None, full.sum(), rows
    else:
        same, block_bi, sfull = _sorted_blocks(xp, rows // r, bj, full, block_cols, superrows)
        first = xp.ones(nrb, dtype=bool)
        first[1:] = ~same(1)
        # A block holds at most r row-blocks, full ones sorted last: it is dense when the
        # row-block r-1 places before its last one is the same block and full.
        dense = (same(r - 1) & sfull[:nrb - r + 1]).sum() if nrb >= r else xp.zeros((), xp.int64)
    # Sorted by super-row: each super-row's blocks are the first flags between its bounds.
    bounds = xp.searchsorted(block_bi, xp.arange(superrows + 1, dtype=block_bi.dtype), side="left")
    if first is None:
        per_superrow = xp.diff(bounds)
    else:
        firsts = xp.concatenate([xp.zeros(1, xp.int64), xp.cumsum(first, dtype=xp.int64)])
        per_superrow = firsts[bounds[1:]] - firsts[bounds[:-1]]
    h = SBELL_HEIGHT
    padded = xp.zeros(-(-superrows // h) * h, dtype=xp.int64)
    padded[:superrows] = per_superrow
    edges = length_buckets(min(block_cols, r * max_row))  # past the widest super-row: zero counts
    host = to_numpy(xp.concatenate([
        xp.stack([per_superrow.sum(), per_superrow.max(), xp.asarray(dense, dtype=xp.int64),
                  padded.reshape(-1, h).max(axis=1).sum()]).astype(xp.int64),
        _bucket_counts(xp, per_superrow, edges)]))
    total, most, dense, sliced = (int(v) for v in host[:4])
    fill = total * r * c / nnz if nnz else 1.0
    histogram = tuple(int(v) for v in host[4:4 + len(length_buckets(most))])
    return BlockStats(total, most, dense, fill, histogram, sliced * h)


def row_groups(lengths, max_row: int | None = None) -> MappingProxyType:
    """:class:`GroupWidths` of ``lengths`` for every size of :data:`GROUP_SIZES` (on the GPU one helper
    kernel per size, and one host transfer)."""
    xp = get_xp(lengths)
    widths = xp.ascontiguousarray(lengths, dtype=xp.int64)
    if max_row is None:
        max_row = int(widths.max()) if widths.shape[0] else 0
    cap = min(int(max_row), WIDTH_CAP)
    counts = xp.zeros((len(GROUP_SIZES), cap + 3), dtype=np.int64 if xp is np else xp.uint64)
    for i, g in enumerate(GROUP_SIZES):
        _count_into(xp, widths, cap, g, counts[i])
    host = to_numpy(counts).astype(np.int64)
    return MappingProxyType({g: GroupWidths(g, _readonly(host[i, :-1]), int(host[i, -1]), cap, int(max_row))
                             for i, g in enumerate(GROUP_SIZES)})


def _diagonals(xp, rows, cols, shape) -> DiagonalCounts:
    if not rows.shape[0]:
        empty = _readonly(np.zeros(0, np.int64))
        return DiagonalCounts(tuple(shape), empty, empty)
    m, n = shape
    if xp is np:  # a count per possible offset (m + n - 1 of them): one pass
        per_offset = np.bincount(cols - rows + (m - 1), minlength=m + n - 1)
        occupied = np.nonzero(per_offset)[0]
        return DiagonalCounts(tuple(shape), _readonly(occupied.astype(np.int64) - (m - 1)),
                              _readonly(per_offset[occupied].astype(np.int64)))
    # On the GPU a sort (int32 keys where they fit): bincount's atomics would queue every entry of a
    # band on a few counters.
    key_dtype = xp.int32 if m + n < 2 ** 31 else xp.int64
    keys = xp.sort((cols - rows).astype(key_dtype))
    starts = xp.nonzero(xp.concatenate([xp.ones(1, dtype=bool), keys[1:] != keys[:-1]]))[0]
    counts = xp.diff(xp.concatenate([starts, xp.asarray([keys.shape[0]], dtype=starts.dtype)]))
    both = to_numpy(xp.stack([keys[starts].astype(xp.int64), counts.astype(xp.int64)]))
    return DiagonalCounts(tuple(shape), _readonly(both[0]), _readonly(both[1]))


def distinct_values(values) -> int:
    """Distinct values among ``values`` and zero, by their bits (``-0.0`` apart from ``0.0``, as a value
    table keeps them), counted up to :data:`DISTINCT_CAP` on ``values``' device.

    A spread sample of :data:`DISTINCT_SAMPLE` values is counted first: past the cap, that is
    the answer.  Otherwise, when every value is one of the sample's (a lookup, no sort of all
    the values), the sample's count is exact; else every value is counted.
    """
    xp = get_xp(values)
    zero = xp.zeros(1, dtype=values.dtype)
    step = max(1, int(values.shape[0]) // DISTINCT_SAMPLE)
    # The sample alone first: most matrices stop here, before any pass over all the values.
    count = int(xp.unique(bit_keys(xp.concatenate([values[::step], zero]))).shape[0])
    if count >= DISTINCT_CAP or step == 1:
        return min(count, DISTINCT_CAP)
    # Keys of one array throughout (complex keys number values within their array).
    keys = bit_keys(xp.concatenate([values, zero]))  # zero last
    sample = xp.unique(xp.concatenate([keys[:-1:step], keys[-1:]]))
    count = int(sample.shape[0])
    at = xp.minimum(xp.searchsorted(sample, keys), count - 1)
    if bool((sample[at] == keys).all()):
        return count
    return min(int(xp.unique(keys).shape[0]), DISTINCT_CAP)


def x_scatter(csr) -> MappingProxyType:
    """How scattered the reads of ``x`` are, per value size: ``{itemsize: s}`` with ``s`` in [0, 1].

    For groups of :data:`SCATTER_GROUP` consecutive rows (a spread sample of at most
    :data:`SCATTER_GROUPS` of them, and about :data:`SCATTER_ENTRIES` entries), the distinct
    :data:`SECTOR_BYTES`-byte sectors of ``x`` the group's entries touch, ``D``, are placed between
    two references with the same entries per group: ``A``, rows of adjacent columns each one column
    on from the last (the calibration's ``rows`` pattern: a group spans its rows plus a row's
    length), and ``R``, columns drawn uniformly over all of ``x`` (its ``scattered`` pattern):
    ``s = (D - A) / (R - A)``, clipped.
    Within-group reuse only: reuse across distant rows (hub columns held in L2) is not seen.
    """
    xp = get_xp(csr.indptr)
    m, n = (int(d) for d in csr.shape)
    zero = MappingProxyType({size: 0.0 for size in SCATTER_ITEMSIZES})
    if not m or not csr.nnz:
        return zero
    first_row, last_row, _ = _scatter_sample(m, int(csr.nnz))
    lo, hi = to_numpy(csr.indptr[xp.asarray(np.stack([first_row, last_row]))]).astype(np.int64)
    count = hi - lo
    start = np.cumsum(count) - count
    total = int(count.sum())
    if not total:
        return zero
    at = xp.arange(total, dtype=xp.int64)
    which = xp.searchsorted(xp.asarray(start), at, side="right") - 1
    cols = csr.indices[at + xp.asarray(lo - start)[which]].astype(xp.int64)
    # One sort for every value size: a sector's index rises with the column.
    keys = xp.sort(which * n + cols)
    group_starts = (keys[1:] // n) != (keys[:-1] // n)
    columns = keys % n
    distinct = []
    for size in SCATTER_ITEMSIZES:
        sector = columns // max(1, SECTOR_BYTES // size)
        distinct.append(1 + (group_starts | (sector[1:] != sector[:-1])).sum())
    return _scatter_from_counts(count, last_row - first_row, to_numpy(xp.stack(distinct)), n)


def _scatter_sample(m: int, nnz: int) -> tuple:
    """``(first_row, last_row, stride)`` of the row groups :func:`x_scatter` samples (host arrays; a group
    every ``stride``)."""
    g = SCATTER_GROUP
    groups = -(-m // g)
    stride = max(-(-groups // SCATTER_GROUPS), -(-nnz // SCATTER_ENTRIES))
    first_row = np.arange(0, groups, stride, dtype=np.int64) * g
    return first_row, np.minimum(first_row + g, m), stride


def _scatter_from_counts(count, rows, distinct, n: int) -> MappingProxyType:
    """:func:`x_scatter`'s answer from the sampled groups' entries ``count`` and rows ``rows`` and the distinct
    sectors ``distinct`` (one per size of :data:`SCATTER_ITEMSIZES`, summed over the groups)."""
    if not int(np.sum(count)):
        return MappingProxyType({size: 0.0 for size in SCATTER_ITEMSIZES})
    entries, rows = np.asarray(count, dtype=np.float64), np.asarray(rows, dtype=np.float64)
    out = {}
    for d, size in zip(distinct, SCATTER_ITEMSIZES):
        per_sector = max(1, SECTOR_BYTES // size)
        sectors = -(-n // per_sector)
        # Adjacent: the group's span (its rows, plus a row's entries) in sectors, never more than its entries.
        a = float(np.minimum(entries, (rows - 1 + entries / rows) / per_sector + 1).sum())
        r = float((sectors * -np.expm1(-entries / sectors)).sum())  # expected distinct sectors of uniform draws
        out[size] = min(1.0, max(0.0, (float(d) - a) / (r - a))) if r > a else 0.0
    return MappingProxyType(out)


def compute(csr, block_fill_limit: float | None = None, one_value: bool | None = None,
            distinct: int | None = None) -> Features:
    """Measure the structural features of a canonical CSR (NumPy or CuPy arrays).

    Row lengths and their histogram, nonzeros per diagonal, for every ``(r, c)`` of
    :data:`BLOCK_SIZES` the nonzero and dense blocks (clSpMV §3-4), and the distinct values
    (:func:`distinct_values`).  Stored explicit zeros count as entries throughout.  All
    results are host values.

    ``block_fill_limit``: leave out the block shapes ``r x c`` (``r > 1``) once a shorter shape
    ``q x c`` (``q`` divides ``r``: ``1 x c``, then ``2 x c``, ...) exceeds it: an ``r x c`` block
    covers at most ``r / q`` of the ``q x c`` ones, so its fill is at least theirs.  On the host
    those need a sort each; the ``1 x c`` counts and the GPU's counts do not.  ``one_value``: whether every entry holds one value, when the
    caller knows it already (else one pass over the values finds out); ``distinct``: likewise, the count of
    :func:`distinct_values`.
    """
    xp = get_xp(csr.indptr)
    if xp is not np and _fused_applies(csr):
        return _fused_compute(csr, block_fill_limit, one_value, distinct)
    m, n = (int(d) for d in csr.shape)
    nnz = int(csr.nnz)
    lengths = csr.row_lengths()
    max_row = int(lengths.max()) if m else 0
    edges = length_buckets(max_row)
    rows = csr.row_ids().astype(xp.int64)
    cols = csr.indices.astype(xp.int64)
    row_blocks = {}
    blocks = {}
    least_fill = {}  # c -> the fill of the tallest r x c shape counted so far
    for r, c in BLOCK_SIZES:
        if c not in row_blocks:
            row_blocks[c] = _row_blocks(xp, rows, cols, c)
            least_fill[c] = int(row_blocks[c][0].shape[0]) * c / nnz if nnz else 1.0
        if r > 1 and block_fill_limit is not None and least_fill[c] > block_fill_limit:
            continue
        blocks[(r, c)] = _block_stats(xp, row_blocks[c], r, c, (m, n), nnz, max_row)
        least_fill[c] = blocks[(r, c)].fill
    diagonals = _diagonals(xp, rows, cols, (m, n))
    del rows, cols, row_blocks  # the entry-sized arrays go before the next passes allocate theirs
    return Features(
        shape=(m, n),
        nnz=nnz,
        mean_row=nnz / m if m else 0.0,
        max_row=max_row,
        row_length_edges=edges,
        row_length_histogram=length_histogram(csr),
        diagonal_counts=diagonals,
        blocks=MappingProxyType(blocks),
        groups=row_groups(lengths, max_row) if m else MappingProxyType({}),
        distinct_values=distinct_values(csr.data) if distinct is None else int(distinct),
        one_value=holds_one_value(csr.data) if one_value is None else bool(one_value),
        x_scatter=x_scatter(csr),
    )


def fingerprint(features: Features) -> str:
    """A stable hash (32 hex digits) of the shape, ``nnz`` and row-length histogram.

    Cheap and coarse: matrices differing only in values share it, and so can different
    structures with the same shape, entry count and histogram.  Meant as a decision-cache key.
    """
    return _structure_hash(features.shape, features.nnz, features.row_length_histogram)


def structure_fingerprint(csr) -> str:
    """:func:`fingerprint` of ``csr`` without computing the other features (its row-length histogram only)."""
    return _structure_hash(csr.shape, csr.nnz, length_histogram(csr))


def _structure_hash(shape, nnz: int, histogram) -> str:
    m, n = (int(d) for d in shape)
    text = "|".join([_FINGERPRINT_VERSION, f"{m}x{n}", str(int(nnz)), ",".join(map(str, histogram))])
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


# ----------------------------------------------------------------------------------------------------------
# The fused device pass: the features of a CuPy CSR in a few helper kernels (kernels/features_rows.cu and
# kernels/features_entries.cu, no sort) whose results land in one device buffer, brought to the host by one
# copy and one synchronisation.  The host path above stays the oracle; the rare cases the kernels leave to it
# (a sampled group too long for its hash set, values outside the sample) take it.

#: Threads per block of every feature kernel (features_rows needs exactly this: a tile of rows per block).
_BLOCK = 256
#: Entries per chunk of feature_entries and feature_superrows (a block walks consecutive chunks; its shared memory
#: marks a chunk's rows): enough that a band's diagonals reach global memory a few times only.
_ENTRY_CHUNK = 16 * _BLOCK
#: Slots of feature_entries' shared diagonal hash, and occupied diagonals carried by the one transfer (more
#: take a second one).
_DIAGONAL_SLOTS = 1024
#: Slots of that hash an entry probes before its diagonal's count goes to global memory (spread diagonals fill it).
_DIAGONAL_PROBES = 8
_DIAGONAL_HEAD = 4096
#: Widths whose groups features_rows counts in shared memory (wider ones go to global memory).
_SHARED_WIDTHS = 512
#: Slots of scatter_groups' shared set (or its bitmap's words, two a slot), and the most passes it makes over one
#: window of a group before leaving the count to the host.
_SCATTER_SLOTS = 4096
_SCATTER_PASSES = 16
#: A group's entries per window of scatter_groups (its sector range is cut into one window per this many, each a
#: block's work) and the most windows of a group.
_SCATTER_WINDOW = 4096
_SCATTER_SPLIT = 64
#: Set keys of the values, by their size in bytes (16-byte values are counted on the host path).
_VALUE_KEYS = {2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
#: The 1 x c row-blocks counted per row: every width of BLOCK_SIZES, in their order.
_ROW_WIDTHS = tuple(dict.fromkeys(c for _, c in BLOCK_SIZES))
#: The taller shapes of BLOCK_SIZES, in the order of their count arrays (width by width, rising heights), and the
#: same as feature_superrows' bit mask: bit 16 w + r for height r of width w (heights below 16).
_TALL_SHAPES = tuple((r, c) for c in _ROW_WIDTHS for r in sorted({r for r, w in BLOCK_SIZES if w == c and r > 1}))
_HEIGHTS = sum(1 << (16 * _ROW_WIDTHS.index(c) + r) for r, c in _TALL_SHAPES)
_LEVELS = len(GROUP_SIZES)


def _fused_applies(csr) -> bool:
    """Whether the fused pass takes ``csr`` (rows and entries, its 32-bit counters and 256-row tiles allow)."""
    m, n = (int(d) for d in csr.shape)
    return (0 < m < 2 ** 31 and n < 2 ** 62 and int(csr.nnz) > 0 and GROUP_SIZES == tuple(1 << k for k in range(_LEVELS))
            and _BLOCK == GROUP_SIZES[-1] and SBELL_HEIGHT in GROUP_SIZES[:6] and SCATTER_ITEMSIZES == (4, 8)
            and SCATTER_GROUP <= 32
            and all(r < 16 for r, _ in _TALL_SHAPES))


def _diagonal_table_applies(m: int, n: int, nnz: int) -> bool:
    """A counter per diagonal (``m + n - 1``, zeroed and scanned) costs about an entry's pass while the
    diagonals are not far more than the entries; else the host path's sort counts them."""
    return m + n - 1 <= 4 * nnz + (1 << 16) and min(m, n) < 2 ** 32


def _launch_rows(launch, csr, summary, block_counts=None, levels: int = _LEVELS) -> None:
    """features_rows: the length histogram and longest row, the row groups' widest rows (``levels`` sizes)
    and the statistics of the block counts ``block_counts``: per row for each width of _ROW_WIDTHS, then per
    super-row for each shape of _TALL_SHAPES."""
    m, cap = int(csr.shape[0]), WIDTH_CAP
    shared_widths = min(_SHARED_WIDTHS, cap + 1)
    widths = 0 if block_counts is None else len(_ROW_WIDTHS)
    launch("features_rows", f"feature_rows<{_index_type(csr)}>", m, _BLOCK,
           (csr.indptr, np.int64(m), block_counts, np.int32(widths), np.int64(_HEIGHTS if widths else 0),
            np.int32(SBELL_HEIGHT.bit_length() - 1),
            np.int32(levels), np.int32(cap), np.int32(shared_widths), summary["histogram"], summary["longest"],
            summary["group_counts"] if levels else None, summary["group_over"] if levels else None,
            summary["count_stats"] if widths else None), shared=4 * levels * shared_widths)


def _launch_values(launch, xp, csr, summary):
    """value_sample then value_facts: the distinct keys of the sample and the flags of every value; False where
    the values' size has no key here (the host path counts them)."""
    key = _VALUE_KEYS.get(csr.data.dtype.itemsize)
    if key is None:
        return False
    nnz = int(csr.nnz)
    step = max(1, nnz // DISTINCT_SAMPLE)
    samples = -(-nnz // step) + 1
    slots = 1 << (2 * samples - 1).bit_length()
    table = xp.zeros(slots, dtype=np.uint64)
    values = csr.data.view(np.dtype(f"uint{8 * csr.data.dtype.itemsize}"))
    launch("features_entries", f"value_sample<{key}>", samples, _BLOCK,
           (values, np.int64(nnz), np.int64(step), table, np.int32(slots), summary["distinct"]))
    launch("features_entries", f"value_facts<{key}>", nnz, _BLOCK,
           (values, np.int64(nnz), table, np.int32(slots), np.int32(step > 1), np.uint32(DISTINCT_CAP),
            summary["distinct"], summary["flags"]))
    return True


def _value_answers(csr, host, launched: bool, one_value, distinct) -> tuple:
    """``(one_value, distinct)``: the caller's where given, else the fused pass's (the host path's where it left
    them)."""
    if not launched:
        return (holds_one_value(csr.data) if one_value is None else bool(one_value),
                distinct_values(csr.data) if distinct is None else int(distinct))
    flags = int(host["flags"][0])
    if one_value is None:
        one_value = not flags & 1
    if distinct is None:
        count = int(host["distinct"][0]) + int(host["distinct"][1])
        step = max(1, int(csr.nnz) // DISTINCT_SAMPLE)
        if count >= DISTINCT_CAP or step == 1 or not flags & 2:
            distinct = min(count, DISTINCT_CAP)
        else:  # a value outside the sample: every value counted (the host path's last resort too)
            distinct = distinct_values(csr.data)
    return bool(one_value), int(distinct)


def quick_facts(csr, launcher=None) -> tuple:
    """``(structure_fingerprint(csr), holds_one_value(csr.data), distinct_values(csr.data))`` for the decision
    cache: on the GPU two passes (the row pointers, the values) and one synchronisation."""
    xp = get_xp(csr.indptr)
    if (xp is np and launcher is None) or not _fused_applies(csr):
        return structure_fingerprint(csr), holds_one_value(csr.data), distinct_values(csr.data)
    launch = launcher or _CupyLauncher()
    summary = _Summary(xp, {"longest": (np.uint64, (1,)), "histogram": (np.uint64, (_LENGTH_BUCKETS,)),
                            "flags": (np.uint32, (1,)), "distinct": (np.uint32, (2,))})
    _launch_rows(launch, csr, summary, levels=0)
    launched = _launch_values(launch, xp, csr, summary)
    host = summary.fetch(launch)
    uniform, distinct = _value_answers(csr, host, launched, None, None)
    return _structure_hash(csr.shape, csr.nnz, _trimmed_histogram(host)), uniform, distinct


def _trimmed_histogram(host) -> tuple:
    return tuple(int(v) for v in host["histogram"][:len(length_buckets(int(host["longest"][0])))])


def _fused_compute(csr, block_fill_limit, one_value, distinct, launcher=None) -> Features:
    """:func:`compute` of a CSR the fused pass takes (:func:`_fused_applies`)."""
    xp = get_xp(csr.indptr)
    launch = launcher or _CupyLauncher()
    m, n = (int(d) for d in csr.shape)
    nnz = int(csr.nnz)
    widths = len(_ROW_WIDTHS)
    first_row, last_row, stride = _scatter_sample(m, nnz)
    diagonal_table = _diagonal_table_applies(m, n, nnz)
    summary = _Summary(xp, {
        "longest": (np.uint64, (1,)), "histogram": (np.uint64, (_LENGTH_BUCKETS,)), "flags": (np.uint32, (1,)),
        "distinct": (np.uint32, (2,)), "overflow": (np.uint32, (1,)), "diagonals_found": (np.uint64, (1,)),
        "row_block_counts": (np.uint64, (2, widths)),
        "count_stats": (np.uint64, (widths + len(_TALL_SHAPES), 4 + _LENGTH_BUCKETS)),
        "group_over": (np.uint64, (_LEVELS,)), "group_counts": (np.uint32, (_LEVELS, WIDTH_CAP + 2)),
        "sectors": (np.uint64, (2,)), "scatter_entries": (np.uint64, (first_row.shape[0],)),
        "diagonal_pairs": (np.int64, (_DIAGONAL_HEAD, 2)), "diagonal_extremes": (np.int64, (2,))})
    need_values = one_value is None or distinct is None
    launched = need_values and _launch_values(launch, xp, csr, summary)
    # the blocks per row of every width, then per super-row of every taller shape
    block_counts = xp.zeros(widths * m + sum(-(-m // r) for r, _ in _TALL_SHAPES), dtype=np.uint32)
    table = xp.zeros(m + n - 1, dtype=np.uint32) if diagonal_table else None
    chunks = -(-nnz // _ENTRY_CHUNK)
    row_widths = tuple(np.int32(c) for c in _ROW_WIDTHS)
    launch("features_entries", f"feature_entries<{_index_type(csr)}>", chunks * _BLOCK, _BLOCK,
           (csr.indptr, csr.indices, np.int64(m), np.int64(nnz), np.int64(_ENTRY_CHUNK), np.int32(widths),
            *row_widths, np.int32(_DIAGONAL_SLOTS), np.int32(_DIAGONAL_PROBES), block_counts,
            summary["row_block_counts"], table), shared=12 * _DIAGONAL_SLOTS + 4 * _ENTRY_CHUNK)
    # Every taller shape of a width whose 1 x c fill passes the limit (the kernel tests it): compute keeps a subset.
    limit = np.inf if block_fill_limit is None else float(block_fill_limit)
    launch("features_entries", f"feature_superrows<{_index_type(csr)}>", chunks * _BLOCK, _BLOCK,
           (csr.indptr, csr.indices, np.int64(m), np.int64(nnz), np.int64(_ENTRY_CHUNK), np.int32(widths),
            *row_widths, np.int64(_HEIGHTS), np.float64(limit), summary["row_block_counts"], block_counts,
            summary["count_stats"]), shared=16 * len(_TALL_SHAPES) + 4 * _ENTRY_CHUNK)
    _launch_rows(launch, csr, summary, block_counts)
    more = None
    if diagonal_table:
        more = xp.empty((max(min(m + n - 1, nnz) - _DIAGONAL_HEAD, 1), 2), dtype=np.int64)
        launch("features_entries", "diagonal_compact", m + n - 1, _BLOCK,
               (table, np.int64(m + n - 1), np.int64(1 - m), np.int64(_DIAGONAL_HEAD), summary["diagonal_pairs"],
                more, summary["diagonals_found"]))
        # the most entries on a diagonal and the first occupied one, for TableDiagonals: no synchronisation
        extremes = summary["diagonal_extremes"]
        xp.max(table, out=extremes[0:1].reshape(()))
        xp.argmax(table != 0, out=extremes[1:2].reshape(()))
    # a block per window a group may have: the grid is one wave of blocks once there are more
    windows = first_row.shape[0] * _SCATTER_SPLIT
    launch("features_entries", f"scatter_groups<{_index_type(csr)}>", windows * _BLOCK, _BLOCK,
           (csr.indptr, csr.indices, np.int64(m), np.int64(first_row.shape[0]), np.int64(stride * SCATTER_GROUP),
            np.int32(SCATTER_GROUP), np.int64(SECTOR_BYTES // 8), np.int32(_SCATTER_SLOTS),
            np.int32(_SCATTER_PASSES), np.int32(_SCATTER_SPLIT), np.int64(_SCATTER_WINDOW), summary["scatter_entries"],
            summary["sectors"], summary["overflow"]), shared=8 * _SCATTER_SLOTS)
    del block_counts
    host = summary.fetch(launch)  # the one synchronisation; what follows is host arithmetic but for rare cases
    max_row = int(host["longest"][0])
    uniform, distinct = _value_answers(csr, host, launched, one_value, distinct)
    if int(host["overflow"][0]):
        scatter = x_scatter(csr)
    else:
        sectors = host["sectors"]
        scatter = _scatter_from_counts(host["scatter_entries"], last_row - first_row, (sectors[1], sectors[0]), n)
    return Features(
        shape=(m, n), nnz=nnz, mean_row=nnz / m, max_row=max_row, row_length_edges=length_buckets(max_row),
        row_length_histogram=_trimmed_histogram(host),
        diagonal_counts=(_fused_diagonals(xp, host, table, (m, n)) if diagonal_table else
                         _diagonals(xp, csr.row_ids().astype(xp.int64), csr.indices.astype(xp.int64), (m, n))),
        blocks=MappingProxyType(_fused_blocks(host, nnz, block_fill_limit)),
        groups=_fused_groups(host, max_row), distinct_values=distinct, one_value=uniform, x_scatter=scatter)


def _fused_groups(host, max_row: int) -> MappingProxyType:
    """:func:`row_groups` from the fused pass's counts (kept to WIDTH_CAP; no wider group below ``max_row``)."""
    return groups_from_counts(host["group_counts"], host["group_over"], max_row)


def groups_from_counts(counts, over, longest: int) -> MappingProxyType:
    """:func:`row_groups` from a kernel's counts of each GROUP_SIZES group's widest row: ``counts[level][w]`` for
    the widths it counted, its last column the wider ones, whose widths sum into ``over[level]``; ``longest`` the
    longest row (no wider group below it: widths kept to it, and to WIDTH_CAP)."""
    top = min(longest, WIDTH_CAP)
    counts = np.asarray(counts).astype(np.int64)
    return MappingProxyType({g: GroupWidths(g, _readonly(np.r_[counts[i, :top + 1], counts[i, -1]]), int(over[i]),
                                            top, longest)
                             for i, g in enumerate(GROUP_SIZES)})


def _fused_diagonals(xp, host, table, shape) -> DiagonalCounts:
    """The occupied diagonals: those the compaction listed in the summary's head (in no order), or, past the
    head, read off the per-diagonal ``table`` in offset order (a sort of a graph's million diagonals on the host
    would cost more than the whole pass)."""
    found = int(host["diagonals_found"][0])
    if found > _DIAGONAL_HEAD:
        most, first = (int(v) for v in host["diagonal_extremes"])
        return TableDiagonals(shape, table, found, most, first + 1 - int(shape[0]))
    pairs = host["diagonal_pairs"][:found]
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    return DiagonalCounts(tuple(shape), _readonly(pairs[:, 0].astype(np.int64)), _readonly(pairs[:, 1].astype(np.int64)))


def _fused_blocks(host, nnz: int, block_fill_limit) -> dict:
    """:class:`BlockStats` of every shape :func:`compute` keeps (a taller one only where the shorter shape's fill
    passes ``block_fill_limit``), from the fused pass's counts: per row for one row high, per super-row for taller."""
    stats, blocks = host["count_stats"], {}
    least_fill = {c: int(stats[w, 0]) * c / nnz for w, c in enumerate(_ROW_WIDTHS)}
    for r, c in BLOCK_SIZES:
        w = _ROW_WIDTHS.index(c)
        if r > 1 and block_fill_limit is not None and least_fill[c] > block_fill_limit:
            continue
        k = w if r == 1 else len(_ROW_WIDTHS) + _TALL_SHAPES.index((r, c))
        total, most, dense, sliced = (int(v) for v in stats[k, :4])
        if r == 1:
            dense = int(host["row_block_counts"][0, w])
        histogram = tuple(int(v) for v in stats[k, 4:4 + len(length_buckets(most))])
        blocks[(r, c)] = BlockStats(total, most, dense, total * r * c / nnz, histogram, sliced * SBELL_HEIGHT)
        least_fill[c] = blocks[(r, c)].fill
    return blocks
