"""SBELL: sliced blocked ELLPACK (clSpMV §4.4.2, Fig. 8).

Layout, for an ``m x n`` matrix with block shape ``r x c``, ``superrows = ceil(m/r)``,
slice height ``h`` and ``nslices = ceil(superrows/h)``; slice ``s`` holds superrows
``s*h .. s*h+h-1`` and has width ``K_s`` = the most blocks in one of its superrows:

* ``slice_ptr`` (nslices+1,), index dtype (int64 when the slot count needs it): block-slot
  offset of each slice; slice ``s`` has ``K_s*h`` slots, so
  ``K_s = (slice_ptr[s+1] - slice_ptr[s]) / h``.
* ``col`` (total_slots,), index dtype: slot ``(k, u)`` of slice ``s`` (k-th block, sorted by
  column, of local superrow ``u``) is at ``slice_ptr[s] + k*h + u`` and holds the block's
  first column ``bj*c``, or -1 for a padding slot (the superrow has fewer blocks, or it
  lies past the last superrow in a partial last slice).
* ``data`` (total_slots*r*c,), value dtype: the value at row ``(s*h+u)*r + ri``, column
  ``col[slot] + cj`` is at ``slice_ptr[s]*r*c + ((k*r + ri)*h + u)*c + cj``: within a slice,
  for each k the 1 x c unit ``ri`` of all h superrows is contiguous, then unit ``ri+1``
  (0 for fill, padding and cells outside the matrix).
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).
"""

from __future__ import annotations

from ..arrays import get_xp
from . import block_grid, padding
from ._params import int_param, pointer_dtype


def slot_coordinates(slice_ptr, slots, h: int):
    """Slice ``s``, block number ``k`` and local superrow ``u`` of each slot in ``slots``."""
    xp = get_xp(slots)
    ptr = slice_ptr.astype(xp.int64)
    s = xp.searchsorted(ptr, slots, side="right") - 1
    local = slots - ptr[s]
    return s, local // h, local % h


