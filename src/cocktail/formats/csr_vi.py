"""CSR-VI: CSR whose values are one-byte codes into a table of the matrix's distinct values.

Kourtis, Goumas & Koziris's CSR-VI (CF 2008), the CSR form of :mod:`.dia_vi`.  A matrix holding
few distinct values (a graph Laplacian's -1 and its degrees, a stencil's weights, a weighted
adjacency of small integer weights) is multiplied reading one byte per entry in place of its
value's four or eight: float64 with int32 indices stores 12 bytes an entry as CSR, 5 as CSR-VI (a
product moves 20 and 13, counting its read of ``x``).
Layout, for an ``m x n`` matrix with ``nnz`` entries:

* ``indptr`` (m + 1,), ``indices`` (nnz,), index dtype: CSR's, canonical; with ``short_columns``
  ``indices`` are uint16 offsets from ``column_base`` (one column per chunk of 256 entries:
  :mod:`.csr_family`), 3 bytes an entry in all.
* ``codes`` (nnz,), uint8: ``table[codes[j]]`` is CSR's ``data[j]``.
* ``table`` (ntable,), value dtype: the distinct values, sorted ascending; at most
  :data:`~cocktail.formats.dia_vi.MAX_VALUES` (256).

Lossless: values are distinct by their bits (``-0.0`` is not ``0.0``, each NaN keeps its payload), so
the round trip to CSR is exact.  A matrix of more distinct values is refused
(:class:`~cocktail.errors.FormatValuesError`).
"""

from __future__ import annotations

import numpy as np

from .csr import row_length_facts
from .csr_family import CSRFamily
from .dia_vi import MAX_VALUES, value_table


class CodedCSR(CSRFamily):
    """CSR with one-byte value codes: ``indptr``, ``indices`` (short, with ``column_base``, where ``short_columns``
    says: :mod:`.csr_family`), ``codes`` (nnz,), ``table`` (<= 256 values)."""

    name = "csr_vi"
    order = 30
    family = "csr"
    summary = "As csr, with at most 256 distinct values: a one-byte code per entry, not a value."
    traffic = ("the row pointers, each entry's column index and one-byte code, the value table, one read of x "
               "per entry and one write of y")
    array_fields = ("codes", "table", "indices", "column_base", "indptr")
    max_values = MAX_VALUES
    coded_values = True

    @classmethod
    def from_csr(cls, csr, **params):
        """Keep ``csr``'s index arrays (short columns where ``short_columns`` says) and code its values;
        :class:`~cocktail.errors.FormatValuesError` when they hold more than 256 distinct values."""
        params = cls.resolve_params(params)
        table, codes, _ = value_table(cls.name, csr, csr.nnz, instead="csr")
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, codes=codes, table=table,
                   **cls.index_arrays(csr, params))

    @property
    def data(self):
        """CSR's ``data``, decoded: ``table[codes]`` (a new array of the value dtype)."""
        if not self.nnz:
            return self.xp.zeros(0, dtype=self.table.dtype)
        return self.table[self.codes]

    def spmv_bytes(self, dtype=None) -> int:
        """CSR's model with a one-byte code per entry in place of its value: the row pointers and column indices
        (:meth:`~.CSRFamily.index_bytes`), ``nnz`` codes, ``ntable*val`` (table), ``nnz*val`` (x), ``m*val`` (y)."""
        val, idx = self._sizes(dtype)
        code = np.dtype(np.uint8).itemsize
        return (self.index_bytes(idx) + self.nnz * code + int(self.table.shape[0]) * self.stored_size(val)
                + self.nnz * val + self.shape[0] * val)

    def describe(self) -> dict:
        return {"distinct values": int(self.table.shape[0]), **row_length_facts(self.row_lengths(), self.nnz),
                **self.column_facts()}


FORMAT = CodedCSR
