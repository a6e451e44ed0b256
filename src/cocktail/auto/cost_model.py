"""The planner's cost model: the value slots a kernel variant steps through on a matrix, and their predicted time.

A variant's *slots* are the values it reads, padding included, counted from the matrix's
:mod:`features <.features>` as the device :mod:`profile <.profile>` counts them on its samples:
:func:`flat_work` for the flat variants (CSR, COO, ELL, SELL: their rows padded in groups, balanced, or
the entries alone, by :func:`_flat_shape`), :func:`diagonal_slots` for the diagonal ones, :func:`work` for
any variant holding the whole matrix.  :class:`_Costing` predicts their times for one matrix, one at a
time or many in one vectorised call over the catalog of the variants that may be planned
(:class:`_Catalog`, :func:`allowed`) and the row groups' width tables (:class:`_Widths`).  The
:mod:`planner <.planner>` builds its candidate plans on these predictions.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import formats, kernels
from ..formats.bdia import bands as bdia_bands
from ..precision import sampled_dtype
from . import variants as _variants
from .features import Features

#: The padded formats are costed only while storing at most this many value slots per entry.
MAX_SLOTS_PER_ENTRY = 3.0
#: Rows of the tail sample: a warp-or-thread-per-row kernel takes at least this many rows' time.
TAIL_ROWS = 1024


class _Costing:
    """Predictions for one matrix, dtype and profile: one at a time (:meth:`time`) or many in one vectorised call
    (:meth:`work` and :meth:`costs`, of variants by their :class:`_Catalog` numbers)."""

    def __init__(self, features: Features, profile, dtype, deterministic: bool = False, vendor: bool = True,
                 precision: str | None = None):
        # the profile's samples are real: float32 ones cost a half or complex64 matrix, float64 ones complex128
        self.f, self.profile, self.dtype = features, profile, sampled_dtype(dtype).name
        self.m = features.shape[0]
        self.scatter = float(features.x_scatter.get(sampled_dtype(dtype).itemsize, 0.0))
        self.catalog = _catalog(profile, self.dtype, deterministic, vendor, precision)
        self._has = self.catalog.usable(features.distinct_values)
        self._times = {}
        self._widths = {}

    def time(self, variant: str, slots: float, widest: float = 0.0, rows: int | None = None) -> float | None:
        """Predicted µs of ``variant`` reading ``slots``; ``widest``: slots of the widest row a thread or warp takes."""
        rows = self.m if rows is None else rows
        key = (variant, slots, widest, rows)
        if key not in self._times:
            self._times[key] = self._time(variant, slots, widest, rows)
        return self._times[key]

    def _time(self, variant: str, slots: float, widest: float, rows: int) -> float | None:
        t = self.profile.predict_us(variant, self.dtype, rows, slots, self.scatter)
        if t is None:
            return None
        if widest > 0:
            tail = self.profile.predict_us(variant, self.dtype, TAIL_ROWS, TAIL_ROWS * widest, self.scatter)
            t = max(t, tail)
        return t

    def costs(self, ids, slots, widest) -> np.ndarray:
        """:meth:`time` of each of the catalog's variants ``ids`` reading ``slots[i]`` on the matrix's rows with its
        widest row's slots ``widest[i]`` (int arrays): the profile's surfaces evaluated in one vectorised call."""
        main, tail = self._on_rows.each(self.catalog.predicted[ids], [slots, TAIL_ROWS * widest], self.scatter)
        return np.where(widest > 0, np.maximum(main, tail), main)

    @functools.cached_property
    def _on_rows(self):
        """The profile's predictions on the matrix's rows (read once per plan) and on :data:`TAIL_ROWS` rows (read
        once per profile)."""
        predictions, key = self.profile.predictions(self.dtype), ("tail rows", self.dtype)
        tail = self.profile.memo.get(key)
        if tail is None:
            tail = self.profile.memo[key] = predictions.read(TAIL_ROWS)
        return predictions.on_rows(self.m, tail)

    def has(self, variant: str) -> bool:
        """Sampled in the profile, its kernel registered and allowed (:func:`allowed`), and its format able
        to store the matrix's values."""
        return variant in self._has

    def ids(self, variants) -> np.ndarray:
        """The catalog's numbers of those of ``variants`` the matrix may use (:meth:`has`), in their order."""
        return np.array([self.catalog.position[v] for v in variants if v in self._has], dtype=np.int64)

    def work(self, groups, ids, nnz, skip=0, limit=None) -> tuple[np.ndarray, np.ndarray]:
        """:func:`flat_work` of the catalog's flat variants ``ids`` (int array) on rows whose widths ``groups``
        describes: ``(slots, tails)``; ``nnz``, ``skip`` (the int 0: none) and ``limit`` (None: none) one value or
        one per variant."""
        return self.widths(groups).work(self.catalog, ids, nnz, skip, _NO_LIMIT if limit is None else limit, self.m)

    def prefix_work(self, groups, ids, widths) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`work` of the catalog's ELL and SELL variants ``ids`` each holding a row prefix of each of ``widths``
        (rising) on rows whose widths ``groups`` describes: ``(slots, tails)``, a row of widths per variant."""
        return self.widths(groups).prefixes(self.catalog, ids, np.asarray(widths, dtype=np.int64), self.m)

    def widths(self, groups) -> _Widths:
        """The :class:`_Widths` of ``groups`` (built once per plan and rows)."""
        found = self._widths.get(id(groups))
        if found is None or found.groups is not groups:
            found = self._widths[id(groups)] = _Widths(groups)
        return found


class _Catalog:
    """The variants sampled in ``profile`` for ``dtype`` whose kernel may be planned (:func:`allowed`), in the
    variants' order, numbered by their place in :attr:`keys`: the flat ones' keys (``flat``), the others by their
    block shape (``others``, None for the diagonal formats), and of each one its format's value table
    (``max_values``, None: any values), its number in the profile's predictions and, for the flat ones, how
    :func:`flat_work` counts its slots (``kind`` of :data:`_KINDS`, -1 for the others, group ``size``, ``lanes``,
    and ``lane``, their place in :func:`_lanes_taken`).  Made once per profile (:func:`_catalog`)."""

    def __init__(self, profile, dtype: str, deterministic: bool, vendor: bool, precision):
        chosen = [v for v in _variants.VARIANTS if profile.has(v.key, dtype)
                  and allowed(v, deterministic, vendor, precision)]
        self.keys = tuple(v.key for v in chosen)
        self.position = {key: i for i, key in enumerate(self.keys)}
        self.variant = {v.key: v for v in chosen}
        self.flat = tuple(v.key for v in chosen if v.pattern == "rows")
        self.others = {}  # the other variants by their block shape (None: a diagonal format)
        for v in chosen:
            if v.pattern != "rows":
                self.others.setdefault(v.block, []).append(v)
        self.max_values = tuple(formats.get(v.format).max_values for v in chosen)
        self._limited = tuple((k, limit) for k, limit in zip(self.keys, self.max_values) if limit is not None)
        self._usable = {}
        index = profile.predictions(dtype).index
        self.predicted = np.array([index[key] for key in self.keys], dtype=np.int64)
        flat = [_flat_shape(v.key) if v.pattern == "rows" else (None, 0, 1) for v in chosen]
        self.kind = np.array([_KINDS.get(kind, -1) for kind, _, _ in flat], dtype=np.int64)
        self.size = np.array([size for _, size, _ in flat], dtype=np.int64)
        self.lanes = np.array([lanes for _, _, lanes in flat], dtype=np.int64)
        taken = {n: i for i, n in enumerate(_lanes_taken())}
        self.lane = np.array([taken.get(lanes, 0) for _, _, lanes in flat], dtype=np.int64)

    def usable(self, distinct_values: int) -> frozenset:
        """The keys whose format can store a matrix of ``distinct_values`` (zero counted; :func:`holds_values`)."""
        left_out = tuple(k for k, limit in self._limited if distinct_values > limit)
        found = self._usable.get(left_out)
        if found is None:
            found = self._usable[left_out] = frozenset(self.keys).difference(left_out)
        return found


def _catalog(profile, dtype: str, deterministic: bool, vendor: bool, precision) -> _Catalog:
    """The :class:`_Catalog` of ``profile`` for ``dtype`` and these flags (once per profile)."""
    key = ("catalog", dtype, deterministic, vendor, precision)
    found = profile.memo.get(key)
    if found is None:
        found = profile.memo[key] = _Catalog(profile, dtype, deterministic, vendor, precision)
    return found


class _Widths:
    """The row groups of one set of rows (a :class:`~.features.GroupWidths` of every size) as tables over their
    occupied widths: :meth:`padded` answers many of ``GroupWidths.padded_slots``' questions in one vectorised call,
    of every group size and each lanes of :func:`_lanes_taken` (``lane``: its place there).  Those that skip and
    cut nothing come from one product of the counts and the lane steps, those cut to a limit from running sums
    (made for the sizes and lanes asked), those that skip from one row of widths per question."""

    def __init__(self, groups):
        self.groups = groups
        sizes = sorted(groups)
        self.row = {g: i for i, g in enumerate(sizes)}
        self._row_of = np.zeros(sizes[-1] + 1, dtype=np.int64)  # a group size's row of the tables
        self._row_of[sizes] = np.arange(len(sizes))
        self.cap = groups[1].cap
        # a group's widest row is one of its rows: the widths some group has are those some row has
        self.widths = groups[1].counts[:self.cap + 1].nonzero()[0]
        self.counts = np.stack([groups[g].counts[self.widths] for g in sizes]).astype(np.int64, copy=False)
        over = np.array([(groups[g].counts[self.cap + 1], groups[g].over_sum) for g in sizes], dtype=np.int64)
        # the groups wider than the cap, by size (None: none), and their mean width
        self._past = over[:, 0] if over[:, 0].any() else None
        self._mean = over[:, 1] / np.maximum(over[:, 0], 1)
        self.widest = groups[1].max_width
        self._lanes = np.array(_lanes_taken(), dtype=np.int64)
        self._steps = -(-self.widths // self._lanes[:, None])  # lane steps of each occupied width, by lanes
        self._totals = self.counts @ self._steps.T  # lane steps of every group, by size and lanes

    def padded(self, size, lane, limit, skip) -> np.ndarray:
        """``groups[size[i]].padded_slots(_lanes_taken()[lane[i]], limit[i], skip[i])`` of every ``i`` (``size`` and
        ``lane`` int arrays, ``limit`` (:data:`_NO_LIMIT`: none) and ``skip`` (the int 0: none) one value or one per
        question), as that method computes it."""
        rows, lanes = self._row_of[size], self._lanes[lane]
        if not isinstance(skip, int) or skip:
            totals = self._each(rows, lanes, limit, skip)
        else:
            totals = self._cut(rows, lane, np.broadcast_to(limit, rows.shape))
        return self._past_cap(rows, lanes, limit, skip, totals) * lanes * size

    def _cut(self, rows, lane, limit) -> np.ndarray:
        """The lane steps of the groups of table ``rows`` up to the cap, skipping nothing, each width cut to
        ``limit`` (an int array): the widths up to it as they are, the wider ones at it."""
        totals = self._totals[rows, lane]
        at = (limit < _NO_LIMIT).nonzero()[0]
        if len(at):
            totals[at] = self._cuts(rows[at], lane[at], limit[at, None])[:, 0]
        return totals

    def _cuts(self, rows, lane, limits) -> np.ndarray:
        """The lane steps of the groups of table ``rows`` (with lanes ``lane``) up to the cap, skipping nothing,
        each width cut to each of ``limits`` (a row of limits per table row, or one row for all), from running sums
        over the occupied widths: the widths up to a limit as they are, the wider ones at it."""
        counts, lanes, n = self.counts[rows], self._lanes[lane][:, None], len(self.widths)
        upto = self.widths.searchsorted(limits, side="right")
        at = np.arange(len(rows))[:, None] * (n + 1) + upto  # in the flat tables of n + 1 columns
        steps = np.concatenate([np.zeros((len(rows), 1), np.int64), (counts * self._steps[lane]).cumsum(axis=1)], 1)
        groups = counts.cumsum(axis=1)
        wider = np.concatenate([groups[:, -1:], groups[:, -1:] - groups], axis=1)
        capped = np.where(upto < n, -(-limits // lanes), 0)
        return steps.take(at) + wider.take(at) * capped

    def _each(self, rows, lanes, limit, skip) -> np.ndarray:
        """The lane steps of the groups of table ``rows`` up to the cap, each width less ``skip`` then cut to
        ``limit``: one row of widths per question."""
        wide = np.minimum(np.maximum(self.widths - np.reshape(skip, (-1, 1)), 0), np.reshape(limit, (-1, 1)))
        return (self.counts[rows] * -(-wide // lanes[:, None])).sum(axis=1)

    def _past_cap(self, rows, lanes, limit, skip, totals) -> np.ndarray:
        """``totals`` with the groups of table ``rows`` wider than the cap added: their mean width less ``skip``,
        cut to ``limit``, lanes rounding neglected (as ``GroupWidths.padded_slots``)."""
        if self._past is None:
            return totals
        mean = np.minimum(np.maximum(self._mean[rows] - skip, 0), limit)
        return totals + (self._past[rows] * -(-mean // lanes)).astype(np.int64)

    @functools.cached_property
    def _lengths(self) -> tuple:
        """Running sums over the occupied widths (after a leading 0) of the rows' lengths and of the rows."""
        rows = self.counts[self.row[1]]
        zero = np.zeros(1, dtype=np.int64)
        return np.concatenate([zero, np.cumsum(rows * self.widths)]), np.concatenate([zero, np.cumsum(rows)])

    def covered(self, limits) -> list[int]:
        """``groups[1].covered(w)`` of every ``w`` of ``limits``: the entries of the rows' first ``w`` positions."""
        limits = np.asarray(limits, dtype=np.int64)
        entries, rows = self._lengths
        upto = self.widths.searchsorted(limits, side="right")
        got = entries[upto] + (rows[-1] - rows[upto]) * limits
        one = np.full(len(limits), self.row[1])
        return self._past_cap(one, np.ones(len(limits), dtype=np.int64), limits, 0, got).tolist()

    def widest_reached(self, rows: int) -> int:
        """The widest ``w`` up to the cap that at least ``rows`` rows reach (have ``w`` entries or more); 0: none."""
        past = 0 if self._past is None else int(self._past[self.row[1]])
        if past >= rows:
            return self.cap
        running = self._lengths[1]
        reach = (running[-1] - running[:-1] + past >= rows).nonzero()[0]
        return int(self.widths[reach[-1]]) if len(reach) else 0

    def padded_slots(self, size, lanes, limit, skip) -> list[int]:
        """``groups[size[i]].padded_slots(lanes[i], limit[i], skip[i])`` for every ``i`` (``limit[i]`` None: no
        limit), of any size and lanes: by :meth:`padded` where it takes them."""
        taken, out = {n: i for i, n in enumerate(_lanes_taken())}, []
        for g, n, w, k in zip(size, lanes, limit, skip):
            w = _NO_LIMIT if w is None else w
            if n in taken:
                got = self.padded(np.array([g]), np.array([taken[n]]), w, int(k))
            else:
                rows, n = np.array([self.row[g]]), np.array([n])
                got = self._past_cap(rows, n, w, k, self._each(rows, n, w, k)) * n * g
            out.append(int(got[0]))
        return out

    def work(self, catalog: _Catalog, ids, nnz, skip, limit, m: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`flat_work` of the ``catalog``'s flat variants ``ids`` (int array) with ``nnz`` entries, ``skip``
        (the int 0: none) and ``limit`` (:data:`_NO_LIMIT`: none), each one value or one per variant:
        ``(slots, tails)``."""
        kind, lanes = catalog.kind[ids], catalog.lanes[ids]
        if isinstance(skip, int) and not np.ndim(limit):
            widest = min(max(self.widest - skip, 0), limit)
        else:
            widest = np.minimum(np.maximum(self.widest - np.asarray(skip), 0), limit)
        padded = kind == _KINDS["rows"]
        tails = np.where(padded, lanes * -(-widest // lanes), 0)
        slots = np.where(kind == _KINDS["full_width"], m * widest, np.where(kind == _KINDS["balanced"], nnz + m, nnz))
        at = padded.nonzero()[0]
        if len(at):
            padded = ids[at]
            slots[at] = self.padded(catalog.size[padded], catalog.lane[padded], _at(limit, at), _at(skip, at))
        return slots, tails

    def prefixes(self, catalog: _Catalog, ids, widths, m: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`work` of the ``catalog``'s ELL and SELL variants ``ids`` each cut to each of ``widths`` (an int array,
        rising), skipping nothing: ``(slots, tails)``, a row of widths per variant."""
        widest = np.minimum(self.widest, widths)
        lanes = catalog.lanes[ids][:, None]
        padded = catalog.kind[ids] == _KINDS["rows"]
        tails = np.where(padded[:, None], lanes * -(-widest // lanes), 0)
        slots = np.repeat((m * widest)[None, :], len(ids), axis=0)  # ELL: m rows as wide as the prefix
        at = padded.nonzero()[0]
        if len(at):
            size, lane = catalog.size[ids[at]], catalog.lane[ids[at]]
            rows, lanes = self._row_of[size], lanes[at]
            totals = self._past_cap(rows[:, None], lanes, widths, 0, self._cuts(rows, lane, widths[None, :]))
            slots[at] = totals * lanes * size[:, None]
        return slots, tails


def _at(values, at):
    """``values[at]``, or ``values`` itself where it is one value for every question."""
    return values[at] if np.ndim(values) else values


_FLAT_SHAPES: dict = {}
#: A row-prefix limit no row reaches (none).
_NO_LIMIT = np.iinfo(np.int64).max
#: The flat kernels' walks (``KernelSpec.walk``) as the numbers of the vectorised tables (:class:`_Catalog`,
#: :meth:`_Widths.work`).
_KINDS = {"entries": 0, "balanced": 1, "full_width": 2, "rows": 3}


@functools.cache
def _lanes_taken() -> tuple:
    """The lanes per row of the padded flat variants, and 1 (the rows' own lengths: covered entries), rising (the
    registry is fixed once loaded)."""
    return tuple(sorted({n for walk, _, n in map(_flat_shape, _variants.keys()) if walk == "rows"} | {1}))


def _flat_shape(key: str) -> tuple:
    """How :func:`flat_work` counts flat variant ``key``'s slots: ``(walk, group size, lanes)``, ``walk`` its
    kernel's (``KernelSpec.walk``): ``rows`` (rows padded in groups of that size), ``full_width`` (every row as wide
    as the widest), ``balanced`` (``nnz + m``) or ``entries``."""
    found = _FLAT_SHAPES.get(key)
    if found is None:
        v = _variants.get(key)
        spec = kernels.get(v.kernel)
        group = spec.group_rows(v.kernel_params, v.format_params) if spec.walk == "rows" else 0
        found = _FLAT_SHAPES[key] = (spec.walk, group, int(v.kernel_params.get("threads_per_row", 1)))
    return found


def flat_work(v, groups, nnz: int, m: int, skip: int = 0, limit: int | None = None) -> tuple[int, int]:
    """``(slots, tail)`` of flat variant ``v``: the value slots it steps through (lanes' padding
    included) and the slots of its widest row (0 when no row waits on its longest one).

    ``skip`` entries of every row are taken by an earlier part, ``limit`` keeps a row prefix.
    """
    walk, group, lanes = _flat_shape(v.key)
    widest = max(groups[1].max_width - skip, 0)
    if limit is not None:
        widest = min(widest, limit)
    if walk == "rows":  # a group of rows padded to its longest: a warp covers 32 / lanes rows of csr_vector
        return groups[group].padded_slots(lanes, limit, skip), lanes * -(-widest // lanes)
    if walk == "full_width":
        return m * widest, 0
    if walk == "balanced":  # balanced over rows and nonzeros
        return nnz + m, 0
    return nnz, 0  # COO


def diagonal_slots(kernel: str, offsets, m: int) -> int:
    """Slots a diagonal kernel steps through for the diagonals ``offsets`` (sorted) of ``m`` rows: ``m``
    per diagonal, and for ``bdia``, which stages each band's slice of ``x`` (about ``m`` values) in
    shared memory, ``m`` more per band past the first (the profile's band pattern has one band)."""
    k = len(offsets)
    if kernel != "bdia" or k < 2:
        return k * m
    firsts, _ = bdia_bands(np.asarray(offsets, dtype=np.int64), np.int64)  # BDIA's own split into bands
    return (k + len(firsts) - 1) * m


def holds_values(v, features: Features) -> bool:
    """Whether variant ``v``'s format can store the matrix's distinct values: always, except for a
    format with a value table (DIA-VI: 256), which must hold them and zero (its padding)."""
    limit = formats.get(v.format).max_values
    return limit is None or features.distinct_values <= limit


def work(v, features: Features) -> tuple[int, int] | None:
    """``(slots, tail)`` of variant ``v`` holding the whole matrix (see :func:`flat_work`); None for
    a block shape the features left out, a diagonal format past MAX_SLOTS_PER_ENTRY, or a format
    whose value table cannot hold the matrix's values (:func:`holds_values`).

    ``cocktail calibrate`` records its samples against these same slots, so that a prediction
    on the calibration matrices reproduces the measured time.
    """
    if not holds_values(v, features):
        return None
    return _work(v, features)


def _work(v, features: Features) -> tuple[int, int] | None:
    """:func:`work` of a variant whose format holds the matrix's values."""
    m = features.shape[0]
    if v.pattern == "rows":
        return flat_work(v, features.groups, features.nnz, m)
    if v.pattern == "band":
        if len(features.diagonal_counts) * m > MAX_SLOTS_PER_ENTRY * max(features.nnz, 1):
            return None  # m slots per diagonal at least: never a single (a graph's 10^5-10^6 diagonals)
        return diagonal_slots(v.kernel, features.diagonal_counts.offsets, m), 0
    b = features.blocks.get(v.block)
    if b is None:  # left out of the features: its fill is past any limit
        return None
    r, c = v.block
    if v.format == "bcsr":
        return b.total * r * c, b.max_per_superrow * c
    if v.format == "bell":
        return b.max_per_superrow * -(-m // r) * r * c, 0
    return b.sliced_total * r * c, b.max_per_superrow * c


def allowed(v, deterministic: bool = False, vendor: bool = True, precision: str | None = None) -> bool:
    """Whether variant ``v``'s kernel is registered and may be planned: with ``deterministic``, only a
    deterministic one at the variant's parameters; without ``vendor``, only one of our own; for ``precision``
    (a kernel precision name, :func:`cocktail.kernels.spec.precision_name`), only one instantiated for it."""
    from .. import kernels

    if v.kernel not in kernels.names():
        return False
    spec = kernels.get(v.kernel)
    if precision is not None and precision not in spec.precisions:
        return False
    return (not deterministic or spec.is_deterministic(v.kernel_params)) and (vendor or not spec.vendor)
