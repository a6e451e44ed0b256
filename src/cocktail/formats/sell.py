"""SELL: sliced ELLPACK, SELL-C-sigma (clSpMV §4.3.2, Fig. 4) with SELL-P width padding.

Rows are optionally sorted by descending length within windows of ``sort_window`` (sigma)
rows; ``perm[p]`` is the original row of permuted row ``p``.  Permuted rows are cut into
slices of ``slice_height`` (C) rows; slice ``s`` is a small ELL block of ``slice_width[s]``
columns (its longest row rounded up to a multiple of ``width_multiple``) stored column-major
from slot ``slice_ptr[s]``: entry ``k`` of local row ``r`` is at ``slice_ptr[s] + k*C + r``.
Padding slots hold ``col = -1`` and ``data = 0``; the missing rows of the last slice are
all padding.

``short_columns`` stores each column as a 16-bit offset from its slice's lowest column
(``slice_base[s]``; padding ``0xFFFF``) where every slice's columns span at most
:data:`SHORT_SPAN`: 2 bytes an index instead of 4 or 8, the exact columns back by adding
the base.  ``True`` requires it (a ``ValueError`` names the widest slice), unset it is
taken where it fits, ``False`` (default) keeps full columns; ``format="auto"`` leaves it
unset for its SELL parts.
"""

from __future__ import annotations


import numpy as np

from ..arrays import entry_rows, stable_argsort, to_numpy
from . import _device_builds
from .padding import DEFAULT_MAX_FILL, aligned, check_fill, check_padding, slice_widths
from .base import SparseFormat
from .csr import CSR
from ._params import int_param, max_fill_param, pointer_dtype


#: The widest span of columns a slice of short columns may cover (offsets 0 .. SHORT_SPAN; 0xFFFF marks padding).
SHORT_SPAN = 0xFFFE
#: The padding marker of a short column.
SHORT_PADDING = 0xFFFF


def _slice_spans(csr, perm, nslices: int, c: int):
    """``(lo, hi)`` (int64, per slice): the lowest and highest column stored in each slice of ``c`` permuted
    rows (``perm``, None: unpermuted), ``int64 max`` and -1 for a slice holding nothing.

    From each row's first and last entry (a canonical row is sorted): O(rows) work, no sort of the entries.
    """
    xp = csr.xp
    m, nnz = csr.shape[0], csr.nnz
    big = np.iinfo(np.int64).max
    lo = xp.full(nslices * c, big, dtype=xp.int64)
    hi = xp.full(nslices * c, -1, dtype=xp.int64)
    if nnz and m:
        starts, ends = csr.indptr[:-1], csr.indptr[1:]
        has = ends > starts
        first = csr.indices[xp.minimum(starts, nnz - 1)].astype(xp.int64)
        last = csr.indices[xp.maximum(ends - 1, 0)].astype(xp.int64)
        row_lo = xp.where(has, first, big)
        row_hi = xp.where(has, last, -1)
        if perm is not None:
            row_lo, row_hi = row_lo[perm], row_hi[perm]
        lo[:m], hi[:m] = row_lo, row_hi
    return lo.reshape(nslices, c).min(axis=1), hi.reshape(nslices, c).max(axis=1)


def _permutation(xp, lengths, window: int):
    """Rows sorted by descending length within consecutive windows of ``window`` rows (stable)."""
    order = stable_argsort(-lengths)
    windows = order // window
    return order[stable_argsort(windows)]


def _scattered(csr, c: int, perm, slice_ptr, total: int, base):
    """The host's ``(col, data)``: every CSR entry scattered to its slot (slice of its permuted row, then ``k*C``
    plus the local row) over the padding (``perm`` None: unpermuted; ``base``: short columns' slice bases)."""
    xp = csr.xp
    m = csr.shape[0]
    rows = entry_rows(csr)
    k = xp.arange(csr.nnz, dtype=xp.int64) - csr.indptr[rows]
    if perm is None:
        p = rows
    else:
        where = xp.empty(m, dtype=xp.int64)
        where[perm] = xp.arange(m, dtype=xp.int64)
        p = where[rows]
    s = p // c
    slot = slice_ptr.astype(xp.int64)[s] + k * c + (p - s * c)
    if base is not None:  # 16-bit offsets from each slice's lowest column; padding SHORT_PADDING
        col = xp.full(total, SHORT_PADDING, dtype=xp.uint16)
        col[slot] = (csr.indices - base[s]).astype(xp.uint16)
    else:
        col = xp.full(total, -1, dtype=csr.index_dtype)
        col[slot] = csr.indices
    data = xp.zeros(total, dtype=csr.data.dtype)
    data[slot] = csr.data
    return col, data


