"""The Cocktail: a matrix stored as the sum of parts, each in its own format (clSpMV §4).

``parts`` lists ``(format, params, selector)`` in order.  Each selector takes, from the entries
no earlier part took, the ones its part stores:

- ``("diagonals", offsets)``: the entries on these diagonals (``col - row`` in ``offsets``);
- ``("row_prefix", k)``: the first ``k`` remaining entries of every row (an ELL-like share);
- ``("rest",)``: every remaining entry.

Every entry must be taken by some part (end the list with ``("rest",)``).  The parts hold
disjoint entries, so the product is the sum of the parts' products: the first part applies
``beta``, the others add into the same ``y``.  The format holds no rule: the planner in
:mod:`cocktail.tuning` chooses the parts.
"""

from __future__ import annotations

import functools

import numpy as np

from ..arrays import entry_rows, get_xp, to_numpy
from . import _device_builds
from .base import SparseFormat
from .csr import CSR

SELECTORS = ("diagonals", "row_prefix", "rest")


def _subset(csr: CSR, keep):
    """``(part, where)``: the canonical CSR of ``csr``'s entries where ``keep`` is True (same shape and dtypes)
    and their positions in ``csr`` (int64).

    One compaction (one synchronisation on a GPU); the gathers and the row pointers (the kept entries
    before each row's start, by ``searchsorted``) need none.
    """
    xp = get_xp(csr.indptr)
    where = xp.flatnonzero(keep)
    indptr = xp.searchsorted(where, csr.indptr).astype(csr.index_dtype)
    part = CSR(csr.shape, csr.dtype, csr.index_dtype, int(where.shape[0]), {}, data=csr.data[where],
               indices=csr.indices[where], indptr=indptr)
    return part, where


def _parsed(selector):
    """``selector`` checked: ``("diagonals", offsets)`` (a 1-D int64 NumPy array), ``("row_prefix", k)`` (an int) or
    ``("rest",)``; a ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(selector, (tuple, list)) or not selector or selector[0] not in SELECTORS:
        raise ValueError(f"cocktail: a part's selector must be one of ('diagonals', offsets), ('row_prefix', k) "
                         f"or ('rest',), got {selector!r}")
    kind = selector[0]
    if kind == "rest":
        return ("rest",)
    if len(selector) != 2:
        raise ValueError(f"cocktail: selector {kind!r} takes one argument, got {selector!r}")
    if kind == "diagonals":
        given = np.asarray(to_numpy(selector[1])).reshape(-1)
        if given.dtype.kind not in "iu" and given.size:
            raise ValueError(f"cocktail: diagonal offsets must be integers, got {selector[1]!r}")
        return ("diagonals", given.astype(np.int64))
    k = selector[1]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"cocktail: row_prefix takes a non-negative integer, got {k!r}")
    return ("row_prefix", int(k))


def _selected(selector, csr: CSR, free, rows=None):
    """The entries (a boolean mask over ``csr``'s entries) that ``selector`` takes from the ``free`` ones.
    ``rows``: the entries' rows (:func:`~cocktail.arrays.entry_rows`) when the caller has them."""
    return _taken(_parsed(selector), csr, free, rows)


def _taken(parsed, csr: CSR, free, rows=None):
    """:func:`_selected` of a selector already :func:`_parsed`."""
    xp = get_xp(csr.indptr)
    if parsed[0] == "rest":
        return free
    if parsed[0] == "diagonals":
        return free & on_diagonals(csr, parsed[1], rows)
    # Rank of each free entry among its row's free entries: a cumulative count restarted at each row.
    counts = xp.cumsum(free, dtype=xp.int64)
    starts = xp.concatenate([xp.zeros(1, dtype=xp.int64), counts])[csr.indptr[:-1]]
    rows = entry_rows(csr) if rows is None else rows
    return free & (counts - starts[rows] <= parsed[1])  # rank (counts - 1 - start) < k


def _planned(spec, own: str):
    """``(planned, failure)``: ``(i, name, params, selector, parsed)`` of each part of ``spec`` up to the first that
    is malformed, and the error refusing that one (None: every part is well formed)."""
    planned = []
    for i, part in enumerate(spec):
        try:
            try:
                name, part_params, selector = part
            except (TypeError, ValueError):
                raise ValueError(f"cocktail: part {i} must be (format, params, selector), got {part!r}") from None
            if name == own:
                raise ValueError("cocktail: a part cannot itself be a cocktail")
            planned.append((i, name, part_params, selector, _parsed(selector)))
        except Exception as exc:  # raised once the parts before it are built, as a build part by part meets it
            return planned, exc
    return planned, None


def _built(i: int, name, part_params, selector, sub: CSR):
    """Part ``i`` built in its format from ``sub``, its CSR; its builder's error names the part."""
    from . import get

    try:
        return get(name).from_csr(sub, **dict(part_params or {}))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"cocktail part {i} ({name}, {selector[0]}): {exc}") from exc


