"""Shared pieces of the padded formats: the ``max_fill`` guard and explicit-zero bookkeeping.

Formats that store fill values (DIA, BDIA, the blocked formats) cannot tell a stored
explicit zero from fill.  They keep the explicit zeros of the input on the side
(``zero_row``, ``zero_col``, ``zero_val``; usually empty) so ``to_csr`` round-trips exactly.
The kernels never read those arrays.
"""

from __future__ import annotations

import numpy as np

from .. import _memory
from ..arrays import entry_rows, get_xp
from ..errors import FormatFillError

DEFAULT_MAX_FILL = 20.0
#: Padding a parameter (align, slice_height, width_multiple) may add: up to as much again as what
#: it pads, or this many rows or slots on small matrices.  Past it a huge parameter would
#: allocate for padding alone (max_fill does not count alignment padding).
PADDING_ALLOWANCE = 1024
ZERO_FIELDS = ("zero_row", "zero_col", "zero_val")


def explicit_zeros(csr, rows=None, count=None) -> dict:
    """The explicit zeros of ``csr`` as the side arrays ``zero_row``, ``zero_col``, ``zero_val``.

    ``rows``: the entries' rows (:func:`~cocktail.arrays.entry_rows`) when the caller has them.  One
    compaction of ``data == 0`` (one synchronisation on a GPU); the rows are looked at only when there are
    explicit zeros (usually none).  ``count``: how many there are, when a device build counted them on its way
    (the values equal to zero): none is then no compaction at all.
    """
    xp = get_xp(csr.data)
    where = None if count == 0 else xp.flatnonzero(csr.data == 0)
    if where is None or not where.shape[0]:
        return {"zero_row": xp.zeros(0, dtype=csr.index_dtype), "zero_col": csr.indices[:0].copy(),
                "zero_val": csr.data[:0].copy()}
    rows = entry_rows(csr) if rows is None else rows
    return {"zero_row": rows[where].astype(csr.index_dtype), "zero_col": csr.indices[where],
            "zero_val": csr.data[where]}


def with_explicit_zeros(fmt, rows, cols, vals):
    """Canonical CSR from a padded format's real slots (``vals != 0``) and its explicit zeros."""
    from .csr import CSR

    xp = get_xp(vals)
    keep = vals != 0
    rows = xp.concatenate([rows[keep].astype(xp.int64), fmt.zero_row.astype(xp.int64)])
    cols = xp.concatenate([cols[keep].astype(xp.int64), fmt.zero_col.astype(xp.int64)])
    vals = xp.concatenate([vals[keep], fmt.zero_val])
    return CSR.from_triplets(rows, cols, vals, fmt.shape, fmt.index_dtype, fmt.dtype)


