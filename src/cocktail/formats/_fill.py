"""Shared pieces of the padded formats: the ``max_fill`` guard and explicit-zero bookkeeping.

Formats that store fill values (DIA, BDIA, the blocked formats) cannot tell a stored
explicit zero from fill.  They keep the explicit zeros of the input on the side
(``zero_row``, ``zero_col``, ``zero_val``; usually empty) so ``to_csr`` round-trips exactly.
The kernels never read those arrays.
"""

from __future__ import annotations

import numpy as np

from .._xp import get_xp
from ..errors import FormatFillError

DEFAULT_MAX_FILL = 20.0
ZERO_FIELDS = ("zero_row", "zero_col", "zero_val")


def explicit_zeros(csr) -> dict:
    """The explicit zeros of ``csr`` as the side arrays ``zero_row``, ``zero_col``, ``zero_val``."""
    mask = csr.data == 0
    rows = csr.row_ids()[mask].astype(csr.index_dtype)
    return {"zero_row": rows, "zero_col": csr.indices[mask].copy(), "zero_val": csr.data[mask].copy()}


def with_explicit_zeros(fmt, rows, cols, vals):
    """Canonical CSR from a padded format's real slots (``vals != 0``) and its explicit zeros."""
    from .csr import CSR

    xp = get_xp(vals)
    keep = vals != 0
    rows = xp.concatenate([rows[keep].astype(xp.int64), fmt.zero_row.astype(xp.int64)])
    cols = xp.concatenate([cols[keep].astype(xp.int64), fmt.zero_col.astype(xp.int64)])
    vals = xp.concatenate([vals[keep], fmt.zero_val])
    return CSR.from_triplets(rows, cols, vals, fmt.shape, fmt.index_dtype)


def row_fill(lengths, nrows: int, slice_height: int = 0) -> float:
    """Value slots ELL (``slice_height`` 0) or SELL would store per row-length array."""
    xp = get_xp(lengths)
    if nrows == 0:
        return 0
    if slice_height <= 0:
        return int(lengths.max()) * nrows
    pad = (-nrows) % slice_height
    padded = xp.concatenate([lengths, xp.zeros(pad, dtype=lengths.dtype)])
    return int(padded.reshape(-1, slice_height).max(axis=1).sum()) * slice_height


def fill_estimates(csr) -> dict:
    """Value slots per stored entry that the padded formats would need with default parameters."""
    from ..tuning.hyb import bell_garland_ell_width

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
    k = bell_garland_ell_width(lengths)
    est["hyb"] = (k * m + int(xp.maximum(lengths - k, 0).sum())) / nnz
    return est


def check_fill(name: str, slots: int, csr, max_fill) -> None:
    """Refuse to build ``name`` when it would store more than ``max_fill`` slots per entry."""
    if max_fill is None or slots <= max_fill * max(csr.nnz, 1):
        return
    fits = sorted((f, fmt) for fmt, f in fill_estimates(csr).items() if f <= max_fill and fmt != name)
    fit_text = ", ".join(f"{fmt} ({f:.2f})" for f, fmt in fits)
    raise FormatFillError(
        f"format {name!r} would store {slots:,} values for {csr.nnz:,} stored entries "
        f"(fill {slots / max(csr.nnz, 1):.1f} > max_fill={max_fill:g}); "
        f"formats that fit, with their fill: {fit_text}; or pass a larger max_fill="
    )


def aligned(length: int, align: int) -> int:
    """``length`` rounded up to a multiple of ``align`` (at least 1)."""
    align = max(int(align), 1)
    return -(-int(length) // align) * align


def as_index(xp, values, dtype):
    """Convert to the format's index dtype (a helper for builders)."""
    return xp.asarray(values).astype(np.dtype(dtype), copy=False)
