"""The base class every storage format derives from.

A format object is immutable: it holds its arrays (NumPy or CuPy, never mixed), the
matrix shape, the value and index dtypes, the number of stored entries of the
canonical CSR it was built from, and the parameters it was built with.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..arrays import get_xp, to_numpy
from ..precision import dtype_named, is_value_dtype


def array_bytes(arr, val: int) -> int:
    """Bytes of ``arr``, a value array (float or complex) counted at ``val`` bytes an entry."""
    return int(arr.size) * val if is_value_dtype(arr.dtype) else int(arr.nbytes)


class SparseFormat:
    """Common behaviour of the storage formats.

    Subclasses name their arrays in ``array_fields`` and their sub-formats (HYB's ELL
    and COO parts, PKT's COO remainder) in ``part_fields``; they implement
    ``from_csr``, ``to_csr``, ``stored_slots`` and ``spmv_bytes``, and override ``x_reads``
    and ``y_bytes`` where the DRAM traffic model's defaults do not fit their kernels.
    """

    name: ClassVar[str] = ""
    #: Place in the registry's order (general formats first, then the padded ones); colour of its lines in plots, and
    #: the format whose hue and legend group it shares there ("": its own).
    order: ClassVar[int] = 1000
    colour: ClassVar[str] = ""
    family: ClassVar[str] = ""
    array_fields: ClassVar[tuple[str, ...]] = ()
    part_fields: ClassVar[tuple[str, ...]] = ()
    #: Arrays kept for ``to_csr`` alone (explicit zeros, sizes the kernels recompute): no
    #: product reads them, so the DRAM traffic model leaves them out.
    unread_fields: ClassVar[tuple[str, ...]] = ()
    defaults: ClassVar[dict] = {}
    #: False for a format built from a plan rather than on its own (the Cocktail).
    standalone: ClassVar[bool] = True
    #: The most distinct values the format can store (its padding zero included); None: any number.
    max_values: ClassVar[int | None] = None
    #: Stores a one-byte code per entry into its ``table`` of distinct values (dia_vi, csr_vi).
    coded_values: ClassVar[bool] = False
    #: Stores no value per entry: every entry holds the one value of its ``value`` array (csr_pattern).
    pattern_only: ClassVar[bool] = False
    #: The format that stores this one's matrices with no value per entry when every entry holds one value
    #: (lossless, with the same kernels): the planner's pattern cut.  None: there is none.
    pattern_format: ClassVar[str | None] = None
    #: The format that stores this one's matrices with a one-byte code per entry into a table of their distinct
    #: values when they fit (lossless, with the same kernels): the planner's coded cut.  None: there is none.
    coded_format: ClassVar[str | None] = None
    # --- the format's words, for ``cocktail formats`` and ``explain()`` (plain text, no markup) ---
    #: When the format wins, in one sentence.
    summary: ClassVar[str] = ""
    #: The bytes one product moves (the ``spmv_bytes`` model), in words.
    traffic: ClassVar[str] = ""
    #: What a parameter of this format means, where it differs from the shared meaning (:mod:`.about`).
    parameter_words: ClassVar[dict] = {}
    #: The word shown for a parameter of this format left unset, where it differs from the shared one.
    unset_words: ClassVar[dict] = {}
    #: Parameters the one-line-per-format table leaves out (its "auto (rule)" stands for them).
    table_hidden: ClassVar[tuple[str, ...]] = ()

    def __init__(self, shape, dtype, index_dtype, nnz, params, **fields):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = dtype_named(dtype)  # never None read as float64
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

    def _replace(self, fn, dtype=None):
        """The same format with ``fn`` applied to every array (and products in ``dtype``, default its own)."""
        fields = {k: fn(getattr(self, k)) for k in self.array_fields}
        fields.update({k: getattr(self, k)._replace(fn, dtype) for k in self.part_fields})
        return type(self)(self.shape, self.dtype if dtype is None else dtype, self.index_dtype, self.nnz,
                          self.params, **fields)

    def widened(self, dtype):
        """The same matrix with its values, and its products, in ``dtype``: exact when ``dtype`` is at least as
        wide as :attr:`value_dtype` (the reference product of a half or narrower-stored matrix runs in its
        arithmetic dtype this way)."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype and dtype == self.value_dtype:
            return self
        return self._replace(lambda a: a.astype(dtype) if is_value_dtype(a.dtype) else a, dtype)

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

    def dram_bytes(self, l2_bytes: int | None = None, dtype=None, k: int = 1) -> int:
        """Bytes one product (beta = 0) moves between DRAM and the chip: the DRAM traffic model.

        Every array a product reads is read once (``unread_fields`` left out; value arrays
        counted at ``dtype``'s item size, default the format's own).  ``x`` is read once
        (``n`` values) when the rows of it a product works on at once (``x_window()``: all ``n``
        unless the format knows its reach, as the diagonal formats do) fit in ``l2_bytes`` of L2
        (None: assume they fit); otherwise the model counts one read per ``x_reads()``, at least
        ``n`` values, a rough upper bound.
        ``y`` moves as ``y_bytes`` says: written once, plus a read and a write of the rows a
        later kernel adds into.  beta != 0 would read ``y`` once more.  See
        docs/performance-notes.md, "DRAM traffic model".

        ``k``: a block product ``A @ X`` with ``k`` columns, the matrix read once for all of them
        (an SpMM kernel): ``X`` (``n x k``) and ``Y`` (``m x k``) move as ``x`` and ``y`` do, ``k``
        values per row, and ``X`` counts as fitting when its window's rows, all ``k`` columns of
        them, fit in ``l2_bytes``.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"dram_bytes: k must be a positive int (columns of X), got {k!r}")
        val, _ = self._sizes(dtype)
        x = self.shape[1] * val * k
        if l2_bytes is not None and self.x_window() * val * k > l2_bytes:
            x = max(x, self.x_reads() * val * k)
        return self._stream_bytes(val) + x + self.y_bytes(val) * k

    def _stream_bytes(self, val: int) -> int:
        """Bytes of the arrays a product reads, each read once, values at ``val`` bytes each."""
        own = sum(array_bytes(getattr(self, k), self.stored_size(val)) for k in self.array_fields
                  if k not in self.unread_fields)
        return own + sum(getattr(self, p)._stream_bytes(val) for p in self.part_fields)

    def x_window(self) -> int:
        """Rows of ``x`` a product reads from at once, the working set L2 must hold for ``x`` to be read
        once: all ``n`` here (any row may read any column); formats that know their reach say less."""
        return self.shape[1]

    def x_reads(self) -> int:
        """Reads of ``x`` one product makes when no cache keeps it: one per stored entry.

        Formats that multiply fill (DIA's in-matrix slots) or reuse an ``x`` segment (the
        blocked formats, PKT's staged packets) count their own, as their ``spmv_bytes`` does.
        """
        return self.nnz

    def y_bytes(self, val: int, accumulate: bool = False) -> int:
        """Bytes of ``y`` a product moves: every row written once, or, when it adds into a ``y``
        an earlier kernel wrote (``accumulate``), each row it touches read and written.

        The earlier kernel's ``y`` lines are cold by then (the streams in between went through
        L2), so the re-read comes from DRAM whatever the L2 size.
        """
        return self.shape[0] * val * (2 if accumulate else 1)

    def _sizes(self, dtype):
        val = np.dtype(self.dtype if dtype is None else dtype).itemsize
        return val, self.index_dtype.itemsize

    def stored_size(self, val: int) -> int:
        """Bytes of one stored value when ``x`` and ``y`` take ``val`` bytes an entry: ``val`` itself, or less
        for values stored narrower than the matrix dtype (``value_dtype=``; float32 under float64: half)."""
        return max(1, val * self.value_dtype.itemsize // self.dtype.itemsize)

    @property
    def value_dtype(self) -> np.dtype:
        """The dtype the values are stored in: the matrix dtype, or a narrower one (:mod:`cocktail.precision`)."""
        for key in self.array_fields:
            dt = getattr(self, key).dtype
            if is_value_dtype(dt):
                return np.dtype(dt)
        for key in self.part_fields:
            return getattr(self, key).value_dtype
        return self.dtype

    def resolved_params(self) -> dict:
        """The parameters in effect, each one left to the format (``None``) replaced by the value it
        took on this matrix where there is one (ELL's width, HYB's ell_width)."""
        return dict(self.params)

    def describe(self) -> dict:
        """Format-specific facts for ``explain()`` (e.g. ELL width, number of diagonals)."""
        return {}

    def layouts(self) -> tuple[str, ...]:
        """The layout options in effect that a kernel must read its arrays by (SELL's ``short_columns``); a
        kernel declares those it takes (``KernelSpec.layouts``).  None here."""
        return ()

    def __repr__(self) -> str:
        m, n = self.shape
        return (
            f"<{self.name} {m}x{n} nnz={self.nnz} dtype={self.dtype.name} "
            f"index={self.index_dtype.name} on {'cuda' if self.xp is not np else 'cpu'}>"
        )
