"""Shared pieces of the blocked formats BCSR, BELL and SBELL (clSpMV §4.4).

Blocks lie on the aligned grid of an ``r x c`` block shape: block ``(bi, bj)`` covers rows
``bi*r .. bi*r+r-1`` and columns ``bj*c .. bj*c+c-1``.  A block exists when it holds at
least one stored entry of the canonical CSR (an explicit zero counts).  A shape that is
not a multiple of the block is padded: ``ceil(m/r)`` superrows, ``ceil(n/c)`` block
columns; the cells beyond the matrix are fill (0).
"""

from __future__ import annotations

from dataclasses import dataclass


from ..arrays import entry_rows, get_xp, pointers_from_ids, scatter_add, stable_argsort
from . import _device_builds, padding
from ._params import is_int, max_fill_param
from .base import SparseFormat

BLOCK_SIZES = (1, 2, 3, 4, 8)
DEFAULT_BLOCK = (1, 4)
_ALLOWED = "{" + ", ".join(map(str, BLOCK_SIZES)) + "}"


def block_shape(name: str, block) -> tuple[int, int]:
    """Validate the ``block`` parameter and return it as ``(r, c)``."""
    try:
        r, c = block
    except (TypeError, ValueError):
        r = c = None
    if not (is_int(r) and is_int(c) and int(r) in BLOCK_SIZES and int(c) in BLOCK_SIZES):
        raise ValueError(
            f"{name}: block must be a pair (r, c) with r in {_ALLOWED} and c in {_ALLOWED}, got {block!r}"
        )
    return int(r), int(c)


def validated(cls, params: dict):
    """The common start of the blocked builders: resolved params and the block shape ``(r, c)``.

    Validates ``block`` and ``max_fill`` and stores the block as a tuple in the params.
    """
    params = cls.resolve_params(params)
    r, c = block_shape(cls.name, params["block"])
    max_fill_param(cls.name, params["max_fill"])
    params["block"] = (r, c)
    return params, r, c


def device_launcher(csr):
    """The launcher that builds ``csr``'s blocked formats on its device (:mod:`cocktail.kernels.block_build`: two
    passes, no sort), or None: build on the host (:func:`extract` and a scatter)."""
    return _device_builds.launcher_for(csr.indptr)


def device_blocks(csr, r: int, c: int, group: int, launch):
    """Pass 1 of the device build (:func:`cocktail.kernels.block_build.count`): the block slots of every group of
    ``group`` super-rows, their total and the explicit zeros; one synchronisation."""
    return _device_builds.blocks().count(csr, r, c, group, launch)


