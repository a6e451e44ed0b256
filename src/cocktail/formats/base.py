"""The base class every storage format derives from.

A format object is immutable: it holds its arrays (NumPy or CuPy, never mixed), the
matrix shape, the value and index dtypes, the number of stored entries of the
canonical CSR it was built from, and the parameters it was built with.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .._xp import get_xp, to_numpy


class SparseFormat:
    """Common behaviour of the storage formats.

    Subclasses name their arrays in ``array_fields`` and their sub-formats (HYB's ELL
    and COO parts, PKT's COO remainder) in ``part_fields``; they implement
    ``from_csr``, ``to_csr``, ``stored_slots`` and ``spmv_bytes``.
    """

    name: ClassVar[str] = ""
    array_fields: ClassVar[tuple[str, ...]] = ()
    part_fields: ClassVar[tuple[str, ...]] = ()
    defaults: ClassVar[dict] = {}
    #: False for a format built from a plan rather than on its own (the Cocktail).
    standalone: ClassVar[bool] = True
    #: The most distinct values the format can store (its padding zero included); None: any number.
    max_values: ClassVar[int | None] = None

    def __init__(self, shape, dtype, index_dtype, nnz, params, **fields):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.index_dtype = np.dtype(index_dtype)
        self.nnz = int(nnz)
        self.params = dict(params)
        missing = set(self.array_fields + self.part_fields) - set(fields)
        if missing:
            raise TypeError(f"{self.name}: missing fields {sorted(missing)}")
        for key in self.array_fields:
            arr = fields[key]
            if get_xp(arr) is np and arr.flags.writeable:
                arr = arr.view()
                arr.flags.writeable = False
            setattr(self, key, arr)
        for key in self.part_fields:
            setattr(self, key, fields[key])

    # --- construction -------------------------------------------------------------
    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        """Merge ``given`` over the format's defaults; an unknown name is a ``TypeError``."""
        unknown = set(given) - set(cls.defaults)
        if unknown:
            known = ", ".join(sorted(cls.defaults)) or "none"
            raise TypeError(
                f"format {cls.name!r} has no parameter {', '.join(map(repr, sorted(unknown)))}; "
                f"its parameters are: {known}"
            )
        params = dict(cls.defaults)
        params.update(given)
        return params

    @classmethod
    def from_csr(cls, csr, **params):  # pragma: no cover - abstract
        """Build this format from a canonical :class:`~cocktail.formats.csr.CSR`."""
        raise NotImplementedError

    def to_csr(self):  # pragma: no cover - abstract
        """Return the canonical CSR this format was built from, exactly."""
        raise NotImplementedError

    def _replace(self, fn):
        fields = {k: fn(getattr(self, k)) for k in self.array_fields}
        fields.update({k: getattr(self, k)._replace(fn) for k in self.part_fields})
        return type(self)(self.shape, self.dtype, self.index_dtype, self.nnz, self.params, **fields)

    def to_xp(self, xp):
        """The same format with every array moved to array module ``xp`` (NumPy or CuPy)."""
        if xp is np:
            return self._replace(to_numpy)
        return self._replace(lambda a: xp.asarray(a))

    # --- description --------------------------------------------------------------
    @property
    def xp(self):
        """The array module (NumPy or CuPy) holding this format's arrays."""
        for key in self.array_fields:
            return get_xp(getattr(self, key))
        for key in self.part_fields:
            return getattr(self, key).xp
        return np

    def arrays(self) -> dict:
        """Every array this format holds, by name (a part's arrays as ``part.name``)."""
        out = {k: getattr(self, k) for k in self.array_fields}
        for part in self.part_fields:
            out.update({f"{part}.{k}": v for k, v in getattr(self, part).arrays().items()})
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held by all arrays of the format."""
        return int(sum(a.nbytes for a in self.arrays().values()))

    @property
    def stored_slots(self) -> int:  # pragma: no cover - abstract
        """Value slots allocated, padding and fill included."""
        raise NotImplementedError

    @property
    def padding_ratio(self) -> float:
        """Allocated value slots per stored entry (1.0 means no padding or fill)."""
        return self.stored_slots / self.nnz if self.nnz else 1.0

    def spmv_bytes(self, dtype=None) -> int:  # pragma: no cover - abstract
        """Bytes one SpMV must move under this layout (CUSP's bytes-per-SpMV model).

        Counts every array the kernel reads (values, indices and pointers, padding
        included), one read of ``x`` per multiplied value as in Bell & Garland's
        Table 1 (no cache), and one write of ``y``.  ``dtype`` is the value dtype
        to count in (default the format's own).
        """
        raise NotImplementedError

    def _sizes(self, dtype):
        val = np.dtype(self.dtype if dtype is None else dtype).itemsize
        return val, self.index_dtype.itemsize

    def describe(self) -> dict:
        """Format-specific facts for ``explain()`` (e.g. ELL width, number of diagonals)."""
        return {}

    def __repr__(self) -> str:
        m, n = self.shape
        return (
            f"<{self.name} {m}x{n} nnz={self.nnz} dtype={self.dtype.name} "
            f"index={self.index_dtype.name} on {'cuda' if self.xp is not np else 'cpu'}>"
        )