class SELL(SparseFormat):
    """Sliced ELL: ``slice_ptr``, ``slice_width``, ``col``, ``data``, ``perm`` (see the module docstring)."""

    name = "sell"
    order = 90
    colour = "#daa520"
    family = "ell"
    summary = "Rows of similar length within each slice of rows, where ell would pad too much."
    traffic = ("the slice pointers, every slot of the real rows (value and column index, padding "
               "included), the row permutation, one read of x per entry and one write of y")
    array_fields = ("slice_ptr", "slice_width", "col", "slice_base", "data", "perm")
    unread_fields = ("slice_width",)  # the kernel finds a slice's width from slice_ptr
    parameter_words = {"short_columns": "stores each column as a 16-bit offset from its slice's lowest column "
                                        "where every slice spans at most 65,535 columns (True: required; "
                                        "unset: where it fits; False: full columns)"}
    unset_words = {"short_columns": "where it fits"}
    defaults = {"slice_height": 32, "sort_window": 1, "width_multiple": 1, "max_fill": DEFAULT_MAX_FILL,
                "short_columns": False}

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Slice ``csr`` into ELL blocks of ``slice_height`` rows.

        ``max_fill`` refuses layouts storing more than that many slots per entry, counting
        each slice at its longest row times ``slice_height`` (before ``width_multiple``).
        """
        params = cls.resolve_params(params)
        c = int_param("sell", "slice_height", params["slice_height"])
        sigma = int_param("sell", "sort_window", params["sort_window"])
        t = int_param("sell", "width_multiple", params["width_multiple"])
        max_fill = max_fill_param("sell", params["max_fill"])
        short = params["short_columns"]
        if not (short is True or short is False or short is None):  # 1 == True: not a choice here
            raise ValueError(f"sell: short_columns must be True, False or None (where it fits), got {short!r}")
        if sigma != 1 and sigma % c:
            raise ValueError(
                f"sell: sort_window must be 1 (no sorting) or a multiple of slice_height={c}, got {sigma}"
            )
        xp = csr.xp
        m = csr.shape[0]
        idt = csr.index_dtype
        check_padding("sell", "slice_height", c, aligned(m, c), m, "rows")  # before slices are allocated
        launch = _device_builds.csr_launcher(csr)
        nslices = -(-m // c)
        perm, lengths = None, None  # perm None: unpermuted (window 1)
        if sigma != 1 or launch is None:
            lengths = csr.row_lengths().astype(xp.int64)
        if sigma != 1:
            perm = _permutation(xp, lengths, sigma)
        spans = short is not False  # each slice's lowest and highest column, for short columns
        if launch is None:
            longest = slice_widths(lengths if perm is None else lengths[perm], c)
            lo, hi = _slice_spans(csr, perm, nslices, c) if spans else (None, None)
        else:  # one pass over the rows (cocktail.kernels.sell_build)
            longest, lo, hi = _device_builds.slices().slices(csr, c, nslices, perm, spans, launch)
        widths = -(-longest // t) * t
        if spans:
            span = xp.where(hi >= 0, hi - lo, 0)
        # every size the checks and allocations need, in one synchronisation
        facts = [0] * 5
        if nslices:
            wanted = xp.stack([longest.sum(), longest[-1], widths.sum(), widths.max()]
                              + ([span.max()] if spans else []))
            got = to_numpy(wanted) if launch is None else launch.fetch(wanted)
            facts[:int(got.shape[0])] = (int(v) for v in got)
        longest_sum, longest_last, widths_sum, widths_max, widest = facts
        slots = longest_sum * c - longest_last * (nslices * c - m) if m else 0  # padding.sliced_slots
        check_fill("sell", slots, csr, max_fill, indexed=True)
        # Judged on the slice widths, not the slots: a narrow matrix's few slots are no reason to refuse t = 4.
        check_padding("sell", "width_multiple", t, widths_sum, longest_sum, "summed slice widths")
        short_now = short is not False and widest <= SHORT_SPAN
        if short is True and not short_now:
            s = int(xp.argmax(span))
            raise ValueError(f"sell: short_columns=True needs every slice's columns within {SHORT_SPAN + 1:,}; slice "
                             f"{s} spans {widest + 1:,} (columns {int(lo[s])} to {int(hi[s])}); pass "
                             "short_columns=None to keep full columns where they do not fit")
        total = widths_sum * c
        ptr_dt = pointer_dtype(idt, total)
        slice_ptr = xp.zeros(nslices + 1, dtype=ptr_dt)
        if nslices:
            slice_ptr[1:] = xp.cumsum(widths * c, dtype=ptr_dt)
        base = xp.where(hi >= 0, lo, 0) if short_now else None  # short columns: offsets from each slice's lowest
        if launch is None or widths_max > _device_builds.slices().LONG_ROW:
            col, data = _scattered(csr, c, perm, slice_ptr, total, base)
        else:  # every slot written by one pass
            col, data = _device_builds.slices().write(csr, c, slice_ptr.astype(xp.int64, copy=False), total, perm,
                                                      base, launch)
        slice_base = xp.zeros(0, dtype=idt) if base is None else base.astype(idt)
        perm = xp.arange(m, dtype=xp.int64) if perm is None else perm
        return cls(csr.shape, csr.dtype, idt, csr.nnz, params, slice_ptr=slice_ptr,
                   slice_width=widths.astype(pointer_dtype(idt, widths_max if nslices else 0)),
                   col=col, slice_base=slice_base, data=data, perm=perm.astype(idt))

    @property
    def short(self) -> bool:
        """Whether the columns are stored as 16-bit offsets from their slice's ``slice_base``."""
        return self.col.dtype == np.uint16

    def layouts(self) -> tuple[str, ...]:
        """``("short_columns",)`` when the columns are short: a kernel must read them so."""
        return ("short_columns",) if self.short else ()

    def columns(self):
        """Every slot's column (int64; -1 for padding), short columns decoded: the one place they are."""
        xp = self.xp
        if not self.short:
            return self.col.astype(xp.int64)
        ptr = self.slice_ptr.astype(xp.int64)
        slot_slice = xp.searchsorted(ptr[1:], xp.arange(self.col.shape[0], dtype=xp.int64), side="right")
        wide = self.col.astype(xp.int64)
        return xp.where(wide == SHORT_PADDING, -1, wide + self.slice_base.astype(xp.int64)[slot_slice])

    def resolved_params(self) -> dict:
        """The parameters, ``short_columns`` as built (None resolved to whether they are short)."""
        return {**self.params, "short_columns": self.short}

    @property
    def slice_height(self) -> int:
        """Rows per slice (C)."""
        return int(self.params["slice_height"])

    @property
    def nslices(self) -> int:
        """Number of slices, ``ceil(rows / slice_height)``."""
        return int(self.slice_width.shape[0])

    def _slot_rows(self):
        """Permuted row ``p`` and in-row position ``k`` of every slot."""
        xp = self.xp
        c = self.slice_height
        ptr = self.slice_ptr.astype(xp.int64)
        slots = xp.arange(int(ptr[-1]), dtype=xp.int64)
        # (not xp.repeat: CuPy's repeat takes no array of counts)
        s = xp.searchsorted(ptr, slots, side="right") - 1
        off = slots - ptr[s]
        return s * c + off % c, off // c

    def to_csr(self) -> CSR:
        """Put every real slot back at position ``k`` of its original row."""
        xp = self.xp
        m = self.shape[0]
        p, k = self._slot_rows()
        columns = self.columns()
        real = columns >= 0
        rows = self.perm.astype(xp.int64)[p[real]]
        indptr = xp.zeros(m + 1, dtype=self.index_dtype)
        if m:
            indptr[1:] = xp.cumsum(xp.bincount(rows, minlength=m), dtype=self.index_dtype)
        pos = indptr.astype(xp.int64)[rows] + k[real]
        indices = xp.empty(self.nnz, dtype=self.index_dtype)
        data = xp.empty(self.nnz, dtype=self.value_dtype)
        indices[pos] = columns[real].astype(self.index_dtype)
        data[pos] = self.data[real]
        return CSR(self.shape, self.dtype, self.index_dtype, self.nnz, {},
                   data=data, indices=indices, indptr=indptr)

    @property
    def stored_slots(self) -> int:
        return int(self.slice_ptr[-1])

    def _real_row_slots(self) -> int:
        """Slots of the real rows (the last slice's missing rows left out)."""
        if not self.nslices:
            return 0
        c = self.slice_height
        missing = self.nslices * c - self.shape[0]
        return self.stored_slots - missing * int(self.slice_width[-1])

    def spmv_bytes(self, dtype=None) -> int:
        """``(nslices+1)*ptr`` (slice_ptr) ``+ slots*(col+val)`` (slots of the real rows, padding
        included; ``col`` 2 bytes for short columns, plus their ``slice_base``) ``+ rows*idx`` (perm)
        ``+ nnz*val`` (x) ``+ rows*val`` (y)."""
        val, idx = self._sizes(dtype)
        m = self.shape[0]
        ptr = (self.nslices + 1) * self.slice_ptr.dtype.itemsize + int(self.slice_base.nbytes)
        slot = self.col.dtype.itemsize + self.stored_size(val)
        return ptr + self._real_row_slots() * slot + m * idx + self.nnz * val + m * val

    def _stream_bytes(self, val: int) -> int:
        unpermuted = int(self.params["sort_window"]) == 1  # then the kernel never reads perm
        return super()._stream_bytes(val) - (int(self.perm.nbytes) if unpermuted else 0)

    def describe(self) -> dict:
        n = self.nslices
        return {
            "slices": n,
            "slice height": self.slice_height,
            "slice width min": int(self.slice_width.min()) if n else 0,
            "slice width max": int(self.slice_width.max()) if n else 0,
            "sorting window": int(self.params["sort_window"]),
            "short columns": "yes (16-bit offsets from each slice's base)" if self.short else "no",
        }


FORMAT = SELL