def _host_parts(csr: CSR, planned):
    """``(parts, taken)``: the parts built from the CSRs of their entries, selected one part after the other by masks
    over ``csr``'s entries (NumPy or CuPy), and the entries they took."""
    xp = get_xp(csr.indptr)
    free = xp.ones(csr.nnz, dtype=bool)
    # The entries' rows, expanded once for every selector and lent to each part's builder (see
    # arrays.entry_rows); they go when the build ends.
    rows = entry_rows(csr)
    parts, taken = [], 0
    for i, name, part_params, selector, parsed in planned:
        take = _taken(parsed, csr, free, rows)
        sub, where = _subset(csr, take)
        # gathered on first use only: a csr-family part never looks at its rows
        sub._entry_rows = functools.lru_cache(maxsize=1)(lambda where=where: rows[where])
        try:
            parts.append(_built(i, name, part_params, selector, sub))
        finally:
            del sub._entry_rows  # a csr part is this very object: it must not keep them
        taken += sub.nnz
        free[where] = False  # `free` is this build's own array (and `take` no longer needed)
    return parts, taken


def _device_parts(csr: CSR, planned, launch):
    """``(parts, taken)`` as :func:`_host_parts` makes them, split on the device (:mod:`cocktail.kernels.part_split`: a
    pass deciding every entry's part and counting each part's entries per row, one synchronisation, then a pass per
    part copying its entries, made just before the part is built; :func:`_on_device` fetched the longest row
    first, a second synchronisation)."""
    split = _device_builds.parts().split(csr, [p[4] for p in planned], launch)
    parts = []
    for k, (i, name, part_params, selector, _) in enumerate(planned):
        data, indices, indptr = split.part(k)
        sub = CSR(csr.shape, csr.dtype, csr.index_dtype, split.sizes[k], {}, data=data, indices=indices,
                  indptr=indptr)
        parts.append(_built(i, name, part_params, selector, sub))
    return parts, sum(split.sizes)


def _on_device(csr: CSR, planned):
    """The launcher that splits ``csr`` among the ``planned`` parts on its device, or None: by masks (on the host, or
    by CuPy's passes where the split's kernels do not serve it: too many parts, a row too long)."""
    launch = _device_builds.csr_launcher(csr)
    if launch is None or not planned or len(planned) > _device_builds.parts().MAX_PARTS:
        return None
    return launch if _device_builds.parts().takes(csr, launch) else None


def on_diagonals(csr: CSR, offsets, rows=None):
    """A boolean mask over ``csr``'s entries: those on the diagonals ``offsets`` (``col - row``).

    A lookup table over the ``m + n - 1`` possible offsets: one gather per entry, however many
    diagonals (``isin`` would compare every entry with every offset on the GPU).  ``rows``: the
    entries' row ids (int64) when the caller has them already.
    """
    xp = get_xp(csr.indptr)
    m, n = csr.shape
    offsets = np.asarray(to_numpy(offsets), dtype=np.int64).reshape(-1)
    offsets = offsets[(offsets > -m) & (offsets < n)]
    table = xp.zeros(m + n - 1 if m + n else 0, dtype=bool)
    if offsets.size:
        table[xp.asarray(offsets + (m - 1))] = True
    if not csr.nnz:
        return xp.zeros(0, dtype=bool)
    if rows is None:
        rows = entry_rows(csr)
    where = xp.subtract(csr.indices, rows, dtype=xp.int64)
    where += m - 1
    return table[where]


