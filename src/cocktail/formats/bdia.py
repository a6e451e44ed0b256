"""BDIA: the banded diagonal format (clSpMV §4.2.2, Fig. 2).

A band is a maximal run of occupied diagonals with consecutive offsets.  Layout, for an
``m x n`` matrix with ``ndiag`` occupied diagonals grouped into ``nbands`` bands:

* ``offsets`` (nbands,), index dtype: offset (``col - row``) of the first diagonal of each
  band, ascending.
* ``band_ptr`` (nbands+1,), index dtype (int64 if ``ndiag`` does not fit): band ``b`` holds
  rows ``band_ptr[b] .. band_ptr[b+1]-1`` of ``data``; row ``j`` of band ``b`` is the
  diagonal of offset ``offsets[b] + (j - band_ptr[b])``.  ``band_ptr[0] = 0``,
  ``band_ptr[-1] = ndiag``.
* ``data`` (ndiag, stride), value dtype, C order: exactly DIA's ``data``
  (``data[j, i] = A[i, i + offset of diagonal j]`` inside the matrix, else 0; ``stride`` is
  ``m`` rounded up to a multiple of ``align``; slots ``i >= m`` are padding, 0).
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).
"""

from __future__ import annotations

from ..arrays import get_xp
from . import padding
from ._params import pointer_dtype
from .dia import DIA


def bands(offsets, ptr_dtype):
    """Split sorted unique diagonal offsets into bands: ``(band offsets, band_ptr)``."""
    xp = get_xp(offsets)
    ndiag = int(offsets.shape[0])
    off = offsets.astype(xp.int64)
    start = xp.ones(ndiag, dtype=bool)
    if ndiag > 1:
        start[1:] = off[1:] != off[:-1] + 1
    first = xp.nonzero(start)[0]
    band_ptr = xp.concatenate([first, xp.asarray([ndiag], dtype=first.dtype)]).astype(ptr_dtype)
    return offsets[first].copy(), band_ptr


def band_diagonal_offsets(offsets, band_ptr):
    """The offset of every row of ``data`` (int64), expanded from the bands."""
    xp = get_xp(offsets)
    ptr = band_ptr.astype(xp.int64)
    j = xp.arange(int(ptr[-1]), dtype=xp.int64)
    band = xp.searchsorted(ptr, j, side="right") - 1  # band holding data row j (no xp.repeat: CuPy)
    return offsets.astype(xp.int64)[band] + j - ptr[band]


class BDIA(DIA):
    """Banded diagonal storage: ``offsets`` (nbands,), ``band_ptr`` (nbands+1,), ``data`` (ndiag, stride).

    Parameters as DIA: ``align`` (default 32) rounds the row stride of ``data`` up to a
    multiple of this many elements; ``max_fill`` (default ``padding.DEFAULT_MAX_FILL``, None
    disables) refuses matrices needing more than ``max_fill * nnz`` slots (``ndiag * rows``).
    """

    name = "bdia"
    order = 70
    colour = "#ba68c8"
    family = "dia"
    summary = "Diagonals that come in dense bands of adjacent offsets: each band shares its x."
    traffic = "as dia (one offset per band), plus the band pointers"
    array_fields = ("offsets", "band_ptr", "data") + padding.ZERO_FIELDS
    defaults = {"align": 32, "max_fill": padding.DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr, **params):
        """Store every occupied diagonal of ``csr`` densely, grouped into bands."""
        layout = cls.layout(csr, params, bands=True)
        diag_offsets, data = layout.place(csr.data)
        ptr_dtype = pointer_dtype(csr.index_dtype, layout.diagonals)
        offsets, band_ptr = layout.band_arrays(ptr_dtype) or bands(diag_offsets, ptr_dtype)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, layout.params,
                   offsets=offsets, band_ptr=band_ptr, data=data, **layout.explicit_zeros())

    def diagonals(self):
        """The offset of every row of ``data``, expanded from the bands."""
        return band_diagonal_offsets(self.offsets, self.band_ptr)

    def spmv_bytes(self, dtype=None) -> int:
        """DIA's bytes (band offsets in place of diagonal offsets) + ``(nbands+1)*ptr`` (band_ptr)."""
        return super().spmv_bytes(dtype) + self.band_ptr.nbytes

    def describe(self) -> dict:
        nbands = int(self.offsets.shape[0])
        out = {"bands": nbands, "diagonals": int(self.data.shape[0]), "stride": self.stride}
        if nbands:
            widths = get_xp(self.band_ptr).diff(self.band_ptr)
            out["widest band"] = int(widths.max())
            out["offsets"] = f"{int(self.offsets[0])}..{int(self.offsets[-1]) + int(widths[-1]) - 1}"
        return out


FORMAT = BDIA
