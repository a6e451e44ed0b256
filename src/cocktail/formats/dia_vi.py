"""DIA-VI: DIA whose values are one-byte codes into a table of the matrix's distinct values.

Kourtis, Goumas & Koziris (CF 2008) store CSR's values this way (CSR-VI); here DIA's.  A
matrix with few distinct values (a stencil: two) is multiplied reading one byte per slot
instead of the value's four or eight.  Layout, for an ``m x n`` matrix with ``ndiag``
occupied diagonals:

* ``offsets`` (ndiag,), index dtype: as DIA's.
* ``codes`` (ndiag, stride), uint8, C order: ``table[codes[d, i]]`` is DIA's ``data[d, i]``
  (DIA's slots, ``stride`` and padding; a slot holding no entry has the code of 0).
* ``table`` (ntable,), value dtype: the distinct values of the stored entries, and 0 when
  some slot holds no entry (the padding zero), sorted ascending; at most :data:`MAX_VALUES`.
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).
"""

from __future__ import annotations

import numpy as np

from ..arrays import bit_keys, to_numpy
from ..precision import compute_dtype
from ..errors import FormatValuesError
from . import padding
from .base import SparseFormat
from .dia import DIA, diagonal_triplets, valid_slots

#: Distinct values a one-byte code can address.
MAX_VALUES = 256


#: Values sampled (evenly spaced) to guess the table before every entry is looked up in it.
SAMPLE = 4096


