"""The online planner behind ``format="auto"``: clSpMV's greedy policies over a device profile.

Given a matrix's :mod:`features <.features>` and the device :mod:`profile <.profile>`, the
planner builds candidate plans, predicts each one's time, and picks the fastest (Su & Keutzer
§3.3).  A plan is a list of parts, each a format holding a share of the entries with one
kernel variant; a plan of one part is a single format, more parts make a Cocktail.

A part's predicted time (:mod:`.cost_model`) is the profile's time for its variant at the part's rows and value
slots (padding included), never less than its launches times the profile's cost of one launch.
For the flat variants the profile blends its samples on adjacent and on scattered columns by
the matrix's ``x_scatter`` (how far apart its gathers of ``x`` are; the same for every part).
A kernel that gives a row (or a slice, or a super-row) to one thread or one warp also cannot
finish before its widest row does: its prediction is at least the profile's time of
:data:`TAIL_ROWS` rows that wide.  A plan's time is the sum over its parts, so a small matrix,
whose parts are each worth little more than a launch, keeps a one-launch plan.

The policies (their thresholds are here; the cost model's, :data:`TAIL_ROWS` and :data:`MAX_SLOTS_PER_ENTRY`,
in :mod:`.cost_model`; the races', in :mod:`.candidates`):

- **Singles**: every sampled variant on the whole matrix, the padded formats only while they
  store at most :data:`MAX_SLOTS_PER_ENTRY` slots per entry, the block formats only while they
  read fewer bytes than CSR (:func:`block_fill_limit`).  A format with a value table (DIA-VI)
  is costed only for a matrix whose distinct values (zero included) fit it (:func:`holds_values`).
- **Dense diagonals** (DIA, BDIA or DIA-VI part): a diagonal with ``e_d`` entries is dense when
  ``e_d > n_d * g_f / g_d``, with ``n_d`` the ``m`` slots DIA stores for it (``g_f``, ``g_d``: the best flat and diagonal slot
  rates at this size).  The diagonal part is tried when the dense diagonals hold at least
  :data:`MIN_PART_SHARE` of the entries.
- **ELL/SELL width** (row-prefix part): clSpMV's rule, the largest ``w`` with
  ``(z(w) + e(w)) / g_ELL < e(w) / m_c`` (``z``: padding, ``e``: entries covered, ``m_c``: the
  CSR/COO rate on what remains), and Bell & Garland's HYB width (``tuning.hyb``); each width
  is costed as a whole plan.
- **CSR against COO** for the remainder: the load balance of CSR enters its slots (a warp
  waits for its longest row) and its tail (the longest row alone); COO's atomic kernel takes
  Flegar & Anzt's ω (``tuning.kernel_rules.coo_omega``).
- **Merging small parts**: a plan with a part is kept only if it is predicted faster than the
  same plan without it (every subset is costed).
- **Deterministic plans** (``deterministic=True``): only variants whose kernel is declared
  deterministic are costed (coo_atomic is left out, so COO parts use coo_segmented; of cuSPARSE
  only algorithm 2).
- **The vendor's kernels** (cuSPARSE's CSR and COO algorithms, ``cusparse_csr`` and
  ``cusparse_coo``) are candidates like ours, as singles and as a Cocktail's CSR or COO part;
  ``vendor=False`` plans with our own kernels only.
- **The pattern cut** (a matrix whose entries all hold one value): every part whose format has a
  pattern form its kernel multiplies (CSR's csr_pattern) is stored that way, lossless, and its
  prediction scaled by :func:`pattern_share` of the bytes.
- **The coded cut** (a matrix of more than one and at most 256 distinct values, zero counted, while :data:`CODED_CUT`
  is on): likewise every part whose format has a coded form its kernel multiplies (CSR's csr_vi, a
  one-byte code per entry), its prediction scaled by :func:`coded_share` (measured, float32 and float64
  only); once the cut is made, the plans the matrix would have raced without it race too.

The block formats (BCSR, BELL, SBELL) are costed as singles, with the block counts of the
features; they do not enter a Cocktail as a part.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .. import formats
from ..precision import sampled_dtype
from . import variants as _variants
from .candidates import Part, Plan, Planning
from .cost_model import MAX_SLOTS_PER_ENTRY, _Costing, _Widths, _work, diagonal_slots
from .features import Features, row_groups
from ..tuning.hyb import ELL_SPEEDUP_OVER_COO

# Names that moved to .candidates and .cost_model, still read from here by tests and scripts.
from .candidates import MEASURE_TOP, _family, _kind  # noqa: F401
from .cost_model import TAIL_ROWS, _NO_LIMIT, _catalog, flat_work, holds_values, work  # noqa: F401

#: A diagonal or row-prefix part must hold at least this share of the entries.
MIN_PART_SHARE = 0.05
#: The CSR kernels and COO kernels the remainder of a Cocktail may use.
CSR_VARIANTS = _variants.of_format("csr")
COO_VARIANTS = _variants.of_format("coo")
DIAGONAL_VARIANTS = _variants.on_pattern("band")
#: Whether the planner applies the coded cut (module docstring), predicted by :data:`CODED_TIME_SHARE` and raced
#: against the race run without the cut (:meth:`Planning.uncut_rivals`); docs/benchmarks.md, "Fewer bytes: a
#: one-byte code per entry", has the measurement against the planner without it.
CODED_CUT = True
#: The formats whose parts the planner stores with 16-bit columns where they fit (``short_columns`` unset), when
#: the part's kernel reads them: SELL's (measured on an H100: 1.00-1.03x).  csr_pattern and csr_vi take them
#: too (csr_stream reads them), left out: no gain measured (H200, 083f81f: 1.000x with the coded cut).
SHORT_COLUMNS_CUT = ("sell",)
#: Formats with a rows-prefix selector part.
PREFIX_FORMATS = ("ell", "sell")
#: Row-prefix parts are costed for ELL and for this many SELL variants (the best as singles).
PREFIX_SELL_VARIANTS = 4


def block_fill_limit(dtype, index_dtype=np.int32) -> float:
    """The most value slots per entry a block format can store and still read fewer bytes than CSR.

    A block slot costs at least a value; a CSR entry a value and an index: ``(val + idx) / val``
    (1.5 for float64 with int32 indices, 2.0 for float32).
    """
    val, idx = np.dtype(dtype).itemsize, np.dtype(index_dtype).itemsize
    return (val + idx) / val


class PlannerNotice(UserWarning):
    """``format="auto"`` could not plan (no device profile for this GPU and dtype) and used a fixed rule."""


def entry_share(dtype, index_dtype, value_dtype=None, pattern: bool = False, coded: bool = False) -> float:
    """The share of the bytes the profile's samples move (index, value and read of ``x`` per entry, Bell &
    Garland's count, in :func:`~cocktail.precision.sampled_dtype`) that an entry of a ``dtype`` matrix moves with its
    values stored in ``value_dtype`` (default ``dtype``), none (``pattern``) or a one-byte code (``coded``):
    float64 with float32 values and int32 indices 0.8, float16 0.67, pattern-only float64 0.6, coded float64
    0.65, complex128 1.8."""
    full, idx = sampled_dtype(dtype).itemsize, np.dtype(index_dtype).itemsize
    stored = 0 if pattern else 1 if coded else np.dtype(dtype if value_dtype is None else value_dtype).itemsize
    return (idx + stored + np.dtype(dtype).itemsize) / (idx + 2 * full)


def pattern_share(dtype, index_dtype, value_dtype=None) -> float:
    """The share of its bytes a flat part still moves stored pattern-only rather than with its values
    (:func:`entry_share`; float64 with int32 indices: 0.6)."""
    return entry_share(dtype, index_dtype, pattern=True) / entry_share(dtype, index_dtype, value_dtype)


def scaled(plan: Plan, share: float) -> Plan:
    """``plan`` with every part's prediction scaled by ``share``."""
    if share == 1.0:
        return plan
    parts = tuple(replace(p, predicted_us=p.predicted_us * share) for p in plan.parts)
    return Plan(parts, sum(p.predicted_us for p in parts))


