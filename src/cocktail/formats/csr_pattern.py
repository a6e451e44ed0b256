"""CSR-pattern: CSR of a matrix whose entries all hold one value, stored once.

A graph's adjacency matrix (every entry 1), an incidence matrix, or any matrix whose stored
entries share one value needs no value per entry: the product is that value times a sum of
gathered ``x``.  Against CSR it drops ``nnz`` values from every product (float64 with int32
indices: 12 bytes an entry down to 4).  Layout, for an ``m x n`` matrix with ``nnz`` entries:

* ``indptr`` (m + 1,), ``indices`` (nnz,), index dtype: CSR's, canonical.
* ``value`` (1,), value dtype: the value every entry holds (0 when there are none).

Lossless: values are equal by their bits (``-0.0`` is not ``0.0``, a NaN keeps its payload),
so the round trip to CSR is exact; a matrix holding two values is refused
(:class:`~cocktail.errors.FormatValuesError`).  ``format="auto"`` stores a plan's CSR parts
this way by itself when every entry holds one value (:mod:`cocktail.auto.planner`).
"""

from __future__ import annotations

from ..arrays import bit_keys, get_xp, row_ids
from ..errors import FormatValuesError
from .base import SparseFormat
from .csr import CSR, row_length_facts


def one_value(values) -> bool:
    """Whether every value of the 1-D array ``values`` has the bits of the first (True for none)."""
    if not values.shape[0]:
        return True
    keys = bit_keys(values)
    return bool((keys == keys[:1]).all())


class PatternCSR(SparseFormat):
    """CSR with the one value every entry holds: ``indptr``, ``indices``, ``value`` (1,).  No parameters."""

    name = "csr_pattern"
    summary = "As csr when every entry holds one value (a graph's adjacency): no value per entry."
    traffic = "the row pointers, each entry's column index, one read of x per entry and one write of y"
    array_fields = ("value", "indices", "indptr")
    defaults = {}
    max_values = 1
    pattern_only = True

    @classmethod
    def from_csr(cls, csr, **params):
        """Keep ``csr``'s index arrays and its one value; :class:`~cocktail.errors.FormatValuesError` when its
        entries hold more than one."""
        cls.resolve_params(params)
        if not one_value(csr.data):
            keys = bit_keys(csr.data)
            distinct = int(get_xp(keys).unique(keys).shape[0])
            error = FormatValuesError(
                f"format {cls.name!r} stores one value for every entry, and this matrix's entries hold "
                f"{distinct:,} distinct values (compared by their bits); store it as csr")
            error.distinct, error.limit = distinct, 1
            raise error
        xp = csr.xp
        value = csr.data[:1].copy() if csr.nnz else xp.zeros(1, dtype=csr.data.dtype)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, {}, value=value, indices=csr.indices,
                   indptr=csr.indptr)

    @property
    def data(self):
        """The value of every entry, CSR's ``data`` (a new array of ``nnz`` values)."""
        return self.xp.full(self.nnz, self.value[0], dtype=self.value.dtype) if self.nnz else self.value[:0].copy()

    def to_csr(self):
        """The canonical CSR: these index arrays with the value repeated for every entry."""
        return CSR(self.shape, self.dtype, self.index_dtype, self.nnz, {}, data=self.data, indices=self.indices,
                   indptr=self.indptr)

    def row_lengths(self):
        """Number of stored entries in each row."""
        return get_xp(self.indptr).diff(self.indptr)

    def row_ids(self):
        """Row index of every stored entry."""
        return row_ids(self.indptr, self.nnz)

    @property
    def stored_slots(self) -> int:
        return self.nnz

    def spmv_bytes(self, dtype=None) -> int:
        """CSR's model less its values: ``(m+1)*idx`` + ``nnz*idx`` + one value + ``nnz*val`` (x) + ``m*val`` (y)."""
        val, idx = self._sizes(dtype)
        m = self.shape[0]
        return (m + 1) * idx + self.nnz * idx + self.stored_size(val) + self.nnz * val + m * val

    def describe(self) -> dict:
        return {"value": self.value[0].item(), **row_length_facts(self.row_lengths(), self.nnz)}

FORMAT = PatternCSR

