"""DIA: the diagonal format (Bell & Garland §3.1, Fig. 5).

Layout, for an ``m x n`` matrix with ``ndiag`` occupied diagonals:

* ``offsets`` (ndiag,), index dtype: ``col - row`` of each occupied diagonal, sorted
  ascending, unique.
* ``data`` (ndiag, stride), value dtype, C order: ``data[d, i] = A[i, i + offsets[d]]``
  when ``0 <= i + offsets[d] < n``, else 0.  ``stride`` is ``m`` rounded up to a multiple
  of ``align``; slots ``i >= m`` are padding (0).  This is the column-major layout of the
  paper's ``m x ndiag`` array: consecutive rows of one diagonal are adjacent in memory.
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).

A stored explicit zero still occupies its diagonal.
"""

from __future__ import annotations

import numpy as np

from ..arrays import entry_rows, get_xp, to_numpy
from . import _device_builds, padding
from ._params import int_param, max_fill_param
from .base import SparseFormat


def check_params(name: str, params: dict) -> None:
    """Validate the ``align`` and ``max_fill`` parameters of the diagonal formats."""
    int_param(name, "align", params["align"])
    max_fill_param(name, params["max_fill"])


#: Occupied diagonals are found by marking a table of one flag per possible diagonal (``m + n - 1`` bytes)
#: while it is no larger than about twice the entry count (plus this many); a matrix of far more possible
#: diagonals than entries (a huge, nearly empty one) sorts its entries' diagonals instead.
TABLE_ALLOWANCE = 1 << 16


def entry_diagonals(csr, rows):
    """``(shifted, occupied)`` (int64): every entry's ``col - row + (m - 1)`` (its diagonal, counted from 0 at
    the lowest possible one) and the sorted distinct values among them.  ``rows``: :func:`~cocktail.arrays.entry_rows`.

    No sort over the entries: a flag per possible diagonal is set by one scatter and the set flags are read
    back (one synchronisation), unless the flags would outnumber twice the entries (:data:`TABLE_ALLOWANCE`).
    """
    xp = csr.xp
    m, n = csr.shape
    shifted = xp.subtract(csr.indices, rows, dtype=xp.int64)
    shifted += m - 1
    size = m + n - 1
    if size <= 2 * csr.nnz + TABLE_ALLOWANCE:
        table = xp.zeros(size, dtype=bool)
        table[shifted] = True
        return shifted, xp.flatnonzero(table).astype(xp.int64, copy=False)
    return shifted, xp.unique(shifted)


def diagonal_offsets(csr, rows=None):
    """Sorted unique ``col - row`` of the stored entries of ``csr`` (index dtype, array module of csr).
    ``rows``: the entries' rows (:func:`~cocktail.arrays.entry_rows`) when the caller has them."""
    xp = csr.xp
    if not csr.nnz:
        return xp.zeros(0, dtype=csr.index_dtype)
    _, occupied = entry_diagonals(csr, entry_rows(csr) if rows is None else rows)
    return (occupied - (csr.shape[0] - 1)).astype(csr.index_dtype)


def diagonal_slots(csr, offsets, rows=None):
    """``(d, rows)`` (int64): the slot ``[d, row]`` of every entry of ``csr`` on the diagonals ``offsets``."""
    xp = csr.xp
    rows = entry_rows(csr) if rows is None else rows
    diag = xp.subtract(csr.indices, rows, dtype=xp.int64)
    return xp.searchsorted(offsets.astype(xp.int64), diag), rows


def diagonal_data(csr, offsets, stride: int, rows=None):
    """The ``(len(offsets), stride)`` data array holding ``csr``'s entries on the diagonals ``offsets``."""
    xp = csr.xp
    data = xp.zeros((offsets.shape[0], stride), dtype=csr.data.dtype)
    if csr.nnz:
        d, rows = diagonal_slots(csr, offsets, rows)
        data[d, rows] = csr.data  # canonical CSR: each (row, col) appears once
    return data