#: csr_vi's kernel time over csr's, per dtype: the geometric mean over csr_scalar, csr_vector and csr_stream on
#: the williams and cocktail suites with 16 distinct values (scripts/coded_share_fit.py over
#: docs/benchmarks/2026-11-27-h200-coded/kernels_few_dac09f1.json.gz; H200).  The byte model (:func:`entry_share`
#: with a one-byte code) predicts 0.65 in float64 and 0.75 in float32 with int32 indices; the table lookup, one
#: more dependent load per entry, takes most of that back.  The coded cut is made in these dtypes only.  A change
#: here changes decisions: bump ``decisions.PLANNER_VERSION`` with it.
CODED_TIME_SHARE = {"float64": 0.86, "float32": 0.99}


def coded_share(dtype, value_dtype=None) -> float | None:
    """The share of its time a flat part still takes stored with a one-byte code per entry rather than its
    values (:data:`CODED_TIME_SHARE`), or None where that was not measured: another dtype, or values stored
    narrower than ``dtype`` (``value_dtype``)."""
    if value_dtype is not None and np.dtype(value_dtype) != np.dtype(dtype):
        return None
    return CODED_TIME_SHARE.get(np.dtype(dtype).name)


#: The cuts :func:`value_cut` makes: the format class's attribute naming the form, and the ``Part`` flag.
CUTS = {"pattern": "pattern_format", "coded": "coded_format"}


