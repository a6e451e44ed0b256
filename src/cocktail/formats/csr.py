"""CSR: compressed sparse rows, the canonical form every other format is built from.

A ``CSR`` object is always canonical: column indices sorted within each row,
duplicates summed, explicit zeros kept.
"""

from __future__ import annotations

import numpy as np

from .. import _memory, precision, validate
from ..arrays import get_xp, pointers_from_ids, row_ids, scatter_add, stable_argsort
from . import _device_builds
from .base import SparseFormat


def _sorted_unique(rows, cols, ncols: int):
    """Order of entries sorted by (row, col), and a mask marking the first of each (row, col)."""
    xp = get_xp(rows)
    order = stable_argsort(cols)
    order = order[stable_argsort(rows[order])]
    r, c = rows[order], cols[order]
    first = xp.ones(r.shape[0], dtype=bool)
    if r.shape[0] > 1:
        first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    return order, first


def _rising_within_rows(indices, indptr) -> bool:
    """Whether the column indices rise strictly within every row (sorted, no duplicates): the input is canonical.

    Needs one bool per entry and O(min(rows, entries)) indices, where sorting needs several int64
    arrays per entry: it is what lets a matrix of more than 2**31 entries be taken on a GPU that
    holds it a few times over.  No boolean-mask indexing (CuPy's refuses more than 2**31 elements).
    """
    xp = get_xp(indices)
    nnz = indices.shape[0]
    if nnz < 2:
        return True
    if xp is not np:
        # One synchronisation: pair p - 1 sits at p - 1, row starts mark theirs, and pointers that start no pair
        # (0 and nnz) mark the spare last slot.
        rising = xp.empty(nnz, dtype=bool)
        xp.greater(indices[1:], indices[:-1], out=rising[:-1])
        rising[-1] = True
        inner = indptr[1:-1].astype(xp.int64)
        rising[xp.where((inner > 0) & (inner < nnz), inner - 1, nnz - 1)] = True
        return bool(rising.all())
    rising = indices[1:] > indices[:-1]  # pair (p - 1, p) for p = 1 .. nnz - 1
    rows = indptr.shape[0] - 1
    if nnz - 1 <= rows:
        # Few entries: p starts a row when some row pointer equals it.
        p = xp.arange(1, nnz, dtype=xp.int64)
        rising |= indptr[xp.searchsorted(indptr, p)] == p
    else:
        # Few rows: the pointers strictly inside (0, nnz) are one slice of the sorted indptr.
        lo = int(xp.searchsorted(indptr, 0, side="right"))
        hi = int(xp.searchsorted(indptr, nnz, side="left"))
        rising[indptr[lo:hi] - 1] = True  # a row may start below where the previous one ended
    return bool(rising.all())


def row_length_facts(lengths, nnz: int) -> dict:
    """``describe()``'s facts of a matrix with these row lengths and ``nnz`` entries: the shortest, mean and longest."""
    m = int(lengths.shape[0])
    if not m:
        return {"rows": 0}
    return {"row length min": int(lengths.min()), "row length mean": round(float(nnz) / m, 2),
            "row length max": int(lengths.max())}


