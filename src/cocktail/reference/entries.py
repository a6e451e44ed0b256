"""The stored entries of a format, as flat positions into its own value arrays.

Every reference module defines ``entries(fmt)``: a list of :class:`Entries`, one per value
array the format keeps (two for HYB and PKT, one otherwise).  Entry ``t`` of an
:class:`Entries` says that ``values[pos[t]] * X[cols[t]]`` is added to row ``rows[t]`` of
``A @ X``.  Exactly the entries of the canonical CSR are listed, each ``(row, col)`` once:
padding slots, slots outside the matrix and fill (zero cells of a stored diagonal or block
that are not an explicit zero of the input) are left out.

Computing the entries may synchronise with the host (boolean masks, ``nonzero``); it is
done once, and the GPU reference executor (``cocktail.executors.reference``) then multiplies
with one gather/scatter-add pass per value array.  The arrays live in the format's array module.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from ..arrays import get_xp, stable_argsort


@dataclass(frozen=True)
class Entries:
    """Stored entries: ``rows``, ``cols``, ``pos`` (int64, equal length) into ``values``.

    ``values`` is a flat view (no copy) of one of the format's own value arrays; entry ``t``
    contributes ``values[pos[t]] * X[cols[t]]`` to row ``rows[t]``.
    """

    rows: object
    cols: object
    pos: object
    values: object

    @property
    def size(self) -> int:
        """Number of entries."""
        return int(self.rows.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the three index arrays (``values`` belongs to the format)."""
        return int(self.rows.nbytes + self.cols.nbytes + self.pos.nbytes)

    def vals(self):
        """The value of every entry, ``values[pos]`` (a gathered copy)."""
        return self.values[self.pos]


def entries_of(fmt) -> list[Entries]:
    """``entries(fmt)`` of the reference module of ``fmt``'s format."""
    return import_module(f"{__package__}.{fmt.name}").entries(fmt)


def flat(values):
    """A 1-D view of a C-contiguous value array (refused otherwise: ``reshape`` would copy)."""
    if not values.flags.c_contiguous:
        raise ValueError("entries need a C-contiguous value array (a flat view, not a copy)")
    return values.reshape(-1)


def make(rows, cols, pos, values) -> Entries:
    """An :class:`Entries` with the index arrays converted to int64 (no copy when they already are)."""
    xp = get_xp(values)
    return Entries(rows.astype(xp.int64, copy=False), cols.astype(xp.int64, copy=False),
                   pos.astype(xp.int64, copy=False), flat(values))


def _matching_pairs(rows, cols, zrows, zcols):
    """Mask over ``(rows, cols)`` (distinct pairs) of those that appear in ``(zrows, zcols)``.

    One stable sort of both lists by (row, col), the candidates before the zeros on a tie;
    a zero directly after an equal candidate marks it.  No key arithmetic, so no overflow.
    """
    xp = get_xp(rows)
    nc = int(rows.shape[0])
    allr = xp.concatenate([rows.astype(xp.int64), zrows.astype(xp.int64)])
    allc = xp.concatenate([cols.astype(xp.int64), zcols.astype(xp.int64)])
    order = stable_argsort(allc)
    order = order[stable_argsort(allr[order])]
    sr, sc = allr[order], allc[order]
    is_zero = order >= nc
    hit = is_zero[1:] & ~is_zero[:-1] & (sr[1:] == sr[:-1]) & (sc[1:] == sc[:-1])
    found = xp.zeros(nc, dtype=bool)
    found[order[:-1][hit]] = True
    return found


def stored(fmt, rows, cols, pos, values) -> Entries:
    """The entries of a padded format (DIA, BDIA, blocked) among in-matrix candidate cells.

    Such formats cannot tell an explicit zero from fill, so, as their ``to_csr`` does, a
    cell is an entry when its value is nonzero or it is one of the recorded explicit zeros
    (``fmt.zero_row``, ``fmt.zero_col``).  ``rows``, ``cols``, ``pos`` list distinct cells.
    """
    vflat = flat(values)
    keep = vflat[pos] != 0  # -0.0 compares equal to 0: it is found among the explicit zeros
    if fmt.zero_row.shape[0]:
        found = _matching_pairs(rows, cols, fmt.zero_row, fmt.zero_col)
        if int(found.sum()) != int(fmt.zero_row.shape[0]):
            raise ValueError(f"{fmt.name}: an explicit zero lies outside every stored cell")
        keep |= found
    return make(rows[keep], cols[keep], pos[keep], values)


def diagonal_cells(fmt):
    """Row, column and flat slot ``d*stride + i`` of every in-matrix cell of a diagonal layout (DIA, BDIA, DIA-VI).

    Slot ``[d, i]`` is row ``i``, column ``i + offset(d)``.  Candidates are the slots of the
    real rows (``i < rows``, the alignment slots ``i >= rows`` are padding) whose column lies
    inside the matrix.
    """
    xp = fmt.xp
    m, n = fmt.shape
    offsets = fmt.diagonals().astype(xp.int64)
    ndiag, stride = int(offsets.shape[0]), fmt.stride
    d = xp.repeat(xp.arange(ndiag, dtype=xp.int64), m)
    i = xp.tile(xp.arange(m, dtype=xp.int64), ndiag)
    cols = i + offsets[d]
    inside = (cols >= 0) & (cols < n)
    d, i, cols = d[inside], i[inside], cols[inside]
    return i, cols, d * stride + i


def diagonal_entries(fmt) -> list[Entries]:
    """DIA and BDIA: the in-matrix cells of :func:`diagonal_cells` at their slot of ``data``, fill dropped."""
    rows, cols, slots = diagonal_cells(fmt)
    return [stored(fmt, rows, cols, slots, fmt.data)]


def block_entries(fmt, superrow, first_col, position, values) -> list[Entries]:
    """The blocked formats: cell ``(ri, cj)`` of real block ``b`` is row ``superrow[b]*r + ri``,
    column ``first_col[b] + cj``, at ``position(b, ri, cj)`` in the flat ``values``.

    ``position`` takes int64 arrays ``b`` (nb, 1, 1), ``ri`` (1, r, 1), ``cj`` (1, 1, c) and
    returns the flat positions, broadcast to (nb, r, c).  Cells past the last row or column
    of the matrix (in a partial block at the edge) are left out, then fill.
    """
    xp = fmt.xp
    m, n = fmt.shape
    r, c = fmt.block
    nb = int(superrow.shape[0])
    b = xp.arange(nb, dtype=xp.int64)[:, None, None]
    ri = xp.arange(r, dtype=xp.int64)[None, :, None]
    cj = xp.arange(c, dtype=xp.int64)[None, None, :]
    shape = (nb, r, c)
    rows = xp.broadcast_to(superrow.astype(xp.int64)[:, None, None] * r + ri, shape).reshape(-1)
    cols = xp.broadcast_to(first_col.astype(xp.int64)[:, None, None] + cj, shape).reshape(-1)
    pos = xp.broadcast_to(position(b, ri, cj), shape).reshape(-1)
    inside = (rows < m) & (cols < n)
    return [stored(fmt, rows[inside], cols[inside], pos[inside], values)]
