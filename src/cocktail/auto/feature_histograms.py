"""The histograms the features count: row lengths in power-of-two buckets, and clipped counts of values.

:func:`length_buckets` is the bucket layout of every length histogram (of the rows, and of the blocks per
super-row); :func:`length_histogram` counts a CSR's row lengths into it; :func:`_clipped_counts` and
:func:`_count_into` count non-negative values (or each group's largest) up to a cap.  On the GPU each is a
helper kernel.
"""

from __future__ import annotations

import numpy as np

from ..arrays import get_xp, to_numpy


def length_buckets(max_length: int) -> tuple:
    """Bucket layout of the length histograms: inclusive upper bounds ``(0, 1, 2, 4, 8, ...)``.

    Bucket ``i`` holds the lengths ``L`` with ``edges[i-1] < L <= edges[i]`` (bucket 0 holds
    length 0): lengths 0, 1, 2, 3-4, 5-8, 9-16, ...  The last edge is the first power of two
    at least ``max_length`` (``(0,)`` when ``max_length`` is 0).
    """
    edges = [0]
    nxt = 1
    while edges[-1] < max_length:
        edges.append(nxt)
        nxt *= 2
    return tuple(edges)


def _histogram(xp, lengths, edges: tuple) -> tuple:
    """Counts of ``lengths`` per bucket of ``edges`` (see :func:`length_buckets`), on the host."""
    return tuple(int(v) for v in to_numpy(_bucket_counts(xp, lengths, edges)))


#: Buckets of :func:`length_histogram`'s helper kernel: empty rows, then one per power of two to 2**64.
_LENGTH_BUCKETS = 66


def length_histogram(csr) -> tuple:
    """The row-length histogram of a canonical CSR, bucket layout :func:`length_buckets` of its longest
    row: on the GPU one helper kernel over ``indptr`` and one transfer (the longest row is the last
    bucket counted)."""
    xp = get_xp(csr.indptr)
    m = int(csr.shape[0])
    if xp is np or not m:
        lengths = csr.row_lengths()
        return _histogram(xp, lengths, length_buckets(int(lengths.max()) if m else 0))
    from ..kernels import device, source

    counts = xp.zeros(_LENGTH_BUCKETS, dtype=xp.uint64)
    props = device.current()
    index = "int" if csr.indptr.dtype == np.int32 else "long long"
    fn = source.helper("length_buckets", f"length_buckets<{index}>", props.id)
    fn((device.grid_for(m, _HISTOGRAM_BLOCK, props, fn),), (_HISTOGRAM_BLOCK,), (csr.indptr, np.int64(m), counts))
    host = to_numpy(counts)
    return tuple(int(v) for v in host[:int(np.nonzero(host)[0].max()) + 1])


def _bucket_counts(xp, values, edges: tuple):
    """Counts of ``values`` per bucket of ``edges`` as an int64 array on ``values``' device (no transfer)."""
    bucket = xp.searchsorted(xp.asarray(edges, dtype=xp.int64), values.astype(xp.int64), side="left")
    return _clipped_counts(xp, bucket, len(edges) - 1)[:len(edges)]


#: Threads per block of the histogram helper kernel.
_HISTOGRAM_BLOCK = 256


def _clipped_counts(xp, values, cap: int):
    """``[count of 0, ..., count of cap, count above cap, sum above cap]`` of non-negative int64 ``values``.

    On the GPU one helper kernel counts in shared memory (``bincount`` would queue every entry
    of the most common value on one global atomic).
    """
    out = xp.zeros(cap + 3, dtype=np.int64 if xp is np else xp.uint64)
    _count_into(xp, values, cap, 1, out)
    return out.astype(xp.int64)


def _count_into(xp, values, cap: int, group: int, out) -> None:
    """Add to ``out`` (zeros, ``cap + 3`` long) the :func:`_clipped_counts` of the largest value of every
    aligned group of ``group`` consecutive ``values`` (the last group may be partial)."""
    n = int(values.shape[0])
    if not n:
        return
    if xp is np:
        if group > 1:  # zeros pad the last group: the values are non-negative
            values = np.concatenate([values, np.zeros(-n % group, dtype=values.dtype)]).reshape(-1, group).max(axis=1)
        out[:cap + 2] += np.bincount(np.minimum(values, cap + 1), minlength=cap + 2)[:cap + 2]
        out[cap + 2] += np.where(values > cap, values, 0).sum()
        return
    from ..kernels import device, source

    props = device.current()
    fn = source.helper("clipped_histogram", "clipped_histogram", props.id)
    shared = 4 * (cap + 2)
    grid = device.grid_for(-(-n // group), _HISTOGRAM_BLOCK, props, fn, shared)
    fn((grid,), (_HISTOGRAM_BLOCK,), (xp.ascontiguousarray(values, dtype=xp.int64), np.int64(n), np.int64(group),
                                      np.int32(cap), out, out[cap + 2:]), shared_mem=shared)