def converted(data, dtype, what: str, remedy: str):
    """``data`` converted to ``dtype``, each value rounded once to nearest; a finite value past ``dtype``'s range
    (it would become infinite) is a ``ValueError`` naming it, ``what`` converted and the ``remedy``."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = precision.rounded(data, dtype)
    if data.dtype.itemsize <= out.dtype.itemsize and data.dtype.kind == out.dtype.kind:
        return out  # widening: nothing overflows
    xp = get_xp(data)
    lost = xp.isfinite(data) & ~xp.isfinite(out.astype(precision.compute_dtype(dtype)))
    if bool(lost.any()):
        j = int(xp.flatnonzero(lost)[0])
        name = np.dtype(dtype).name
        raise ValueError(f"{what}: value {data[j].item()!r} (entry {j}) is past the largest {name} and would be "
                         f"stored as infinite; {remedy}")
    return out


class CSR(SparseFormat):
    """Compressed sparse row storage: ``data``, ``indices``, ``indptr`` (Bell & Garland §3.4)."""

    name = "csr"
    order = 10
    colour = "#2ca02c"
    summary = "The safe default: any matrix, best when row lengths vary with no pattern to exploit."
    traffic = ("the row pointers, each entry's value and column index, one read of x per entry and "
               "one write of y")
    array_fields = ("data", "indices", "indptr")
    defaults = {}
    pattern_format = "csr_pattern"
    coded_format = "csr_vi"

    @classmethod
    def from_arrays(cls, data, indices, indptr, shape, *, index_dtype=None, dtype=None, check=True, owned=False):
        """Validate raw CSR arrays and return their canonical copy.

        The caller's arrays are never written.  ``index_dtype`` forces int32 or int64
        (int32 by default when every index and the entry count fit); ``dtype`` converts
        the values.  ``owned``: the arrays are private copies (just uploaded from the host), which
        the CSR may keep instead of copying them again.
        """
        data_owned = owned  # whether `data` is already a copy of the caller's array
        if dtype is not None:
            dt = validate.value_dtype(dtype, "dtype")
            if hasattr(data, "astype"):
                data, data_owned = converted(data, dt, f"dtype={dt.name}", "keep a wider dtype or scale the matrix"), True
        if check and getattr(data, "ndim", None) == 1 and hasattr(data, "dtype"):
            m, n = validate.shape2d(shape)
            size = validate.index_itemsize(max(m, n, int(data.shape[0])), index_dtype)
            cls.require_memory((m, n), int(data.shape[0]), data.dtype.itemsize, size, _memory.device_of(data))
        facts = None
        if check:
            shape = validate.csr_layout(data, indices, indptr, shape)
            facts = _device_builds.csr_facts(indptr, indices, int(data.shape[0]), shape[1])
            if facts is None or not (facts.pointers_hold and facts.indices_hold):
                validate.csr_values(data, indices, indptr, shape)  # names what is wrong
        m, n = shape
        idt = validate.choose_index_dtype(max(m, n, int(data.shape[0])), index_dtype)
        if facts.rising if facts is not None else _rising_within_rows(indices, indptr):
            return cls((m, n), data.dtype, idt, data.shape[0], {}, data=data if data_owned else data.copy(),
                       indices=indices.astype(idt, copy=not owned), indptr=indptr.astype(idt, copy=not owned))
        return cls.from_triplets(row_ids(indptr, data.shape[0]), indices, data, (m, n), idt)

    @classmethod
    def from_triplets(cls, rows, cols, vals, shape, index_dtype, dtype=None):
        """Canonical CSR from entries in any order; duplicates are summed, zeros kept.  ``dtype``: the matrix dtype
        when the values are stored narrower (default theirs)."""
        xp = get_xp(rows, cols, vals)
        m, n = shape
        idt = np.dtype(index_dtype)
        cls.require_memory(shape, int(vals.shape[0]), vals.dtype.itemsize, idt.itemsize, _memory.device_of(vals))
        rows = rows.astype(xp.int64, copy=False)
        cols = cols.astype(xp.int64, copy=False)
        order, first = _sorted_unique(rows, cols, n)
        if bool(first.all()):
            data = vals[order].copy()
            keep_rows, keep_cols = rows[order], cols[order]
        else:
            seg = xp.cumsum(first.astype(xp.int64)) - 1
            nuniq = int(seg[-1]) + 1
            data = xp.zeros(nuniq, dtype=vals.dtype)
            scatter_add(data, seg, vals[order])
            keep_rows, keep_cols = rows[order][first], cols[order][first]
        indptr = pointers_from_ids(keep_rows, m, idt)
        return cls((m, n), data.dtype if dtype is None else dtype, idt, data.shape[0], {}, data=data,
                   indices=keep_cols.astype(idt), indptr=indptr)

    @staticmethod
    def require_memory(shape, nnz: int, value_size: int, index_size: int, device: str) -> None:
        """Refuse, with :class:`~cocktail.errors.DeviceMemoryError` and before allocating, a CSR that
        cannot fit in ``device``'s free memory: its ``rows + 1`` row pointers and ``nnz`` entries.

        The row pointers make a CSR O(rows) whatever its entry count (a 3e9 x 3e9 matrix with three
        entries needs 24 GB of int64 pointers); a product of it needs O(rows) for ``y`` anyway.
        """
        pointers, entries = _memory.csr_bytes(shape[0], nnz, value_size, index_size)
        _memory.require(f"a {_memory.shape_text(shape)} CSR matrix with {int(nnz):,} entries",
                        [("its row pointers", pointers), ("its entries", entries)], device)

    @classmethod
    def from_csr(cls, csr, **params):
        """CSR has no parameters: the canonical CSR is returned as it is."""
        cls.resolve_params(params)
        return csr

    def to_csr(self):
        """Return ``self``: a CSR object is already canonical."""
        return self

    def with_values(self, data):
        """This matrix's pattern holding ``data`` (one value per stored entry) in place of its values: canonical as
        it is, its index arrays shared (a ``SparseMatrix`` built from it copies them)."""
        return CSR(self.shape, data.dtype, self.index_dtype, self.nnz, {}, data=data, indices=self.indices,
                   indptr=self.indptr)

    def transposed(self, conjugate: bool = False):
        """The canonical CSR of this matrix's transpose (its conjugate transpose with ``conjugate``), on the same
        device: the entries re-sorted by column.  A new matrix; this one is untouched."""
        xp = get_xp(self.data)
        vals = xp.conj(self.data) if conjugate and self.dtype.kind == "c" else self.data
        m, n = self.shape
        return CSR.from_triplets(self.indices, self.row_ids(), vals, (n, m), self.index_dtype, self.dtype)

    def with_value_dtype(self, value_dtype) -> "CSR":
        """This matrix with its values stored in ``value_dtype`` (:func:`cocktail.precision.stored_dtype`: a dtype
        narrower than the matrix's, or ``None`` for its own), each rounded once to nearest.  Products keep the
        matrix dtype.  A finite value past the storage's range is a ``ValueError`` that names it (it would
        become infinite)."""
        st = precision.stored_dtype(self.dtype, value_dtype)
        if st == self.value_dtype:
            return self
        data = converted(self.data, st, f"value_dtype={st.name}", "keep value_dtype=None or scale the matrix")
        return CSR(self.shape, self.dtype, self.index_dtype, self.nnz, {}, data=data, indices=self.indices,
                   indptr=self.indptr)

    def row_lengths(self):
        """Number of stored entries in each row."""
        return get_xp(self.indptr).diff(self.indptr)

    def row_ids(self):
        """Row index of every stored entry."""
        return row_ids(self.indptr, self.nnz)

    def astype(self, dtype):
        """The same matrix with values converted to ``dtype``."""
        dt = validate.value_dtype(dtype, "dtype")
        return CSR(self.shape, dt, self.index_dtype, self.nnz, {}, data=self.data.astype(dt),
                   indices=self.indices, indptr=self.indptr)

    @property
    def stored_slots(self) -> int:
        return self.nnz

    def spmv_bytes(self, dtype=None) -> int:
        val, idx = self._sizes(dtype)
        m = self.shape[0]
        return (m + 1) * idx + self.nnz * (idx + self.stored_size(val)) + self.nnz * val + m * val

    def describe(self) -> dict:
        return row_length_facts(self.row_lengths(), self.nnz)

    def to_scipy(self):
        """A ``scipy.sparse.csr_array`` on the host holding a copy of this matrix: in its dtype, values stored
        narrower widened back, and a half matrix in float32 (SciPy has no half dtype)."""
        import scipy.sparse as sp

        from ..arrays import to_numpy

        data = to_numpy(self.data).astype(precision.compute_dtype(self.dtype))  # a copy
        return sp.csr_array((data, to_numpy(self.indices).copy(), to_numpy(self.indptr).copy()), shape=self.shape)

FORMAT = CSR