def value_cut(plan: Plan, share: float, cut: str = "pattern") -> Plan:
    """``plan`` with every part whose format has a ``cut`` form (:data:`CUTS`: ``"pattern"`` or ``"coded"``) that
    its kernel multiplies stored that way (``Part.pattern``, ``Part.coded``), the part's prediction scaled by
    ``share`` (:func:`pattern_share`, :func:`coded_share`); ``plan`` itself when no part has one.  The pattern
    cut for a matrix whose entries all hold one value only; the coded cut for one of at most the coded
    format's ``max_values``."""
    if not any(_takes_cut(p.variant, cut) for p in plan.parts):
        return plan
    parts = tuple(replace(p, predicted_us=p.predicted_us * share, **{cut: True}) if _takes_cut(p.variant, cut) else p
                  for p in plan.parts)
    return Plan(parts, sum(p.predicted_us for p in parts))


_CUT_FORMS: dict = {}


def _takes_cut(variant: str, cut: str) -> bool:
    """Whether a part of ``variant`` is stored in its format's ``cut`` form (:data:`CUTS`): the format has one and
    the variant's kernel multiplies it (the registries are fixed once loaded: memoised)."""
    found = _CUT_FORMS.get((variant, cut))
    if found is None:
        from .. import kernels

        v = _variants.get(variant)
        form = getattr(formats.get(v.format), CUTS[cut])
        found = _CUT_FORMS[(variant, cut)] = form is not None and form in kernels.get(v.kernel).formats
    return found


def coded_limit() -> int:
    """The most distinct values (zero counted among them) the coded forms of the formats hold: csr_vi's 256."""
    coded = [formats.get(f).coded_format for f in formats.names() if formats.get(f).coded_format]
    return min((formats.get(f).max_values for f in coded), default=0)


def takes_coded_cut(one_value: bool, distinct_values: int, dtype, value_dtype=None) -> bool:
    """Whether the planner stores a matrix coded: :data:`CODED_CUT` is on, its entries hold more than one value
    (else the pattern cut), its ``distinct_values`` (zero counted) fit :func:`coded_limit` and the cut's time
    was measured in its dtype (:func:`coded_share`)."""
    return (CODED_CUT and not one_value and distinct_values <= coded_limit()
            and coded_share(dtype, value_dtype) is not None)


def _flat_variants(c: _Costing, formats) -> list[str]:
    return [v.key for v in _variants.VARIANTS if v.format in formats and c.has(v.key)]


def _best(options):
    options = [o for o in options if o is not None]
    return min(options, key=lambda o: o[-1]) if options else None


def _cheapest(keys, slots, times):
    """``(variant, slots, µs)`` of the fastest of ``keys`` (the first of equals) reading ``slots`` in ``times``."""
    i = min(range(len(keys)), key=times.__getitem__)
    return keys[i], slots[i], times[i]


def _costed(c: _Costing, works) -> list:
    """``(slots, µs)`` arrays of each ``(ids, slots, tails)`` of ``works`` (the catalog's variants and their
    :meth:`_Costing.work`), every one costed in one vectorised call."""
    asked = [work for work in works if len(work[0])]
    if not asked:
        return [(work[1], np.zeros(0)) for work in works]
    ids, slots, tails = (a[0] if len(a) == 1 else np.concatenate(a) for a in zip(*asked))
    times, out, at = c.costs(ids, slots, tails), [], 0
    for work in works:
        out.append((work[1], times[at:at + len(work[0])]))
        at += len(work[0])
    return out


