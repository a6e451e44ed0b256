"""SELL: sliced ELLPACK, SELL-C-sigma (clSpMV §4.3.2, Fig. 4) with SELL-P width padding.

Rows are optionally sorted by descending length within windows of ``sort_window`` (sigma)
rows; ``perm[p]`` is the original row of permuted row ``p``.  Permuted rows are cut into
slices of ``slice_height`` (C) rows; slice ``s`` is a small ELL block of ``slice_width[s]``
columns (its longest row rounded up to a multiple of ``width_multiple``) stored column-major
from slot ``slice_ptr[s]``: entry ``k`` of local row ``r`` is at ``slice_ptr[s] + k*C + r``.
Padding slots hold ``col = -1`` and ``data = 0``; the missing rows of the last slice are
all padding.
"""

from __future__ import annotations


from ..arrays import stable_argsort
from .padding import DEFAULT_MAX_FILL, aligned, check_fill, check_padding, sliced_slots, slice_widths
from .base import SparseFormat
from .csr import CSR
from ._params import int_param, max_fill_param, pointer_dtype


def _permutation(xp, lengths, window: int):
    """Rows sorted by descending length within consecutive windows of ``window`` rows (stable)."""
    m = int(lengths.shape[0])
    if window == 1:
        return xp.arange(m, dtype=xp.int64)
    order = stable_argsort(-lengths)
    windows = order // window
    return order[stable_argsort(windows)]


class SELL(SparseFormat):
    """Sliced ELL: ``slice_ptr``, ``slice_width``, ``col``, ``data``, ``perm`` (see the module docstring)."""

    name = "sell"
    summary = "Rows of similar length within each slice of rows, where ell would pad too much."
    traffic = ("the slice pointers, every slot of the real rows (value and column index, padding "
               "included), the row permutation, one read of x per entry and one write of y")
    array_fields = ("slice_ptr", "slice_width", "col", "data", "perm")
    unread_fields = ("slice_width",)  # the kernel finds a slice's width from slice_ptr
    defaults = {"slice_height": 32, "sort_window": 1, "width_multiple": 1, "max_fill": DEFAULT_MAX_FILL}

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
        if sigma != 1 and sigma % c:
            raise ValueError(
                f"sell: sort_window must be 1 (no sorting) or a multiple of slice_height={c}, got {sigma}"
            )
        xp = csr.xp
        m = csr.shape[0]
        idt = csr.index_dtype
        check_padding("sell", "slice_height", c, aligned(m, c), m, "rows")  # before slices are allocated
        lengths = csr.row_lengths().astype(xp.int64)
        perm = _permutation(xp, lengths, sigma)
        longest = slice_widths(lengths[perm], c)
        nslices = int(longest.shape[0])
        check_fill("sell", sliced_slots(longest, m, c), csr, max_fill, indexed=True)
        widths = -(-longest // t) * t
        # Judged on the slice widths, not the slots: a narrow matrix's few slots are no reason to refuse t = 4.
        check_padding("sell", "width_multiple", t, int(widths.sum()), int(longest.sum()), "summed slice widths")
        total = int(widths.sum()) * c
        ptr_dt = pointer_dtype(idt, total)
        slice_ptr = xp.zeros(nslices + 1, dtype=ptr_dt)
        if nslices:
            slice_ptr[1:] = xp.cumsum(widths * c, dtype=ptr_dt)

        # Slot of every CSR entry: slice of its permuted row, then k*C + local row.
        rows = csr.row_ids().astype(xp.int64)
        k = xp.arange(csr.nnz, dtype=xp.int64) - csr.indptr.astype(xp.int64)[rows]
        where = xp.empty(m, dtype=xp.int64)
        where[perm] = xp.arange(m, dtype=xp.int64)
        p = where[rows]
        slot = slice_ptr.astype(xp.int64)[p // c] + k * c + p % c
        col = xp.full(total, -1, dtype=idt)
        data = xp.zeros(total, dtype=csr.data.dtype)
        col[slot] = csr.indices
        data[slot] = csr.data
        return cls(csr.shape, csr.dtype, idt, csr.nnz, params, slice_ptr=slice_ptr,
                   slice_width=widths.astype(pointer_dtype(idt, int(widths.max()) if nslices else 0)),
                   col=col, data=data, perm=perm.astype(idt))

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
        real = self.col >= 0
        rows = self.perm.astype(xp.int64)[p[real]]
        indptr = xp.zeros(m + 1, dtype=self.index_dtype)
        if m:
            indptr[1:] = xp.cumsum(xp.bincount(rows, minlength=m), dtype=self.index_dtype)
        pos = indptr.astype(xp.int64)[rows] + k[real]
        indices = xp.empty(self.nnz, dtype=self.index_dtype)
        data = xp.empty(self.nnz, dtype=self.value_dtype)
        indices[pos] = self.col[real]
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
        """``(nslices+1)*ptr`` (slice_ptr) ``+ slots*(idx+val)`` (slots of the real rows, padding
        included) ``+ rows*idx`` (perm) ``+ nnz*val`` (x) ``+ rows*val`` (y)."""
        val, idx = self._sizes(dtype)
        m = self.shape[0]
        ptr = (self.nslices + 1) * self.slice_ptr.dtype.itemsize
        return ptr + self._real_row_slots() * (idx + self.stored_size(val)) + m * idx + self.nnz * val + m * val

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
        }


FORMAT = SELL
