"""The CSR formats beside CSR (csr_pattern, csr_vi): CSR's index arrays, values stored their own way, and
optionally short columns, 16-bit column offsets from the lowest column of each chunk of entries.

The entries of a CSR-family matrix (csr_pattern, csr_vi), in their stored order, are cut into chunks of
:data:`CHUNK` consecutive entries, whatever rows they belong to; chunk ``c`` keeps its lowest column in
``column_base[c]`` and each entry ``j`` its column as the uint16 offset ``indices[j]``, so that its column
is ``column_base[j >> CHUNK_SHIFT] + indices[j]``: 2 bytes an entry in place of 4 or 8, exact.  A kernel
finds an entry's chunk by a shift, whatever rows or pieces of rows it takes (csr_stream's items are cut at
binding, not here).  It fits where every chunk's columns span at most :data:`SHORT_SPAN` + 1: a banded
or well-ordered matrix, or any matrix of at most 65,536 columns.
"""

from __future__ import annotations

import numpy as np

from ..arrays import get_xp
from .base import SparseFormat
from .csr import CSR

#: Entries of a chunk, as a shift: 256 entries share one base column (4 or 8 bytes: 1/64 or 1/32 byte an entry).
CHUNK_SHIFT = 8
CHUNK = 1 << CHUNK_SHIFT
#: The widest span of columns a chunk may cover: offsets 0 .. SHORT_SPAN.
SHORT_SPAN = 0xFFFF

#: The words of the ``short_columns`` parameter of the formats that take it.
PARAMETER_WORDS = {"short_columns": "stores each column as a 16-bit offset from the lowest column of its chunk of "
                                    f"{CHUNK} entries where every chunk spans at most {SHORT_SPAN + 1:,} columns "
                                    "(csr_stream alone reads them; True: required; unset: where it fits; False: "
                                    "full columns)"}
UNSET_WORDS = {"short_columns": "where it fits"}


def check_choice(name: str, choice) -> None:
    """``ValueError`` unless ``choice`` is True, False or None (``1`` is not a choice here)."""
    if not (choice is True or choice is False or choice is None):
        raise ValueError(f"{name}: short_columns must be True, False or None (where it fits), got {choice!r}")


def short_columns(name: str, indices, choice, index_dtype):
    """``(indices, column_base)``: the column ``indices`` of a CSR-family matrix as 16-bit offsets (uint16) from
    each chunk's lowest column, or themselves and an empty ``column_base`` where ``choice`` is False, or None
    and some chunk spans more than ``SHORT_SPAN + 1`` columns or there are no entries (``True`` then is a
    ``ValueError`` naming the widest chunk)."""
    check_choice(name, choice)
    xp = get_xp(indices)
    none = xp.zeros(0, dtype=index_dtype)
    nnz = int(indices.shape[0])
    if choice is False or (choice is None and nnz == 0):
        return indices, none
    chunks = -(-nnz // CHUNK)
    # the last chunk's missing entries repeat its first column: neither its lowest nor its highest
    padded = xp.empty(chunks * CHUNK, dtype=xp.int64)
    padded[:nnz] = indices
    if chunks * CHUNK > nnz:
        padded[nnz:] = padded[(chunks - 1) * CHUNK]
    padded = padded.reshape(chunks, CHUNK)
    lo = padded.min(1)
    span = padded.max(1) - lo
    if chunks and int(span.max()) > SHORT_SPAN:
        if choice is True:
            c = int(xp.argmax(span))
            raise ValueError(f"{name}: short_columns=True needs every chunk of {CHUNK} entries within "
                             f"{SHORT_SPAN + 1:,} columns; chunk {c} (entries {c * CHUNK} to "
                             f"{min(nnz, (c + 1) * CHUNK) - 1}) spans {int(span[c]) + 1:,} (columns {int(lo[c])} to "
                             f"{int(lo[c] + span[c])}); pass short_columns=None to keep full columns where they do "
                             "not fit")
        return indices, none
    padded -= lo[:, None]  # in place: the offsets, one int64 array in all
    return padded.reshape(-1)[:nnz].astype(xp.uint16), lo.astype(index_dtype)


def is_short(indices) -> bool:
    """Whether ``indices`` are short columns (16-bit offsets)."""
    return indices.dtype == np.uint16


def columns(indices, column_base, index_dtype):
    """Every entry's column in ``index_dtype``: ``indices`` themselves, or short ones decoded (the one place
    they are)."""
    if not is_short(indices):
        return indices
    xp = get_xp(indices)
    chunk = xp.arange(int(indices.shape[0]), dtype=xp.int64) >> CHUNK_SHIFT
    return (column_base.astype(xp.int64)[chunk] + indices.astype(xp.int64)).astype(index_dtype)


class CSRFamily(SparseFormat):
    """What csr_pattern and csr_vi share: CSR's ``indptr`` and ``indices`` (short, with ``column_base``, where
    ``short_columns`` says), in CSR's entry order; subclasses store the values and say how to decode them
    (:attr:`data`)."""

    parameter_words = PARAMETER_WORDS
    unset_words = UNSET_WORDS
    defaults = {"short_columns": False}

    @classmethod
    def index_arrays(cls, csr, params) -> dict:
        """The ``indices``, ``column_base`` and ``indptr`` fields of ``csr`` stored with ``params``' short_columns."""
        indices, base = short_columns(cls.name, csr.indices, params["short_columns"], csr.index_dtype)
        return {"indices": indices, "column_base": base, "indptr": csr.indptr}

    @property
    def short(self) -> bool:
        """Whether the columns are stored as 16-bit offsets from their chunk's ``column_base``."""
        return is_short(self.indices)

    def layouts(self) -> tuple[str, ...]:
        """``("short_columns",)`` when the columns are short: a kernel must read them so."""
        return ("short_columns",) if self.short else ()

    def columns(self):
        """Every entry's column (CSR's ``indices``), short columns decoded."""
        return columns(self.indices, self.column_base, self.index_dtype)

    def resolved_params(self) -> dict:
        """The parameters, ``short_columns`` as built (None resolved to whether they are short)."""
        return {**self.params, "short_columns": self.short}

    def to_csr(self):
        """The canonical CSR: these row pointers, the columns decoded and every entry's value (:attr:`data`)."""
        return CSR(self.shape, self.dtype, self.index_dtype, self.nnz, {}, data=self.data, indices=self.columns(),
                   indptr=self.indptr)

    # CSR's own: they read indptr and nnz alone, which these formats keep as CSR does
    row_lengths = CSR.row_lengths
    row_ids = CSR.row_ids

    @property
    def stored_slots(self) -> int:
        return self.nnz

    def column_facts(self) -> dict:
        """``describe()``'s fact of the column layout."""
        return {"short columns": f"yes (16-bit offsets from a base column per chunk of {CHUNK} entries)"
                if self.short else "no"}

    def index_bytes(self, idx: int) -> int:
        """Bytes of the row pointers and column indices a product reads (``idx`` an index): ``(m+1)*idx`` and
        ``nnz*idx``, or with short columns ``nnz*2`` and a base per chunk."""
        pointers = (self.shape[0] + 1) * idx
        if not self.short:
            return pointers + self.nnz * idx
        return pointers + self.nnz * self.indices.dtype.itemsize + int(self.column_base.shape[0]) * idx