class SBELL(block_grid.PaddedBlocks):
    """Sliced blocked ELL: ``slice_ptr``, ``col`` and ``data``, see the module docstring.

    Parameters: ``block`` (default (1, 4)): the block shape ``(r, c)``, r and c in
    {1, 2, 3, 4, 8}; ``slice_height`` (default 32): superrows per slice; ``max_fill``
    (default ``padding.DEFAULT_MAX_FILL``, None disables) refuses matrices needing more than
    ``max_fill * nnz`` slots (``K_s * r * c`` for each existing superrow of slice s).
    """

    name = "sbell"
    order = 140
    colour = "#37474f"
    family = "bcsr"
    summary = "Small dense blocks whose count per block row varies from one slice to the next."
    traffic = ("the slice pointers, then as bell slice by slice (each slice padded to its widest "
               "block row)")
    parameter_words = {"slice_height": "block rows per slice; each slice is padded to its own longest "
                                       "block row"}
    array_fields = ("slice_ptr", "col", "data") + padding.ZERO_FIELDS
    unread_fields = padding.ZERO_FIELDS
    defaults = {"block": block_grid.DEFAULT_BLOCK, "slice_height": 32, "max_fill": padding.DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr, **params):
        """Cut the superrows into slices and pack each slice's blocks to the left.

        On a device in two passes over the CSR and no sort (:func:`~.block_grid.device_blocks`, a group per
        slice, whose scanned slots are the slice pointers), one synchronisation between them."""
        params, r, c = block_grid.validated(cls, params)
        h = int_param(cls.name, "slice_height", params["slice_height"])
        launch = block_grid.device_launcher(csr)
        if launch is not None:
            superrows = block_grid.ceil_div(csr.shape[0], r)
            padding.check_padding(cls.name, "slice_height", h, padding.aligned(superrows, h), superrows, "superrows")
            counted = block_grid.device_blocks(csr, r, c, h, launch)
            nslices, total = counted.groups, counted.slots
            # padding.sliced_slots: the last slice's missing superrows hold no slots
            stored = total - (counted.last // h) * (nslices * h - superrows) if nslices else 0
            padding.check_fill(cls.name, stored * r * c, csr, params["max_fill"])
            # block k of local superrow u of slice s at ptr[s] + k * h + u; its unit ri at
            # ptr[s] * r * c + ((k * r + ri) * h + u) * c
            col, data = block_grid.device_write(csr, r, c, counted, launch, slots=nslices * h, kstep=r * h, rstep=h,
                                                pmul=r)
            return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                       slice_ptr=counted.ptr.astype(pointer_dtype(csr.index_dtype, total), copy=False), col=col,
                       data=data, **padding.explicit_zeros(csr, count=counted.zeros))
        blk = block_grid.extract(csr, r, c)
        xp = csr.xp
        padding.check_padding(cls.name, "slice_height", h, padding.aligned(blk.superrows, h), blk.superrows, "superrows")
        widths = padding.slice_widths(blk.counts(), h)
        nslices = int(widths.shape[0])
        total = int(widths.sum()) * h
        padding.check_fill(cls.name, padding.sliced_slots(widths, blk.superrows, h) * r * c, csr, params["max_fill"])
        ptr = xp.zeros(nslices + 1, dtype=xp.int64)
        ptr[1:] = xp.cumsum(widths * h)
        s, u = blk.block_row // h, blk.block_row % h
        slot = ptr[s] + blk.rank * h + u
        col = xp.full(total, -1, dtype=csr.index_dtype)
        col[slot] = (blk.block_col * c).astype(csr.index_dtype)
        data = xp.zeros(total * r * c, dtype=csr.data.dtype)
        eb = blk.entry_block
        base = ptr[s[eb]] * (r * c)
        data[base + ((blk.rank[eb] * r + blk.entry_ri) * h + u[eb]) * c + blk.entry_cj] = csr.data
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                   slice_ptr=ptr.astype(pointer_dtype(csr.index_dtype, total)), col=col, data=data,
                   **padding.explicit_zeros(csr))

    @property
    def slice_height(self) -> int:
        """Superrows per slice."""
        return self.params["slice_height"]

    def slice_widths(self):
        """``K_s``: block slots per superrow of each slice (nslices,)."""
        return self.xp.diff(self.slice_ptr) // self.slice_height

    def slot_values(self, slots):
        """Superrow, block number k (nslots,) and values (nslots, r, c) of the block slots ``slots`` (int64)."""
        xp = get_xp(self.data)
        r, c = self.block
        h = self.slice_height
        s, k, u = slot_coordinates(self.slice_ptr, slots, h)
        ri = xp.arange(r, dtype=xp.int64)[None, :, None]
        cj = xp.arange(c, dtype=xp.int64)[None, None, :]
        base = self.slice_ptr.astype(xp.int64)[s] * (r * c)
        pos = base[:, None, None] + ((k[:, None, None] * r + ri) * h + u[:, None, None]) * c + cj
        return s * h + u, k, self.data[pos]

    def to_csr(self):
        """The canonical CSR: nonzero block cells plus the recorded explicit zeros."""
        xp = get_xp(self.col)
        slots = xp.nonzero(self.col != -1)[0].astype(xp.int64)
        superrow, k, vals = self.slot_values(slots)
        return block_grid.slots_to_csr(self, superrow, k, self.col[slots], vals)

    def spmv_bytes(self, dtype=None) -> int:
        """``(nslices+1)*pidx`` (slice_ptr) + ``S*idx`` (col) + ``S*r*c*val`` (data)
        + ``nblocks*c*val`` (x) + ``rows*val`` (y).

        ``S = sum_s K_s * (superrows of slice s)`` block slots are visited: padding blocks
        included, the slots of missing superrows of a partial last slice excluded (no work
        item); ``nblocks`` real blocks each read one x segment of c values, reused by their
        r rows.  ``pidx`` is the itemsize of ``slice_ptr``.
        """
        val, idx = self._sizes(dtype)
        r, c = self.block
        h = self.slice_height
        widths = self.slice_widths()
        slots = int(widths.sum()) * h
        if widths.shape[0]:
            slots -= int(widths[-1]) * (widths.shape[0] * h - self.superrows)
        return (int(self.slice_ptr.nbytes) + slots * idx + slots * r * c * val + self.real_blocks() * c * val
                + self.shape[0] * val)

    def describe(self) -> dict:
        widths = self.slice_widths()
        out = {**super().describe(), "slice height": self.slice_height, "slices": int(widths.shape[0])}
        if widths.shape[0]:
            out["slice width (K_s) min/mean/max"] = (
                f"{int(widths.min())}/{float(widths.mean()):.2f}/{int(widths.max())}")
        return out


FORMAT = SBELL
