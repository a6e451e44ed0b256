"""BELL: blocked ELLPACK (clSpMV §4.4.1, Fig. 7).

Layout, for an ``m x n`` matrix with block shape ``r x c``, ``superrows = ceil(m/r)``,
``K`` = the most blocks in one superrow, and ``stride`` = superrows rounded up to a
multiple of ``align``:

* ``col`` (K, stride), index dtype, C order: ``col[k, s]`` is the first column (``bj*c``)
  of the k-th block of superrow ``s`` (blocks sorted by column), or -1 for a padding
  slot (superrow ``s`` has fewer than k+1 blocks, or ``s >= superrows``).  Consecutive
  superrows of one k are adjacent (column-major, as ELL).
* ``data`` (K, r, stride, c), value dtype, C order: ``data[k, ri, s, cj]`` is the value at
  row ``s*r+ri``, column ``col[k, s]+cj`` (0 for fill, padding and cells outside the
  matrix).  Element offset ``((k*r + ri)*stride + s)*c + cj``: for each k, the 1 x c unit
  ``ri`` of all superrows is contiguous, then unit ``ri+1``, as in clSpMV.
* ``zero_row``, ``zero_col``, ``zero_val``: the input's explicit zeros (kernels ignore them).
"""

from __future__ import annotations

from ..arrays import get_xp
from . import block_grid, padding
from ._params import int_param


class BELL(block_grid.PaddedBlocks):
    """Blocked ELL: ``col`` (K, stride) and ``data`` (K, r, stride, c), see the module docstring.

    Parameters: ``block`` (default (1, 4)): the block shape ``(r, c)``, r and c in
    {1, 2, 3, 4, 8}; ``align`` (default 32): ``stride`` is the number of superrows rounded up
    to a multiple of it; ``max_fill`` (default ``padding.DEFAULT_MAX_FILL``, None disables)
    refuses matrices needing more than ``max_fill * nnz`` slots (``K * superrows * r * c``).
    """

    name = "bell"
    order = 130
    colour = "#90a4ae"
    family = "bcsr"
    summary = "Small dense blocks with about the same number of blocks in every block row."
    traffic = ("one column index and r x c value slots per block slot (padding blocks included), one "
               "x segment per real block and one write of y")
    array_fields = ("col", "data") + padding.ZERO_FIELDS
    unread_fields = padding.ZERO_FIELDS
    defaults = {"block": block_grid.DEFAULT_BLOCK, "align": 32, "max_fill": padding.DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr, **params):
        """Pack the blocks of each superrow to the left, K blocks per superrow.

        On a device in two passes over the CSR and no sort (:func:`~.block_grid.device_blocks`, one group of all the
        superrows, ``stride`` slots a block number), one synchronisation between them."""
        params, r, c = block_grid.validated(cls, params)
        align = int_param(cls.name, "align", params["align"])
        launch = block_grid.device_launcher(csr)
        if launch is not None:
            superrows = block_grid.ceil_div(csr.shape[0], r)
            stride = padding.aligned(superrows, align)
            counted = block_grid.device_blocks(csr, r, c, stride, launch)  # its slots: K * stride
            K = counted.slots // stride if stride else 0
            padding.check_fill(cls.name, K * superrows * r * c, csr, params["max_fill"])
            padding.check_padding(cls.name, "align", align, stride, superrows, "superrows")
            # block k of superrow s at k * stride + s; its unit ri at ((k * r + ri) * stride + s) * c
            col, data = block_grid.device_write(csr, r, c, counted, launch, slots=stride, kstep=r * stride,
                                                rstep=stride, pmul=r)
            return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, col=col.reshape(K, stride),
                       data=data.reshape(K, r, stride, c), **padding.explicit_zeros(csr, count=counted.zeros))
        blk = block_grid.extract(csr, r, c)
        xp = csr.xp
        K = int(blk.counts().max()) if blk.nblocks else 0
        padding.check_fill(cls.name, K * blk.superrows * r * c, csr, params["max_fill"])
        stride = padding.aligned(blk.superrows, align)
        padding.check_padding(cls.name, "align", align, stride, blk.superrows, "superrows")
        col = xp.full((K, stride), -1, dtype=csr.index_dtype)
        col[blk.rank, blk.block_row] = (blk.block_col * c).astype(csr.index_dtype)
        data = xp.zeros(K * r * stride * c, dtype=csr.data.dtype)
        eb = blk.entry_block
        data[((blk.rank[eb] * r + blk.entry_ri) * stride + blk.block_row[eb]) * c + blk.entry_cj] = csr.data
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params,
                   col=col, data=data.reshape(K, r, stride, c), **padding.explicit_zeros(csr))

    @property
    def width(self) -> int:
        """K: block slots per superrow."""
        return int(self.col.shape[0])

    @property
    def stride(self) -> int:
        """Distance in superrows between consecutive k in ``col`` (and units in ``data``)."""
        return int(self.col.shape[1])

    def to_csr(self):
        """The canonical CSR: nonzero block cells plus the recorded explicit zeros."""
        xp = get_xp(self.col)
        s, k = xp.nonzero(self.col.T != -1)  # real slots, superrow-major: blocks packed left
        return block_grid.slots_to_csr(self, s, k, self.col[k, s], self.data.transpose(0, 2, 1, 3)[k, s])

    def spmv_bytes(self, dtype=None) -> int:
        """``S*idx`` (col) + ``S*r*c*val`` (data) + ``nblocks*c*val`` (x) + ``rows*val`` (y).

        ``S = K * superrows`` block slots are visited (padding blocks included; the slots
        of the alignment rows ``superrows..stride-1`` have no work item); ``nblocks`` real
        blocks each read one x segment of c values, reused by their r rows.
        """
        val, idx = self._sizes(dtype)
        r, c = self.block
        slots = self.width * self.superrows
        return slots * idx + slots * r * c * val + self.real_blocks() * c * val + self.shape[0] * val

    def describe(self) -> dict:
        return {**super().describe(), "K (blocks per superrow)": self.width, "stride": self.stride}


FORMAT = BELL