def slice_widths(lengths, slice_height: int):
    """Longest length in each slice of ``slice_height`` consecutive rows (the last may be partial)."""
    xp = get_xp(lengths)
    nslices = -(-int(lengths.shape[0]) // slice_height)
    padded = xp.zeros(nslices * slice_height, dtype=xp.int64)
    padded[:lengths.shape[0]] = lengths
    return padded.reshape(nslices, slice_height).max(axis=1) if nslices else padded


def sliced_slots(widths, nrows: int, slice_height: int) -> int:
    """Slots of the rows that exist when slice s is ``widths[s]`` wide (missing rows of a
    partial last slice are not counted, like alignment padding)."""
    if nrows == 0:
        return 0
    last_rows = nrows - (int(widths.shape[0]) - 1) * slice_height
    return int(widths.sum()) * slice_height - int(widths[-1]) * (slice_height - last_rows)


def row_fill(lengths, nrows: int, slice_height: int = 0) -> int:
    """Value slots ELL (``slice_height`` 0) or SELL (unsorted) needs for these row lengths."""
    if nrows == 0:
        return 0
    if slice_height <= 0:
        return int(lengths.max()) * nrows
    return sliced_slots(slice_widths(lengths, slice_height), nrows, slice_height)


def fill_estimates(csr, width_rule=None) -> dict:
    """Value slots per stored entry that the padded formats would need with default parameters.

    HYB has no default width: it is estimated only when ``width_rule`` (a HYB width rule,
    called with the row lengths) is given, and left out otherwise.
    """
    xp = get_xp(csr.indptr)
    nnz = max(csr.nnz, 1)
    m = csr.shape[0]
    est = {"csr": 1.0, "coo": 1.0}
    if m == 0 or csr.nnz == 0:
        return est
    lengths = csr.row_lengths()
    ndiag = int(xp.unique(csr.indices.astype(xp.int64) - csr.row_ids().astype(xp.int64)).shape[0])
    est["dia"] = ndiag * m / nnz
    est["ell"] = row_fill(lengths, m) / nnz
    est["sell"] = row_fill(lengths, m, 32) / nnz
    rows = csr.row_ids().astype(xp.int64)
    blocks_1x4 = xp.unique(rows * (csr.shape[1] // 4 + 1) + csr.indices.astype(xp.int64) // 4).shape[0]
    est["bcsr"] = 4 * int(blocks_1x4) / nnz
    if width_rule is not None:
        k = int(width_rule(lengths))
        est["hyb"] = (k * m + int(xp.maximum(lengths - k, 0).sum())) / nnz
    return est


def check_fill(name: str, slots: int, csr, max_fill, indexed: bool = False) -> None:
    """Refuse to build ``name`` when it would store more than ``max_fill`` slots per entry
    (:class:`FormatFillError`), or more values than the device's free memory holds
    (:class:`~cocktail.errors.DeviceMemoryError`, whatever ``max_fill``).  ``indexed``: every
    slot also stores a column index."""
    if max_fill is None or slots <= max_fill * max(csr.nnz, 1):
        require_slots(name, slots, csr, indexed)
        return
    fits = sorted((f, fmt) for fmt, f in fill_estimates(csr).items() if f <= max_fill and fmt != name)
    fit_text = ", ".join(f"{fmt} ({f:.2f})" for f, fmt in fits) or "none"
    error = FormatFillError(
        f"format {name!r} would store {slots:,} values for {csr.nnz:,} stored entries "
        f"(fill {slots / max(csr.nnz, 1):.1f} > max_fill={max_fill:g}); "
        f"formats that fit, with their fill: {fit_text}; or pass a larger max_fill="
    )
    error.fill = slots / max(csr.nnz, 1)
    error.max_fill = max_fill
    raise error


def require_slots(name: str, slots: int, csr, indexed: bool = False) -> None:
    """Refuse, before allocating, a format whose ``slots`` (a value each, and an index each when
    ``indexed``) exceed the free memory of ``csr``'s device."""
    per_slot = csr.dtype.itemsize + (np.dtype(csr.index_dtype).itemsize if indexed else 0)
    what = "value and index slots" if indexed else "value slots"
    _memory.require(f"format {name!r} of a {_memory.shape_text(csr.shape)} matrix with {csr.nnz:,} entries",
                    [(f"its {int(slots):,} {what}", int(slots) * per_slot)], _memory.device_of(csr.data))


def check_padding(name: str, param: str, value: int, padded: int, unpadded: int, what: str) -> None:
    """Refuse a padding parameter that would pad ``unpadded`` (rows, slots) to ``padded``, more than
    doubling it and by more than :data:`PADDING_ALLOWANCE`."""
    if padded - unpadded > max(unpadded, PADDING_ALLOWANCE):
        raise ValueError(f"{name}: {param}={value} would pad {unpadded:,} {what} to {padded:,}; padding may at most "
                         f"double them (or add {PADDING_ALLOWANCE}); choose a smaller {param}")


def aligned(length: int, align: int) -> int:
    """``length`` rounded up to a multiple of ``align`` (at least 1)."""
    align = max(int(align), 1)
    return -(-int(length) // align) * align