def value_table(name: str, csr, slots: int, instead: str = "dia or bdia"):
    """``(table, entry_codes, zero_code)``: the distinct values of ``csr``'s entries (0 among them when
    ``slots`` exceed the entries) sorted by value, each entry's code (uint8) and the code of 0 (0 when
    0 is absent).

    Values are distinct by their bits (:func:`~cocktail.arrays.bit_keys`), so that ``-0.0`` and each
    NaN decode as they were stored.  More than :data:`MAX_VALUES` distinct values is a
    :class:`~cocktail.errors.FormatValuesError` that advises storing the matrix as ``instead``.

    Only the distinct values are sorted: a sample of :data:`SAMPLE` entries proposes the table, every
    entry is looked up in it (``searchsorted``), and the few entries it misses, if any, are added to it.
    Two synchronisations (the sample, the check) where the sample holds every value; the result is the
    one :func:`sorted_value_table`'s sort of every entry gives.
    """
    xp = csr.xp
    nnz = csr.nnz
    if not nnz or csr.data.dtype.itemsize > 8:  # complex128's keys are numbered, not its bits
        return sorted_value_table(name, csr, slots, instead)
    padded = slots > nnz
    keys = bit_keys(csr.data)  # a view: the values' bits, unsigned
    step = max(1, nnz // SAMPLE)
    known = np.unique(to_numpy(keys[::step]))
    if padded:
        known = np.union1d(known, np.zeros(1, dtype=known.dtype))  # the padding zero's key: +0.0, the lowest
    while True:
        if known.shape[0] > MAX_VALUES:
            return sorted_value_table(name, csr, slots, instead)  # refuses, counting every distinct value
        # the last key again at the end: a key past every known one finds a different key there
        table_keys = xp.asarray(np.concatenate([known, known[-1:]]))
        where = xp.searchsorted(table_keys[:-1], keys)
        found = table_keys[where] == keys
        # by value: the rank of each bit pattern is its code
        values = table_keys[:-1].view(csr.data.dtype)
        order = _by_value(xp, values)
        rank = xp.empty_like(order)
        rank[order] = xp.arange(known.shape[0], dtype=order.dtype)
        # one synchronisation: whether every entry was found, and the code of the padding zero (key 0: first)
        state = to_numpy(xp.concatenate([found.all().astype(rank.dtype).reshape(1), rank[:1]]))
        if state[0]:
            break
        missing = np.unique(to_numpy(keys[xp.flatnonzero(~found)]))
        known = np.union1d(known, missing)
    codes = rank.astype(xp.uint8)[where]
    return values[order], codes, int(state[1]) if padded else 0


def _by_value(xp, values):
    """Positions of distinct bit patterns ``values`` (rising bits) sorted by value, equal values (``-0.0`` and
    ``0.0``) in their given order: NumPy's stable sort and CuPy's give one order (a radix sort of the values
    themselves puts ``-0.0`` first).  A half type is widened exactly: CuPy sorts no bfloat16."""
    widened = values.astype(compute_dtype(values.dtype)) + 0  # -0.0 + 0 is 0.0
    return np.argsort(widened, kind="stable") if xp is np else xp.argsort(widened)


def sorted_value_table(name: str, csr, slots: int, instead: str = "dia or bdia"):
    """:func:`value_table` by one sort of every entry's key (``unique``): for complex128, and to count every
    distinct value of a matrix holding too many."""
    xp = csr.xp
    padded = slots > csr.nnz
    values = xp.concatenate([csr.data, xp.zeros(1, dtype=csr.data.dtype)]) if padded else csr.data
    _, first, inverse = xp.unique(bit_keys(values), return_index=True, return_inverse=True)
    count = int(first.shape[0])
    if count > MAX_VALUES:
        error = FormatValuesError(
            f"format {name!r} would need a table of {count:,} distinct values"
            f"{' (the padding zero included)' if padded else ''}, more than the {MAX_VALUES} its one-byte "
            f"codes address; store the matrix as {instead}")
        error.distinct, error.limit = count, MAX_VALUES
        raise error
    # by value: the rank of each bit pattern is its code
    order = _by_value(xp, values[first])
    rank = xp.empty_like(order)
    rank[order] = xp.arange(count, dtype=order.dtype)
    codes = rank[inverse.reshape(-1)].astype(xp.uint8)
    return values[first][order], codes[:csr.nnz], int(codes[csr.nnz]) if padded else 0


class DIAVI(DIA):
    """DIA with one-byte value codes: ``offsets`` (ndiag,), ``codes`` (ndiag, stride), ``table`` (<= 256 values).

    Parameters as DIA: ``align`` (default 32) rounds the row stride of ``codes`` up to a
    multiple of this many slots; ``max_fill`` (default ``padding.DEFAULT_MAX_FILL``, None
    disables) refuses matrices needing more than ``max_fill * nnz`` slots (``ndiag * rows``).
    A matrix with more than 256 distinct values (the padding zero included) is refused
    (:class:`~cocktail.errors.FormatValuesError`).
    """

    name = "dia_vi"
    order = 60
    colour = "#8e24aa"
    family = "dia"
    summary = "As dia, with at most 256 distinct values: a one-byte code per slot, not a value."
    traffic = "as dia, but a one-byte code per slot in place of its value, plus the value table"
    array_fields = ("offsets", "codes", "table") + padding.ZERO_FIELDS
    defaults = {"align": 32, "max_fill": padding.DEFAULT_MAX_FILL}
    max_values = MAX_VALUES
    coded_values = True

    @classmethod
    def from_csr(cls, csr, **params):
        """Store every occupied diagonal of ``csr`` as codes into the table of its distinct values."""
        layout = cls.layout(csr, params)
        table, entry_codes, zero_code = value_table(cls.name, csr, layout.diagonals * layout.stride)
        offsets, codes = layout.place(entry_codes, fill=zero_code)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, layout.params,
                   offsets=offsets, codes=codes, table=table, **layout.explicit_zeros())

    def values(self):
        """DIA's ``data``, decoded: ``table[codes]`` (a new array of the value dtype)."""
        if not self.codes.size:  # no diagonals: the table is empty too
            return self.xp.zeros(self.codes.shape, dtype=self.table.dtype)
        return self.table[self.codes]

    def to_csr(self):
        """The canonical CSR: nonzero in-matrix slots plus the recorded explicit zeros."""
        rows, cols, vals = diagonal_triplets(self.values(), self.diagonals(), self.shape)
        return padding.with_explicit_zeros(self, rows, cols, vals)

    @property
    def stride(self) -> int:
        """Distance in slots between consecutive diagonals in ``codes``."""
        return int(self.codes.shape[1])

    @property
    def stored_slots(self) -> int:
        return int(self.codes.shape[0]) * self.stride

    def spmv_bytes(self, dtype=None) -> int:
        """``ndiag*idx`` (offsets) + ``valid`` (one-byte codes) + ``ntable*val`` (table) + ``valid*val`` (x)
        + ``rows*val`` (y); ``valid`` as DIA's."""
        val, idx = self._sizes(dtype)
        valid = valid_slots(self.diagonals(), self.shape)
        codes = valid * np.dtype(np.uint8).itemsize
        return (int(self.offsets.shape[0]) * idx + codes + int(self.table.shape[0]) * val + valid * val
                + self.shape[0] * val)

    def _stream_bytes(self, val: int) -> int:
        # As DIA: only the in-matrix slots' codes leave DRAM (one byte each), plus offsets and table.
        return SparseFormat._stream_bytes(self, val) - int(self.codes.nbytes) + self.x_reads()

    def describe(self) -> dict:
        return {**super().describe(), "distinct values": int(self.table.shape[0])}


FORMAT = DIAVI