def _whole_matrix(c: _Costing, features: Features) -> dict:
    """``{variant: (slots, µs)}`` of every sampled variant holding the whole matrix, however much it
    pads (block shapes the features left out are missing), in the variants' order: one vectorised call."""
    flat, other = [key for key in c.catalog.flat if c.has(key)], []
    for shape in (None, *features.blocks):  # the diagonal formats, then the blocks the features kept
        for v in c.catalog.others.get(shape, ()):
            got = _work(v, features) if c.has(v.key) else None  # c.has: its format holds the values
            if got is not None:
                other.append((v.key, *got))
    keys = flat + [k for k, _, _ in other]
    if not keys:
        return {}
    ids = c.ids(keys)
    slots, tails = c.work(features.groups, ids[:len(flat)], features.nnz)
    slots = np.concatenate([slots, np.array([s for _, s, _ in other], dtype=np.int64)])
    times = c.costs(ids, slots, np.concatenate([tails, np.array([t for _, _, t in other], dtype=np.int64)]))
    order = ids.argsort().tolist()
    return dict(zip([keys[i] for i in order], zip(slots[order].tolist(), times[order].tolist())))


def _singles(c: _Costing, whole: dict, nnz: int) -> list[Plan]:
    """The single-format plans: padded formats within MAX_SLOTS_PER_ENTRY, block formats within
    :func:`block_fill_limit`."""
    limit = MAX_SLOTS_PER_ENTRY * max(nnz, 1)
    block_limit = block_fill_limit(c.dtype) * max(nnz, 1)
    out = []
    for key, (slots, t) in whole.items():
        v = c.catalog.variant[key]
        if v.format not in ("csr", "coo") and slots > limit:
            continue
        if v.pattern == "blocks" and slots > block_limit:
            continue
        out.append(Plan((Part.planned(key, ("rest",), nnz, slots, t),), t))
    return out


def _dense_diagonals(c: _Costing, features: Features, g_flat: float):
    """Offsets of the dense diagonals by clSpMV's rule and the best diagonal variant for them."""
    diags = features.diagonal_counts
    if not len(diags) or g_flat <= 0:
        return None
    fuller = _FullerDiagonals(diags)
    half_full, _ = fuller.select(0.5 * c.m, strict=False)
    picked = half_full if len(half_full) else np.array([diags.lowest()], np.int64)
    chosen = None
    for _ in range(2):  # the diagonal rate depends on how many diagonals: settle it twice
        k = len(picked)
        best = _best([(v, c.time(v, diagonal_slots(_variants.get(v).kernel, picked, c.m)))
                      for v in DIAGONAL_VARIANTS if c.has(v)])
        if best is None:
            return None
        g_diag = k * c.m / best[1]
        picked, counts = fuller.select(c.m * (g_flat / g_diag))  # DIA stores m slots for every diagonal, however short
        if not len(picked):
            return None
        chosen = (picked, int(counts.sum()), best[0])
    return chosen


class _FullerDiagonals:
    """The diagonals holding more entries than a bound, among a matrix's occupied diagonals: a graph or an LP
    occupies 10^5-10^6 diagonals, few or none of them near the ``m`` entries the rule asks, so their largest count
    answers most questions without a pass, and a later bound no lower than an earlier one filters its answer."""

    def __init__(self, diagonals):
        """``diagonals``: the matrix's :class:`~.features.DiagonalCounts` (asked only when a bound is under its
        largest count)."""
        self.diagonals, self.most = diagonals, diagonals.most()
        self.asked, self.found = None, None  # an answered (bound, strict) and its answer

    def select(self, bound: float, strict: bool = True):
        """``(offsets, counts)`` (offsets rising) of the diagonals with more than (``strict``) or at least ``bound``
        entries."""
        if self.most < bound or (strict and self.most == bound):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if self.asked is not None and (bound, strict) >= self.asked:  # within the answer to a lower bound
            offsets, counts = self.found
            keep = counts > bound if strict else counts >= bound
            return offsets[keep], counts[keep]
        self.asked, self.found = (bound, strict), self.diagonals.fuller(bound, strict)
        return self.found


