"""CSR-pattern: CSR of a matrix whose entries all hold one value, stored once.

A graph's adjacency matrix (every entry 1), an incidence matrix, or any matrix whose stored
entries share one value needs no value per entry: the product is that value times a sum of
gathered ``x``.  Against CSR it drops ``nnz`` values from every product (float64 with int32
indices: 12 bytes an entry down to 4, 2 with ``short_columns``).  Layout, for an ``m x n`` matrix with
``nnz`` entries:

* ``indptr`` (m + 1,), ``indices`` (nnz,), index dtype: CSR's, canonical; with ``short_columns``
  ``indices`` are uint16 offsets from ``column_base`` (one column per chunk of 256 entries:
  :mod:`.csr_family`).
* ``value`` (1,), value dtype: the value every entry holds (0 when there are none).

Lossless: values are equal by their bits (``-0.0`` is not ``0.0``, a NaN keeps its payload),
so the round trip to CSR is exact; a matrix holding two values is refused
(:class:`~cocktail.errors.FormatValuesError`).  ``format="auto"`` stores a plan's CSR parts
this way by itself when every entry holds one value (:mod:`cocktail.auto.planner`).
"""

from __future__ import annotations

from ..arrays import bit_keys, get_xp
from ..errors import FormatValuesError
from .csr import row_length_facts
from .csr_family import CSRFamily


def one_value(values) -> bool:
    """Whether every value of the 1-D array ``values`` has the bits of the first (True for none)."""
    if not values.shape[0]:
        return True
    keys = bit_keys(values)
    return bool((keys == keys[:1]).all())


class PatternCSR(CSRFamily):
    """CSR with the one value every entry holds: ``indptr``, ``indices`` (short, with ``column_base``, where
    ``short_columns`` says: :mod:`.csr_family`), ``value`` (1,)."""

    name = "csr_pattern"
    order = 20
    family = "csr"
    summary = "As csr when every entry holds one value (a graph's adjacency): no value per entry."
    traffic = "the row pointers, each entry's column index, one read of x per entry and one write of y"
    array_fields = ("value", "indices", "column_base", "indptr")
    max_values = 1
    pattern_only = True

    @classmethod
    def from_csr(cls, csr, **params):
        """Keep ``csr``'s index arrays (short columns where ``short_columns`` says) and its one value;
        :class:`~cocktail.errors.FormatValuesError` when its entries hold more than one."""
        params = cls.resolve_params(params)
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
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, value=value, **cls.index_arrays(csr, params))

    @property
    def data(self):
        """The value of every entry, CSR's ``data`` (a new array of ``nnz`` values)."""
        return self.xp.full(self.nnz, self.value[0], dtype=self.value.dtype) if self.nnz else self.value[:0].copy()

    def spmv_bytes(self, dtype=None) -> int:
        """CSR's model less its values: the row pointers and column indices (:meth:`~.CSRFamily.index_bytes`), one
        value, ``nnz*val`` (x) and ``m*val`` (y)."""
        val, idx = self._sizes(dtype)
        return self.index_bytes(idx) + self.stored_size(val) + self.nnz * val + self.shape[0] * val

    def describe(self) -> dict:
        return {"value": self.value[0].item(), **row_length_facts(self.row_lengths(), self.nnz), **self.column_facts()}


FORMAT = PatternCSR