def device_write(csr, r: int, c: int, counted, launch, slots: int, kstep: int, rstep: int, pmul: int):
    """Pass 2 of the device build (:func:`cocktail.kernels.block_build.write`): ``(col, data)``, flat, of the
    ``counted.slots`` block slots (``col`` in the index dtype, ``data`` of ``r*c`` values a slot), written whole for
    ``slots`` super-row slots as :class:`~cocktail.kernels.block_build.Layout` (``kstep``, ``rstep``, ``pmul``)
    places the blocks."""
    build = _device_builds.blocks()
    col = build.uninitialised(csr.xp, counted.slots, csr.index_dtype)
    data = build.uninitialised(csr.xp, counted.slots * r * c, csr.data.dtype)
    build.write(csr, r, c, counted, build.Layout(slots, kstep, rstep, pmul), col, data, launch)
    return col, data


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for non-negative integers."""
    return -(-int(a) // int(b))


@dataclass(frozen=True)
class Blocks:
    """The distinct blocks of a CSR matrix, superrow by superrow, sorted by block column.

    Block arrays (nblocks,), int64: ``block_row`` (superrow ``bi``), ``block_col`` (block
    column ``bj``), ``rank`` (position of the block within its superrow).  ``ptr``
    (superrows+1,) int64 points at each superrow's first block.  Entry arrays (nnz,),
    int64, in CSR order: ``entry_block`` (the block holding the entry), ``entry_ri``,
    ``entry_cj`` (its row and column inside that block).
    """

    r: int
    c: int
    superrows: int
    block_cols: int
    block_row: object
    block_col: object
    rank: object
    ptr: object
    entry_block: object
    entry_ri: object
    entry_cj: object

    @property
    def nblocks(self) -> int:
        """Number of blocks holding at least one stored entry."""
        return int(self.block_row.shape[0])

    def counts(self):
        """Blocks in each superrow (superrows,)."""
        return get_xp(self.ptr).diff(self.ptr)


def extract(csr, r: int, c: int) -> Blocks:
    """Find the distinct ``r x c`` blocks of ``csr`` and place every stored entry in one."""
    xp = csr.xp
    m, n = csr.shape
    superrows, block_cols = ceil_div(m, r), ceil_div(n, c)
    rows = entry_rows(csr)
    cols = csr.indices.astype(xp.int64)
    bi, bj = rows // r, cols // c
    # Canonical CSR is sorted by (row, col), hence already by (bi, bj) when r == 1.
    if r == 1 or csr.nnz <= 1:
        order = xp.arange(csr.nnz, dtype=xp.int64)
    elif superrows * block_cols < (1 << 62):
        order = stable_argsort(bi * block_cols + bj)
    else:
        order = stable_argsort(bj)
        order = order[stable_argsort(bi[order])]
    sbi, sbj = bi[order], bj[order]
    first = xp.ones(csr.nnz, dtype=bool)
    if csr.nnz > 1:
        first[1:] = (sbi[1:] != sbi[:-1]) | (sbj[1:] != sbj[:-1])
    entry_block = xp.empty(csr.nnz, dtype=xp.int64)
    entry_block[order] = xp.cumsum(first.astype(xp.int64)) - 1
    block_row, block_col = sbi[first], sbj[first]
    ptr = pointers_from_ids(block_row, superrows, xp.int64)
    rank = xp.arange(block_row.shape[0], dtype=xp.int64) - ptr[block_row]
    return Blocks(r, c, superrows, block_cols, block_row, block_col, rank, ptr,
                  entry_block, rows - bi * r, cols - bj * c)


def block_fill(nnz: int, nblocks: int, r: int, c: int) -> float:
    """Value slots of the real blocks per stored entry (1.0: the blocks are dense)."""
    return round(nblocks * r * c / nnz, 2) if nnz else 1.0


def slots_to_csr(fmt, superrow, rank, col, vals):
    """Canonical CSR from the real blocks of a blocked format.

    ``superrow``, ``rank`` (position of the block in its superrow, blocks sorted by column)
    and ``col`` (first column) are (nb,); ``vals`` is (nb, r, c).  Cells holding 0 are fill
    and dropped, except those of the format's explicit zeros; the kept cells are put in
    row-major order by one sort of their row-major position.
    """
    from .csr import CSR

    xp = get_xp(vals)
    m, n = fmt.shape
    nb, r, c = (int(d) for d in vals.shape)
    superrow, rank, col = superrow.astype(xp.int64), rank.astype(xp.int64), col.astype(xp.int64)
    flat = vals.ravel()
    keep = flat != 0
    block_cols = ceil_div(n, c)
    if fmt.zero_row.shape[0] and ceil_div(m, r) * block_cols >= (1 << 62):
        cells = xp.nonzero(keep)[0]
        b, ri, cj = cells // (r * c), (cells // c) % r, cells % c
        return padding.with_explicit_zeros(fmt, superrow[b] * r + ri, col[b] + cj, flat[cells])
    superrows = ceil_div(m, r)
    counts = xp.bincount(superrow, minlength=superrows)[:superrows] if nb else xp.zeros(superrows, xp.int64)
    bptr = xp.zeros(superrows + 1, dtype=xp.int64)
    bptr[1:] = xp.cumsum(counts)
    if fmt.zero_row.shape[0]:
        # Find each explicit zero's block among the blocks in row-major order, then its cell.
        canon = bptr[superrow] + rank
        source_block = xp.empty(nb, dtype=xp.int64)
        source_block[canon] = xp.arange(nb, dtype=xp.int64)
        keys = xp.empty(nb, dtype=xp.int64)
        keys[canon] = superrow * block_cols + col // c
        zr, zc = fmt.zero_row.astype(xp.int64), fmt.zero_col.astype(xp.int64)
        zb = source_block[xp.searchsorted(keys, (zr // r) * block_cols + zc // c)]
        keep[(zb * r + zr % r) * c + zc % c] = True
    cells = xp.nonzero(keep)[0]
    b, ri, cj = cells // (r * c), (cells // c) % r, cells % c
    sr = superrow[b]
    # Row-major position of a cell: superrow start, then row ri of its n_i blocks, then its block.
    order = stable_argsort(((bptr[sr] * r + ri * counts[sr] + rank[b]) * c + cj))
    rows = (sr * r + ri)[order]
    idt = fmt.index_dtype
    return CSR(fmt.shape, fmt.dtype, idt, int(rows.shape[0]), {}, data=flat[cells[order]],
               indices=(col[b] + cj)[order].astype(idt), indptr=pointers_from_ids(rows, m, idt))


def block_product(X, superrow, col, vals, shape, dtype):
    """``A @ X`` from real blocks: superrow (nb,), first column (nb,), values (nb, r, c).

    ``X`` is copied into a zero-padded ``(block_cols*c, k)`` array so a block reaching past
    column ``n`` reads zeros; the result is computed on ``superrows*r`` rows and trimmed.
    """
    xp = get_xp(X)
    m, n = shape
    r, c = int(vals.shape[1]), int(vals.shape[2])
    k = X.shape[1]
    Xp = xp.zeros((ceil_div(n, c) * c, k), dtype=dtype)
    Xp[:n] = X
    gathered = Xp[col.astype(xp.int64)[:, None] + xp.arange(c, dtype=xp.int64)[None, :]]  # (nb, c, k)
    contrib = xp.einsum("brc,bck->brk", vals, gathered)
    Y = xp.zeros((ceil_div(m, r), r, k), dtype=dtype)
    scatter_add(Y, superrow.astype(xp.int64), contrib)
    return Y.reshape(-1, k)[:m]


class BlockedFormat(SparseFormat):
    """What the blocked formats (BCSR, BELL, SBELL) share: the block shape, the superrows, one ``x``
    segment of ``c`` values read per stored block, and the words of :meth:`describe`.  A subclass says
    how many blocks it stores (:meth:`real_blocks`)."""

    @property
    def block(self) -> tuple[int, int]:
        """The block shape ``(r, c)``."""
        return self.params["block"]

    @property
    def superrows(self) -> int:
        """``ceil(rows / r)``."""
        return ceil_div(self.shape[0], self.block[0])

    @property
    def stored_slots(self) -> int:
        return int(self.data.size)

    def real_blocks(self) -> int:
        """Number of stored blocks (padding slots excluded)."""
        raise NotImplementedError

    def x_reads(self) -> int:
        """One ``x`` segment of c values per stored block, reused by its r rows."""
        return self.real_blocks() * self.block[1]

    def describe(self) -> dict:
        r, c = self.block
        nb = self.real_blocks()
        return {"block": f"{r}x{c}", "blocks": nb, "fill inside blocks": block_fill(self.nnz, nb, r, c)}


class PaddedBlocks(BlockedFormat):
    """BELL and SBELL: block slots in ELL order, a slot whose ``col`` is -1 a padding slot."""

    def real_blocks(self) -> int:
        """Number of slots holding a block (col != -1)."""
        return int((self.col != -1).sum())
