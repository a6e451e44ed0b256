"""COO: coordinate storage sorted by row (Bell & Garland §3.3)."""

from __future__ import annotations

from ..arrays import entry_rows
from .base import SparseFormat
from .csr import CSR


class COO(SparseFormat):
    """Row-sorted coordinate storage: ``row``, ``col``, ``data`` (one triple per stored entry)."""

    name = "coo"
    order = 40
    colour = "#9e9d24"
    summary = "Very uneven rows (a few huge ones): the work is split evenly by entry, not by row."
    traffic = "each entry's value, row and column index, one read of x per entry and one write of y"
    array_fields = ("row", "col", "data")
    defaults = {}

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Expand the row pointers of ``csr`` into explicit row indices."""
        params = cls.resolve_params(params)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                   row=entry_rows(csr).astype(csr.index_dtype), col=csr.indices.copy(), data=csr.data.copy())

    @classmethod
    def from_entries(cls, row, col, data, shape, index_dtype, nnz=None, dtype=None):
        """A COO part holding the given row-sorted entries (used by HYB and PKT remainders); ``dtype``: the matrix
        dtype when the values are stored narrower (default theirs)."""
        n = row.shape[0] if nnz is None else nnz
        return cls(shape, data.dtype if dtype is None else dtype, index_dtype, n, {},
                   row=row.astype(index_dtype), col=col.astype(index_dtype), data=data)

    def to_csr(self) -> CSR:
        """Rebuild the canonical CSR from the triples."""
        return CSR.from_triplets(self.row, self.col, self.data, self.shape, self.index_dtype, self.dtype)

    @property
    def stored_slots(self) -> int:
        return int(self.data.shape[0])

    def spmv_bytes(self, dtype=None) -> int:
        val, idx = self._sizes(dtype)
        k = self.stored_slots
        return k * (2 * idx + self.stored_size(val)) + k * val + self.shape[0] * val

    def touched_rows(self) -> int:
        """Number of distinct rows holding an entry (``row`` is sorted)."""
        k = int(self.row.shape[0])
        return 1 + int((self.row[1:] != self.row[:-1]).sum()) if k else 0

    def y_bytes(self, val: int, accumulate: bool = False) -> int:
        """Every row written once; adding into ``y`` (HYB's or PKT's remainder, a later Cocktail
        part), only the rows holding an entry are read and written.

        Alone, the COO kernels first zero ``y`` in a pass of their own and then add into it;
        the model counts that as the one write, like cuSPARSE's COO algorithms.
        """
        if accumulate:
            return 2 * self.touched_rows() * val
        return super().y_bytes(val)

FORMAT = COO