#: Threads per block of the rest_rows kernel (a tile of rows each, as features_rows), and the widths whose groups it
#: counts in shared memory (wider ones go to global memory).
_REST_BLOCK = 256
_REST_SHARED_WIDTHS = 512


def _rest_groups(csr, offsets, max_row: int, launcher=None):
    """Row groups of the entries not on the diagonals ``offsets`` (sorted) of ``csr``, whose rows are at most
    ``max_row`` long, computed on the matrix's device: on a GPU one pass of the rest_rows kernel and one transfer.
    ``launcher``: the features' launcher protocol (``feature_launch._CupyLauncher``), to run the kernel elsewhere."""
    from ..arrays import get_xp

    xp = get_xp(csr.indptr)
    m = int(csr.shape[0])
    if xp is np and launcher is None:
        from ..arrays import entry_rows
        from ..formats.cocktail import on_diagonals

        rows = entry_rows(csr)
        return row_groups(np.diff(csr.indptr) - np.bincount(rows[on_diagonals(csr, offsets, rows)], minlength=m))
    from . import features as _features
    from .feature_launch import _CupyLauncher

    launch = launcher or _CupyLauncher()
    levels = len(_features.GROUP_SIZES)
    cap = min(int(max_row), _features.WIDTH_CAP)  # the rest's rows are no longer: its cap is at most this
    shared_widths = min(_REST_SHARED_WIDTHS, cap + 1)
    out = xp.zeros(1 + levels * (cap + 3), dtype=np.uint64)  # longest, over[levels], counts[levels][cap + 2]
    index = "int" if csr.indptr.dtype == np.int32 else "long long"
    launch("rest_rows", f"rest_rows<{index}>", m, _REST_BLOCK,
           (csr.indptr, csr.indices, np.int64(m), xp.asarray(offsets, dtype=np.int64), np.int32(len(offsets)),
            np.int32(levels), np.int32(cap), np.int32(shared_widths), out[:1], out[1:1 + levels], out[1 + levels:]),
           shared=4 * levels * shared_widths)
    host = launch.fetch(out).view(np.uint64).astype(np.int64)
    longest, over, counts = int(host[0]), host[1:1 + levels], host[1 + levels:].reshape(levels, cap + 2)
    return _features.groups_from_counts(counts, over, longest)


#: The row-prefix widths clSpMV's rule tries (those below the widest row).
PREFIX_WIDTHS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def _bell_garland_width(m: int, widths: _Widths) -> int:
    """Bell & Garland's HYB width: the widest K that a third of the ``m`` rows reach (0: none), from the rows'
    lengths (``widths``)."""
    return widths.widest_reached(max(1, math.ceil(m / ELL_SPEEDUP_OVER_COO)))


def _prefix_widths(widest: int, k: int, tried: list, candidate, times, covered, m_c: float) -> list[set]:
    """Row-prefix widths to cost for each prefix variant: Bell & Garland's ``k`` and clSpMV's rule, the largest
    of the ``tried`` widths that are candidates (``candidate``, a mask of them) whose slots at the prefix rate (the
    variant's row of ``times``: µs at each width tried) beat the entries it covers (``covered``, at each) at the
    remainder's rate ``m_c``."""
    if widest <= 1:
        return [set() for _ in range(len(times))]
    out = []
    for beats in (candidate & (covered > 0) & (times < covered / m_c)).tolist():
        widths = {k} if 0 < k < widest else set()
        best = max((w for w, beat in zip(tried, beats) if beat), default=0)
        if best:
            widths.add(best)
        out.append(widths)
    return out