class Cocktail(SparseFormat):
    """A sum of parts, each a format holding a disjoint share of the entries (see the module docstring)."""

    name = "cocktail"
    order = 150
    colour = "#795548"
    family = "bcsr"
    summary = "Mixed structure: format='auto' splits it into parts, each in its best format."
    traffic = "the sum of its parts' bytes, plus one read of y for every part after the first"
    unset_words = {"parts": "from the planner"}
    defaults = {"parts": None}
    #: Built from a plan (its ``parts``), not on its own: benchmarks of single formats leave it out.
    standalone = False

    def __init__(self, shape, dtype, index_dtype, nnz, params, parts=()):
        super().__init__(shape, dtype, index_dtype, nnz, params)
        self.parts = tuple(parts)
        #: Which of the ``parts=`` given each stored part is (empty ones are left out).
        self.kept = tuple(range(len(self.parts)))
        if not self.parts:
            raise ValueError("cocktail: a cocktail holds at least one part")

    @property
    def value_dtype(self) -> np.dtype:
        """The dtype its parts store their values in."""
        return self.parts[0].value_dtype

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Split ``csr`` among ``parts``: each selector takes its entries from those still free, in order."""
        params = cls.resolve_params(params)
        spec = params["parts"]
        if not spec:
            raise TypeError("cocktail needs parts=[(format, params, selector), ...]: the planner in "
                            "cocktail.tuning chooses them (format='auto')")
        planned, failure = _planned(spec, cls.name)
        launch = _on_device(csr, planned)
        parts, taken = _host_parts(csr, planned) if launch is None else _device_parts(csr, planned, launch)
        if failure is not None:  # after the parts before it, as a build one part at a time meets it
            raise failure
        left = csr.nnz - taken  # the parts are disjoint: no count on the device
        if left:
            raise ValueError(f"cocktail: {left} entries are in no part; end the parts with a ('rest',) selector")
        # A part that took nothing would still read and write y at every product: it is left out.
        kept = tuple(i for i, p in enumerate(parts) if p.nnz) or (0,)
        out = cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, parts=[parts[i] for i in kept])
        out.kept = kept
        return out

    def to_csr(self) -> CSR:
        """The parts' entries merged into one canonical CSR (they are disjoint, so nothing is summed)."""
        xp = self.xp
        pieces = [p.to_csr() for p in self.parts]
        rows = xp.concatenate([c.row_ids().astype(xp.int64) for c in pieces])
        cols = xp.concatenate([c.indices.astype(xp.int64) for c in pieces])
        vals = xp.concatenate([c.data for c in pieces])
        return CSR.from_triplets(rows, cols, vals, self.shape, self.index_dtype, self.dtype)

    def _replace(self, fn, dtype=None):
        return type(self)(self.shape, self.dtype if dtype is None else dtype, self.index_dtype, self.nnz, self.params,
                          parts=[p._replace(fn, dtype) for p in self.parts])

    @property
    def xp(self):
        return self.parts[0].xp if self.parts else np

    def arrays(self) -> dict:
        """Every part's arrays, named ``<i>.<format>.<array>``."""
        return {f"{i}.{p.name}.{k}": v for i, p in enumerate(self.parts) for k, v in p.arrays().items()}

    @property
    def stored_slots(self) -> int:
        return sum(p.stored_slots for p in self.parts)

    def spmv_bytes(self, dtype=None) -> int:
        """The parts' bytes, plus one read of ``y`` for every part after the first (they add into it)."""
        val = np.dtype(self.dtype if dtype is None else dtype).itemsize
        later = max(0, len(self.parts) - 1)
        return sum(p.spmv_bytes(dtype) for p in self.parts) + later * self.shape[0] * val

    def _stream_bytes(self, val: int) -> int:
        return sum(p._stream_bytes(val) for p in self.parts)

    def x_window(self) -> int:
        """The widest window of ``x`` a part reads from at once: every part reads the same ``x``."""
        return max((p.x_window() for p in self.parts), default=0)

    def x_reads(self) -> int:
        """The parts' reads of ``x``.  (With ``x`` in L2 the DRAM model counts it once for all
        the parts: the later parts find it there.)"""
        return sum(p.x_reads() for p in self.parts)

    def y_bytes(self, val: int, accumulate: bool = False) -> int:
        """The first part writes ``y`` (or adds into it when ``accumulate``); every later part adds
        into it: a read and a write of each row it touches (every row, but for a COO part)."""
        return sum(p.y_bytes(val, accumulate or i > 0) for i, p in enumerate(self.parts))

    def shares(self) -> str:
        """Each part's format and share of the entries, e.g. ``dia(9%) sell(73%) coo(18%)``."""
        total = max(self.nnz, 1)
        return " ".join(f"{p.name}({100 * p.nnz / total:.0f}%)" for p in self.parts)

    def resolved_params(self) -> dict:
        """``parts``: each stored part's format name and resolved parameters, in order."""
        return {"parts": [(p.name, p.resolved_params()) for p in self.parts]}

    def describe(self) -> dict:
        return {"parts": self.shares()}


FORMAT = Cocktail