def entry_slots(shifted, occupied, rows, stride: int):
    """Flat slot ``d * stride + row`` (int64) of every entry in a ``(len(occupied), stride)`` diagonal array,
    from :func:`entry_diagonals`'s ``shifted`` and ``occupied``."""
    xp = get_xp(shifted)
    flat = xp.searchsorted(occupied, shifted)
    flat *= stride
    flat += rows
    return flat


def valid_slots(offsets, shape) -> int:
    """Number of (row, diagonal) pairs whose column lies inside the matrix."""
    m, n = shape
    off = to_numpy(offsets).astype(np.int64)
    lo = np.maximum(0, -off)
    hi = np.minimum(m, n - off)
    return int(np.maximum(hi - lo, 0).sum())


def diagonal_triplets(data, diag_offsets, shape):
    """Row, column and value of every nonzero in-matrix slot of a ``data`` array.

    ``diag_offsets[d]`` is the offset of row ``d`` of ``data``.  Padding and slots outside
    the matrix are skipped whatever they hold.
    """
    xp = get_xp(data)
    m, n = shape
    d, rows = xp.nonzero(data[:, :m])
    cols = rows + diag_offsets.astype(xp.int64)[d]
    inside = (cols >= 0) & (cols < n)
    return rows[inside], cols[inside], data[d[inside], rows[inside]]


class HostLayout:
    """Where a build puts ``csr``'s entries among its diagonals, found on the host (:meth:`DIA.entry_layout`): the
    resolved ``params``, the sorted occupied ``offsets``, the row ``stride``, and each entry's flat slot and row."""

    def __init__(self, csr, params, offsets, stride, flat, rows):
        self.csr, self.params, self.offsets, self.stride, self.flat, self.rows = csr, params, offsets, stride, flat, rows
        self.diagonals = int(offsets.shape[0])

    def place(self, values, fill=0):
        """``(offsets, data)``: the ``(diagonals, stride)`` array of ``values``' dtype holding ``values[j]`` (one per
        entry) at entry j's slot and ``fill`` in every other."""
        xp = self.csr.xp
        shape = (self.diagonals, self.stride)
        data = xp.zeros(shape, dtype=values.dtype) if fill == 0 else xp.full(shape, fill, dtype=values.dtype)
        if self.flat is not None:
            data.reshape(-1)[self.flat] = values  # canonical CSR: each (row, col) appears once
        return self.offsets, data

    def band_arrays(self, ptr_dtype):
        """The bands found with the diagonals: none on the host (:func:`~.bdia.bands` splits the offsets)."""
        return None

    def explicit_zeros(self) -> dict:
        """The explicit zeros' side arrays (:func:`~.padding.explicit_zeros`)."""
        return padding.explicit_zeros(self.csr, self.rows)


class DeviceLayout:
    """:class:`HostLayout` found on a device (:func:`cocktail.kernels.diagonal_build.find`: a pass and one
    synchronisation); :meth:`place` is one more pass, which also writes the offsets (and the bands)."""

    def __init__(self, csr, params, found, stride):
        self.csr, self.params, self.found, self.stride = csr, params, found, stride
        self.diagonals = found.diagonals
        self.rows = None  # never expanded: the kernels find each entry's row themselves
        self.bands = None

    def place(self, values, fill=0):
        """As :meth:`HostLayout.place`; ``fill`` an integer (a code) or 0."""
        values = self.csr.xp.ascontiguousarray(values)
        offsets, data, band_offsets, band_ptr = self.found.place(values, int(fill), self.stride)
        self.bands = (band_offsets, band_ptr)
        return offsets, data

    def band_arrays(self, ptr_dtype):
        """``(band offsets, band_ptr)`` as :func:`~.bdia.bands` makes them, written by :meth:`place` when the
        layout was asked for the bands."""
        band_offsets, band_ptr = self.bands
        if band_offsets is None:
            return None
        return band_offsets, band_ptr.astype(ptr_dtype, copy=False)

    def explicit_zeros(self) -> dict:
        """The explicit zeros' side arrays: none to look for where the marks counted none."""
        return padding.explicit_zeros(self.csr, count=self.found.zeros)


