"""ELL (ELLPACK/ITPACK): every row padded to the same width (Bell & Garland §3.2, Fig. 7).

Layout: ``col`` and ``data`` have shape ``(width, stride)`` in C order, i.e. the paper's
rows x width matrix stored column-major.  Entry ``k`` of row ``i`` lives at ``[k, i]``
(flat offset ``k * stride + i``); the entries of a row are packed left in column order.
Padding slots hold ``col = -1`` (never used to index ``x``) and ``data = 0``.  ``stride``
is the row count rounded up to ``align`` so that every column starts aligned; rows
``>= rows`` are padding.
"""

from __future__ import annotations

from ..arrays import entry_rows
from . import _device_builds
from .base import SparseFormat
from .csr import CSR
from .padding import DEFAULT_MAX_FILL, aligned, check_fill, check_padding
from ._params import int_param, max_fill_param


def ell_arrays(csr: CSR, width: int, align: int, rows=None):
    """ELL ``col`` and ``data`` arrays of ``csr`` cut at ``width`` entries per row.

    Returns ``(col, data, overflow_mask)``: the two ``(width, aligned(rows, align))`` arrays
    described in the module docstring and a boolean mask over the CSR entries marking those
    at position ``>= width`` within their row (left out of the arrays; HYB stores them as COO).
    ``rows``: the entries' rows (:func:`~cocktail.arrays.entry_rows`) when the caller has them.
    One compaction of the kept entries (one synchronisation on a GPU).
    """
    xp = csr.xp
    rows = entry_rows(csr) if rows is None else rows
    pos = xp.arange(csr.nnz, dtype=xp.int64) - csr.indptr[rows]
    overflow = pos >= width
    keep = xp.flatnonzero(~overflow)
    col, data = _filled(csr, width, align, (pos[keep] * aligned(csr.shape[0], align) + rows[keep]),
                        csr.indices[keep], csr.data[keep])
    return col, data, overflow


def _filled(csr: CSR, width: int, align: int, flat, indices, values):
    """The ``(width, aligned(rows, align))`` ELL arrays holding ``indices`` and ``values`` at the flat slots
    ``flat`` (``k * stride + row``); every other slot padding."""
    xp = csr.xp
    stride = aligned(csr.shape[0], align)
    col = xp.full((width, stride), -1, dtype=csr.index_dtype)
    data = xp.zeros((width, stride), dtype=csr.data.dtype)
    col.reshape(-1)[flat] = indices
    data.reshape(-1)[flat] = values
    return col, data


def _full_width_arrays(csr: CSR, width: int, align: int):
    """:func:`ell_arrays` where ``width`` is at least the longest row: every entry is kept, so no mask, no
    compaction and no synchronisation."""
    xp = csr.xp
    rows = entry_rows(csr)
    flat = xp.arange(csr.nnz, dtype=xp.int64) - csr.indptr[rows]  # position in the row
    flat *= aligned(csr.shape[0], align)
    flat += rows
    return _filled(csr, width, align, flat, csr.indices, csr.data)


class ELL(SparseFormat):
    """ELLPACK storage: ``col`` and ``data`` of shape ``(width, stride)`` (see the module docstring)."""

    name = "ell"
    order = 80
    colour = "#b8860b"
    summary = "Rows of nearly equal length: fixed-width rows give perfectly regular memory access."
    traffic = ("every slot of the real rows (value and column index, padding included), one read of x"
               " per entry and one write of y")
    parameter_words = {"width": "slots per row; by default the longest row (a smaller width is refused: "
                                "use hyb)"}
    unset_words = {"width": "longest row"}
    array_fields = ("col", "data")
    defaults = {"align": 32, "width": None, "max_fill": DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Pad every row of ``csr`` to ``width`` (default: the longest row).

        ``width`` smaller than the longest row is a ``ValueError`` (HYB stores the rest);
        ``max_fill`` refuses layouts with more than that many slots (``width * rows``) per entry.
        """
        params = cls.resolve_params(params)
        align = int_param("ell", "align", params["align"])
        max_fill = max_fill_param("ell", params["max_fill"])
        m = csr.shape[0]
        launch = _device_builds.csr_launcher(csr)
        longest = 0
        if m:
            top = csr.row_lengths().max(keepdims=True)
            longest = int((top if launch is None else launch.fetch(top))[0])
        if params["width"] is None:
            width = longest
        else:
            width = int_param("ell", "width", params["width"], low=0)
            if width < longest:
                raise ValueError(
                    f"ell: width={width} is smaller than the longest row ({longest} entries); "
                    f"use format 'hyb' to store the entries past a fixed width in COO, "
                    f"or pass width=None (or >= {longest})"
                )
        check_fill("ell", width * m, csr, max_fill, indexed=True)
        check_padding("ell", "align", align, aligned(m, align), m, "rows")
        if launch is None or width > _device_builds.slices().LONG_ROW:
            col, data = _full_width_arrays(csr, width, align)  # width >= the longest row
        else:  # every slot written by one pass (cocktail.kernels.sell_build: ELL is one slice)
            col, data = _device_builds.slices().ell(csr, width, aligned(m, align), launch)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, col=col, data=data)

    @property
    def width(self) -> int:
        """Slots per row (the paper's K)."""
        return int(self.col.shape[0])

    def resolved_params(self) -> dict:
        """The parameters with ``width`` as built (the longest row when it was left unset)."""
        return {**self.params, "width": self.width}

    @property
    def stride(self) -> int:
        """Distance between consecutive slots of one row: the row count rounded up to ``align``."""
        return int(self.col.shape[1])

    def to_csr(self) -> CSR:
        """Read the real slots row by row; they are already in canonical order."""
        xp = self.xp
        m = self.shape[0]
        col_rows = self.col.T[:m]  # (rows, width): row i's slots in order
        real = col_rows >= 0
        indptr = xp.zeros(m + 1, dtype=self.index_dtype)
        if m:
            indptr[1:] = xp.cumsum(real.sum(axis=1), dtype=self.index_dtype)
        return CSR(self.shape, self.dtype, self.index_dtype, self.nnz, {},
                   data=self.data.T[:m][real], indices=col_rows[real], indptr=indptr)

    @property
    def stored_slots(self) -> int:
        return self.width * self.stride

    def spmv_bytes(self, dtype=None) -> int:
        """``width*rows*(idx+val)`` (every slot of the real rows, padding included)
        ``+ nnz*val`` (x) ``+ rows*val`` (y)."""
        val, idx = self._sizes(dtype)
        m = self.shape[0]
        return self.width * m * (idx + self.stored_size(val)) + self.nnz * val + m * val

    def describe(self) -> dict:
        m = self.shape[0]
        full = int((self.col[self.width - 1, :m] >= 0).sum()) if self.width and m else m
        return {"width": self.width, "stride": self.stride, "rows at full width": full}


FORMAT = ELL
