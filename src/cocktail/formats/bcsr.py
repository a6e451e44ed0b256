"""BCSR: blocked compressed sparse rows (clSpMV §4.4.3, Fig. 9).

Layout, for an ``m x n`` matrix with block shape ``r x c``, ``superrows = ceil(m/r)`` and
``nblocks`` blocks holding at least one stored entry (see ``block_grid``):

* ``row_ptr`` (superrows+1,), index dtype: the blocks of superrow ``i`` are
  ``row_ptr[i] .. row_ptr[i+1]-1``, sorted by column.
* ``col`` (nblocks,), index dtype: first column of each block, ``bj*c`` (a multiple of c).
* ``data`` (r, nblocks, c), value dtype, C order: ``data[ri, b, cj] = A[i*r+ri, col[b]+cj]``
  for block ``b`` of superrow ``i`` (0 outside the stored entries and outside the matrix).
  As in clSpMV, the 1 x c unit ``ri`` of all blocks is contiguous, then unit ``ri+1``:
  element offset ``(ri*nblocks + b)*c + cj``.
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).
"""

from __future__ import annotations

from . import block_grid, padding


class BCSR(block_grid.BlockedFormat):
    """Blocked CSR: ``row_ptr``, ``col`` and ``data`` (r, nblocks, c), see the module docstring.

    Parameters: ``block`` (default (1, 4)): the block shape ``(r, c)``, r and c in
    {1, 2, 3, 4, 8}; ``max_fill`` (default ``padding.DEFAULT_MAX_FILL``, None disables)
    refuses matrices needing more than ``max_fill * nnz`` slots (``nblocks * r * c``).
    """

    name = "bcsr"
    order = 120
    colour = "#546e7a"
    summary = "Entries in small dense blocks (several unknowns per mesh node): one index per block."
    traffic = ("the block-row pointers, one column index per block, every value slot of each block "
               "(fill included), one x segment per block (reused by its rows) and one write of y")
    array_fields = ("row_ptr", "col", "data") + padding.ZERO_FIELDS
    unread_fields = padding.ZERO_FIELDS
    defaults = {"block": block_grid.DEFAULT_BLOCK, "max_fill": padding.DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr, **params):
        """Store every block of ``csr`` that holds a stored entry, superrow by superrow.

        On a device in two passes over the CSR and no sort (:func:`~.block_grid.device_blocks`): each superrow's
        blocks counted, their pointers scanned and, after one synchronisation, the blocks written."""
        params, r, c = block_grid.validated(cls, params)
        launch = block_grid.device_launcher(csr)
        if launch is not None:
            counted = block_grid.device_blocks(csr, r, c, 1, launch)  # a group per superrow: ptr is row_ptr
            nb = counted.slots
            padding.check_fill(cls.name, nb * r * c, csr, params["max_fill"])
            # block b of superrow s at ptr[s] + k; its unit ri at (ri * nb + b) * c
            col, data = block_grid.device_write(csr, r, c, counted, launch, slots=counted.groups, kstep=1, rstep=nb,
                                                pmul=1)
            return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                       row_ptr=counted.ptr.astype(csr.index_dtype, copy=False), col=col, data=data.reshape(r, nb, c),
                       **padding.explicit_zeros(csr, count=counted.zeros))
        blk = block_grid.extract(csr, r, c)
        xp = csr.xp
        nb = blk.nblocks
        padding.check_fill(cls.name, nb * r * c, csr, params["max_fill"])
        data = xp.zeros(r * nb * c, dtype=csr.data.dtype)
        data[(blk.entry_ri * nb + blk.entry_block) * c + blk.entry_cj] = csr.data
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                   row_ptr=blk.ptr.astype(csr.index_dtype), col=(blk.block_col * c).astype(csr.index_dtype),
                   data=data.reshape(r, nb, c), **padding.explicit_zeros(csr))

    @property
    def nblocks(self) -> int:
        """Number of stored blocks."""
        return int(self.col.shape[0])

    def block_rows(self):
        """Superrow of every stored block (nblocks,)."""
        from ..arrays import row_ids

        return row_ids(self.row_ptr, self.nblocks)

    def to_csr(self):
        """The canonical CSR: nonzero block cells plus the recorded explicit zeros."""
        xp = self.xp
        superrow = self.block_rows().astype(xp.int64)
        rank = xp.arange(self.nblocks, dtype=xp.int64) - self.row_ptr.astype(xp.int64)[superrow]
        return block_grid.slots_to_csr(self, superrow, rank, self.col, self.data.transpose(1, 0, 2))

    def spmv_bytes(self, dtype=None) -> int:
        """``(superrows+1)*idx`` (row_ptr) + ``nblocks*idx`` (col) + ``nblocks*r*c*val`` (data)
        + ``nblocks*c*val`` (x: one segment per block, reused by its r rows) + ``rows*val`` (y)."""
        val, idx = self._sizes(dtype)
        r, c = self.block
        nb = self.nblocks
        return (int(self.row_ptr.shape[0]) * idx + nb * idx + nb * r * c * self.stored_size(val) + nb * c * val
                + self.shape[0] * val)

    def real_blocks(self) -> int:
        """Number of stored blocks: BCSR stores no padding slot."""
        return self.nblocks

    def describe(self) -> dict:
        counts = self.xp.diff(self.row_ptr)
        out = super().describe()
        if counts.shape[0]:
            out["blocks per superrow max"] = int(counts.max())
            out["blocks per superrow mean"] = round(self.nblocks / int(counts.shape[0]), 2)
        return out


FORMAT = BCSR