class _HeadSearch:
    """The row-prefix search after one head (:func:`_head_plans`) for the ``left`` entries whose rows ``groups``
    describes: the widths it tries, then the prefixes it keeps, then the plans they make."""

    def __init__(self, c: _Costing, head: tuple, groups, left: int):
        self.head, self.groups, self.left = head, groups, left
        self.widths = c.widths(groups)
        self.widest = widest = groups[1].max_width
        self.candidates = [w for w in PREFIX_WIDTHS if w < widest] if widest > 1 else []
        self.k = _bell_garland_width(c.m, self.widths) if widest > 1 else 0
        self.tried = sorted(set(self.candidates) | ({self.k} if 0 < self.k < widest else set()))

    def prefixes(self, c: _Costing, ids) -> tuple:
        """The costing's work (:func:`_costed`) of each of the variants ``ids`` at each width tried."""
        slots, tails = c.prefix_work(self.groups, ids, self.tried)
        return np.repeat(ids, len(self.tried)), slots.ravel(), tails.ravel()

    def keep(self, rest: tuple, prefix_variants, slots, times, nnz: int):
        """Keep the ``(variant, width)`` prefixes :func:`_prefix_widths` picks that hold at least MIN_PART_SHARE of
        the ``nnz`` entries and leave some (``chosen``, their ``(slots, µs)`` in ``pre``, their widths ``kept``):
        ``rest``, the cheapest remainder on every entry left, and each prefix's ``slots`` and ``times`` at each
        width tried (a row per variant of ``prefix_variants``) decide."""
        self.rest, covered = rest, self.widths.covered(self.tried)
        self.covered = dict(zip(self.tried, covered))
        candidate = np.array([w in self.candidates for w in self.tried], dtype=bool)
        picked = _prefix_widths(self.widest, self.k, self.tried, candidate, times, np.array(covered, dtype=np.int64),
                                self.left / rest[2])
        self.chosen = [(v, w) for v, widths in zip(prefix_variants, picked) for w in widths
                       if MIN_PART_SHARE * nnz <= self.covered[w] < self.left]
        row, column = {v: i for i, v in enumerate(prefix_variants)}, {w: j for j, w in enumerate(self.tried)}
        slots, times = slots.tolist(), times.tolist()
        self.pre = {(v, w): (slots[row[v]][column[w]], times[row[v]][column[w]]) for v, w in self.chosen}
        self.kept = list(dict.fromkeys(w for _, w in self.chosen))

    def after(self, c: _Costing, rest) -> tuple:
        """The costing's work of the variants ``rest`` on the entries left after a prefix of each width kept."""
        if not self.kept:
            return rest[:0], rest[:0], rest[:0]
        covered = np.array([self.covered[w] for w in self.kept], dtype=np.int64)
        ids, n = np.concatenate([rest] * len(self.kept)), len(rest)
        return (ids, *c.work(self.groups, ids, np.repeat(self.left - covered, n),
                             np.repeat(np.array(self.kept, dtype=np.int64), n)))

    def plans(self, keys: list, slots: list, times: list) -> list[Plan]:
        """``head`` and the remainder on every entry left (when ``head`` has a part), then ``head``, each prefix
        kept and the cheapest of ``keys`` on the entries it leaves (their ``slots`` and ``times``, width by width
        kept)."""
        n, out = len(keys), []
        if self.head:
            rest = self.rest
            out.append(Plan(self.head + (Part.planned(rest[0], ("rest",), self.left, rest[1], rest[2]),),
                            sum(p.predicted_us for p in self.head) + rest[2]))
        afters = {w: _cheapest(keys, slots[i * n:(i + 1) * n], times[i * n:(i + 1) * n])
                  for i, w in enumerate(self.kept)}
        for variant, w in self.chosen:
            (held, t), after = self.pre[(variant, w)], afters[w]
            parts = self.head + (
                Part.planned(variant, ("row_prefix", int(w)), self.covered[w], held, t, {"max_fill": None}),
                Part.planned(after[0], ("rest",), self.left - self.covered[w], after[1], after[2]))
            out.append(Plan(parts, sum(p.predicted_us for p in parts)))
        return out