class DIA(SparseFormat):
    """Diagonal storage: ``offsets`` (ndiag,) and ``data`` (ndiag, stride), see the module docstring.

    Parameters: ``align`` (default 32) rounds the row stride of ``data`` up to a multiple
    of this many elements; ``max_fill`` (default ``padding.DEFAULT_MAX_FILL``, None disables)
    refuses matrices needing more than ``max_fill * nnz`` slots (``ndiag * rows``).
    """

    name = "dia"
    order = 50
    colour = "#6a1b9a"
    summary = "A few full diagonals, as in stencils and banded matrices: no column indices at all."
    traffic = ("the diagonal offsets, every slot of each stored diagonal that lies inside the matrix "
               "(zero fill included) with one read of x each, and one write of y")
    array_fields = ("offsets", "data") + padding.ZERO_FIELDS
    unread_fields = padding.ZERO_FIELDS
    defaults = {"align": 32, "max_fill": padding.DEFAULT_MAX_FILL}

    @classmethod
    def entry_layout(cls, csr, params: dict):
        """``(params, offsets, stride, flat, rows)``: resolved params, the sorted occupied offsets, the row
        stride, every entry's flat slot (:func:`entry_slots`; None without entries) and row (int64).

        Refuses (``max_fill``) before anything of the size of the layout is allocated.  One pass over the
        entries finds the diagonals (no sort, one synchronisation: :func:`entry_diagonals`).
        """
        params = cls.resolve_params(params)
        check_params(cls.name, params)
        xp = csr.xp
        m = csr.shape[0]
        if csr.nnz:
            rows = entry_rows(csr)
            shifted, occupied = entry_diagonals(csr, rows)
            offsets = (occupied - (m - 1)).astype(csr.index_dtype)
        else:
            rows = shifted = occupied = None
            offsets = xp.zeros(0, dtype=csr.index_dtype)
        padding.check_fill(cls.name, int(offsets.shape[0]) * m, csr, params["max_fill"])
        stride = padding.aligned(m, params["align"])
        padding.check_padding(cls.name, "align", params["align"], stride, m, "rows")
        flat = entry_slots(shifted, occupied, rows, stride) if csr.nnz else None
        return params, offsets, stride, flat, rows

    @classmethod
    def layout(cls, csr, params: dict, bands: bool = False):
        """Where ``csr``'s entries go: a :class:`HostLayout` (:meth:`entry_layout`), or on a device a
        :class:`DeviceLayout` (:mod:`cocktail.kernels.diagonal_build`: the diagonals marked and counted in a pass
        with the explicit zeros, and with ``bands`` the bands, one synchronisation, no sort; entries are placed by a
        second pass).  The device takes a matrix with entries whose diagonals' table is allowed
        (:data:`TABLE_ALLOWANCE`); the others are built as on the host.  Refuses (``max_fill``) before anything of
        the size of the layout is allocated."""
        m, n = csr.shape
        launch = _device_builds.launcher_for(csr.indptr)
        if launch is None or not csr.nnz or m + n - 1 > 2 * csr.nnz + TABLE_ALLOWANCE:
            return HostLayout(csr, *cls.entry_layout(csr, params))
        params = cls.resolve_params(params)
        check_params(cls.name, params)
        found = _device_builds.diagonals().find(csr, bands, launch)
        padding.check_fill(cls.name, found.diagonals * m, csr, params["max_fill"])
        stride = padding.aligned(m, params["align"])
        padding.check_padding(cls.name, "align", params["align"], stride, m, "rows")
        return DeviceLayout(csr, params, found, stride)

    @classmethod
    def diagonal_layout(cls, csr, params: dict):
        """Resolved params, the sorted occupied offsets and the row stride of ``csr``'s diagonals.

        Refuses (``max_fill``) before anything of the size of the layout is allocated.
        """
        params = cls.resolve_params(params)
        check_params(cls.name, params)
        m = csr.shape[0]
        offsets = diagonal_offsets(csr)
        padding.check_fill(cls.name, int(offsets.shape[0]) * m, csr, params["max_fill"])
        stride = padding.aligned(m, params["align"])
        padding.check_padding(cls.name, "align", params["align"], stride, m, "rows")
        return params, offsets, stride

    @classmethod
    def build_diagonals(cls, csr, params: dict):
        """``(params, offsets, data, rows)``: :meth:`dense_diagonals` and the entries' rows (int64, or None
        without entries or where a device placed them) for :func:`~.padding.explicit_zeros`."""
        layout = cls.layout(csr, params)
        offsets, data = layout.place(csr.data)
        return layout.params, offsets, data, layout.rows

    @classmethod
    def dense_diagonals(cls, csr, params: dict):
        """Resolved params, the sorted occupied offsets and the ``(ndiag, stride)`` data of ``csr``.

        Refuses (``max_fill``) before allocating the data.
        """
        return cls.build_diagonals(csr, params)[:3]

    @classmethod
    def from_csr(cls, csr, **params):
        """Store every occupied diagonal of ``csr`` densely."""
        layout = cls.layout(csr, params)
        offsets, data = layout.place(csr.data)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, layout.params,
                   offsets=offsets, data=data, **layout.explicit_zeros())

    def diagonals(self):
        """The offset of every row of ``data``."""
        return self.offsets

    def to_csr(self):
        """The canonical CSR: nonzero in-matrix slots plus the recorded explicit zeros."""
        rows, cols, vals = diagonal_triplets(self.data, self.diagonals(), self.shape)
        return padding.with_explicit_zeros(self, rows, cols, vals)

    @property
    def stride(self) -> int:
        """Distance in elements between consecutive diagonals in ``data``."""
        return int(self.data.shape[1])

    @property
    def stored_slots(self) -> int:
        return int(self.data.shape[0]) * self.stride

    def spmv_bytes(self, dtype=None) -> int:
        """``ndiag*idx`` (offsets) + ``valid*val`` (data) + ``valid*val`` (x) + ``rows*val`` (y).

        ``valid`` counts the (row, diagonal) pairs whose column is inside the matrix: a
        kernel that bounds-checks the column never reads the other slots.
        """
        val, idx = self._sizes(dtype)
        valid = valid_slots(self.diagonals(), self.shape)
        return int(self.offsets.shape[0]) * idx + valid * (val + self.stored_size(val)) + self.shape[0] * val

    def x_window(self) -> int:
        """The span of the diagonals (at most ``n``): row ``i`` reads ``x[i + lowest offset .. i + highest]``,
        so rows worked on together read a window of ``x`` that slides down it as the product goes."""
        d = self.diagonals()
        if d.shape[0] == 0:
            return 0
        return min(self.shape[1], int(d.max()) - int(d.min()) + 1)

    def x_reads(self) -> int:
        """The in-matrix slots: each multiplies its ``x`` value, fill included."""
        return valid_slots(self.diagonals(), self.shape)

    def _stream_bytes(self, val: int) -> int:
        # The kernel bounds-checks the column before loading data: the slots outside the matrix
        # (whole runs at the ends of each diagonal) and the alignment padding are never read.
        return super()._stream_bytes(val) + (self.x_reads() - int(self.data.size)) * self.stored_size(val)

    def describe(self) -> dict:
        out = {"diagonals": int(self.offsets.shape[0]), "stride": self.stride}
        if self.offsets.shape[0]:
            out["offsets"] = f"{int(self.offsets[0])}..{int(self.offsets[-1])}"
        return out


FORMAT = DIA