def _head_plans(c: _Costing, heads, nnz: int, prefix_variants, whole: dict) -> list[Plan]:
    """The plans that start with each ``(head, groups, left)`` of ``heads`` (no part, or the diagonal part) for the
    ``left`` entries whose rows ``groups`` describes: ``head`` and CSR or COO (when ``head`` has a part), and
    ``head``, a row-prefix part of one of ``prefix_variants`` at each width :func:`_prefix_widths` picks and CSR or
    COO for the rest.  The remainders and every prefix at every width of every head are costed in one vectorised
    call, the remainders after the prefixes kept in another; after no part, the remainder on every entry is the
    whole matrix's single (``whole``, :func:`_whole_matrix`)."""
    keys = [v for v in CSR_VARIANTS + COO_VARIANTS if c.has(v)]
    if not keys:
        return []
    rest_ids, prefix_ids = c.ids(keys), c.ids(prefix_variants)
    searches, works = [_HeadSearch(c, *h) for h in heads], []
    for s in searches:
        if s.head:
            works.append((rest_ids, *c.work(s.groups, rest_ids, s.left)))
        works.append(s.prefixes(c, prefix_ids))
    got = iter(_costed(c, works))
    for s in searches:
        if s.head:
            rest = _cheapest(keys, *(a.tolist() for a in next(got)))
        else:
            rest = _cheapest(keys, [whole[k][0] for k in keys], [whole[k][1] for k in keys])
        s.keep(rest, prefix_variants, *(a.reshape(len(prefix_ids), len(s.tried)) for a in next(got)), nnz)
    got = _costed(c, [s.after(c, rest_ids) for s in searches])
    return [p for s, (slots, times) in zip(searches, got) for p in s.plans(keys, slots.tolist(), times.tolist())]


def plan(csr, features: Features, profile, dtype, deterministic: bool = False, vendor: bool = True) -> Planning:
    """Candidate plans for the canonical CSR ``csr`` with these ``features``, fastest predicted first;
    ``deterministic``: only plans whose every kernel is declared deterministic; ``vendor=False``: only
    our own kernels (no cuSPARSE)."""
    from ..kernels.spec import precision_name

    value_dtype = csr.value_dtype if csr.value_dtype != csr.dtype else dtype  # narrower storage, or dtype's own
    c = _Costing(features, profile, dtype, deterministic, vendor, precision_name(dtype, value_dtype))
    nnz, m = features.nnz, c.m
    if not nnz:
        raise ValueError("the planner needs a matrix with entries (one without is stored as csr)")
    whole = _whole_matrix(c, features)
    singles = _singles(c, whole, nnz)
    if not singles:
        raise ValueError(f"the device profile ({profile.source}) has no samples for {np.dtype(dtype).name}")
    flats = [p for p in singles if c.catalog.variant[p.parts[0].variant].pattern == "rows"]  # category "flat"
    g_flat = nnz / min(p.predicted_us for p in flats) if flats else 0.0
    plans = list(singles)
    # SELL variants ranked by their time on the whole matrix, however much they would pad.
    sells = sorted((k for k in whole if c.catalog.variant[k].format == "sell"), key=lambda k: whole[k][1])
    prefix_variants = _flat_variants(c, ("ell",)) + sells[:PREFIX_SELL_VARIANTS]

    # The diagonal part (or none), then the row-prefix part (or none), then CSR/COO for the rest.
    heads = [((), features.groups, nnz)]
    diag = _dense_diagonals(c, features, g_flat)
    if diag is not None and diag[1] >= MIN_PART_SHARE * nnz:
        offsets, taken, variant = diag
        slots = diagonal_slots(_variants.get(variant).kernel, offsets, m)
        t = c.time(variant, slots)
        part = Part(variant, ("diagonals", tuple(int(o) for o in offsets)), taken, slots, t,
                    {"max_fill": None})
        heads.append(((part,), _rest_groups(csr, offsets, features.max_row) if taken < nnz else None,
                      nnz - taken))
    heads = [h for h in heads if h[2]]  # none left: the diagonal part holds everything, the diagonal single
    plans += _head_plans(c, heads, nnz, prefix_variants, whole)
    share = entry_share(dtype, csr.index_dtype, value_dtype)  # a half matrix, or values stored narrower
    if share != 1.0:
        plans = [scaled(p, share) for p in plans]
    uncut = []
    if features.one_value:
        share = pattern_share(dtype, csr.index_dtype, value_dtype)
        plans = [value_cut(p, share, "pattern") for p in plans]
    elif takes_coded_cut(features.one_value, features.distinct_values, dtype, value_dtype):
        uncut = sorted(plans, key=lambda p: p.predicted_us)
        share = coded_share(dtype, value_dtype)
        plans = [value_cut(p, share, "coded") for p in plans]
    plans.sort(key=lambda p: p.predicted_us)
    return Planning(features, plans, profile.source, profile.notice, uncut)
