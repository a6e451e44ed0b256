"""The online planner behind ``format="auto"``: clSpMV's greedy policies over a device profile.

Given a matrix's :mod:`features <.features>` and the device :mod:`profile <.profile>`, the
planner builds candidate plans, predicts each one's time, and picks the fastest (Su & Keutzer
§3.3).  A plan is a list of parts, each a format holding a share of the entries with one
kernel variant; a plan of one part is a single format, more parts make a Cocktail.

A part's predicted time is the profile's time for its variant at the part's rows and value
slots (padding included), never less than its launches times the profile's cost of one launch.
For the flat variants the profile blends its samples on adjacent and on scattered columns by
the matrix's ``x_scatter`` (how far apart its gathers of ``x`` are; the same for every part).
A kernel that gives a row (or a slice, or a super-row) to one thread or one warp also cannot
finish before its widest row does: its prediction is at least the profile's time of
:data:`TAIL_ROWS` rows that wide.  A plan's time is the sum over its parts, so a small matrix,
whose parts are each worth little more than a launch, keeps a one-launch plan.

The policies (all thresholds of the planner are here):

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
from dataclasses import dataclass, field, replace

import numpy as np

from .. import formats
from ..formats.bdia import bands as bdia_bands
from ..precision import sampled_dtype
from . import variants as _variants
from .features import Features, row_groups
from ..tuning.hyb import ELL_SPEEDUP_OVER_COO

#: The padded formats are costed only while storing at most this many value slots per entry.
MAX_SLOTS_PER_ENTRY = 3.0
#: A diagonal or row-prefix part must hold at least this share of the entries.
MIN_PART_SHARE = 0.05
#: Rows of the tail sample: a warp-or-thread-per-row kernel takes at least this many rows' time.
TAIL_ROWS = 1024
#: Candidate plans ``tune="measure"`` times on the matrix (and the best of each kind besides).
MEASURE_TOP = 3
#: ``tune="model"`` times its plan against the vendor's single kernels on the matrix when they are
#: predicted within this factor of the plan's time, at most VENDOR_RIVALS of them: the profile's
#: synthetic patterns miss what some matrices do (measured over predicted time of the benchmark's
#: plans: median 1.03, a few at 1.8-2.8), and a race costs a few products.
VENDOR_RACE_WITHIN = 2.0
VENDOR_RIVALS = 2
#: The race also times plans of our own when predicted within this factor: the fastest of each family
#: other than the plan's (:func:`_family`: flat, block or diagonal by the kernel that holds most of
#: the entries), since a family whose synthetic samples miss a matrix's pattern is mispredicted as
#: a whole (its formats, variants and the Cocktails it leads alike), and the fastest of another
#: kind (:func:`_kind`) of the plan's own family, since formats of one family still differ.
OWN_RACE_WITHIN = 1.5
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


@dataclass(frozen=True)
class Part:
    """One part of a plan: a format and kernel variant holding ``nnz`` entries in ``slots`` value slots."""

    variant: str
    selector: tuple
    nnz: int
    slots: int
    predicted_us: float
    format_params: dict = field(default_factory=dict, compare=False)
    #: Stored with no value per entry (the pattern cut): in the pattern form of the variant's format.
    pattern: bool = False
    #: Stored with a one-byte code per entry (the coded cut): in the coded form of the variant's format.
    coded: bool = False

    @property
    def _v(self):
        return _variants.get(self.variant)

    @property
    def format(self) -> str:
        v = self._v
        if self.pattern:
            return formats.get(v.format).pattern_format
        return formats.get(v.format).coded_format if self.coded else v.format

    @property
    def name(self) -> str:
        """The variant's key, and ``@csr_pattern`` or ``@csr_vi`` (the format) for a part a cut stores."""
        return f"{self.variant}@{self.format}" if self.pattern or self.coded else self.variant

    @property
    def kernel(self) -> str:
        return self._v.kernel

    @property
    def kernel_params(self) -> dict:
        return dict(self._v.kernel_params)

    @property
    def vendor(self) -> bool:
        """Whether the part's kernel is a vendor library's (cuSPARSE), not one of our own."""
        from .. import kernels

        return kernels.get(self.kernel).vendor

    def params(self) -> dict:
        """The format parameters the part is built with: the variant's, then the plan's."""
        return {**self._v.format_params, **self.format_params}

    def to_json(self) -> dict:
        return {"variant": self.variant, "selector": [self.selector[0], *[_plain(a) for a in self.selector[1:]]],
                "nnz": self.nnz, "slots": self.slots, "predicted_us": self.predicted_us,
                "format_params": {k: _plain(v) for k, v in self.format_params.items()}, "pattern": self.pattern,
                "coded": self.coded}

    @classmethod
    def from_json(cls, d: dict) -> Part:
        sel = d["selector"]
        selector = (sel[0], *[tuple(a) if isinstance(a, list) else a for a in sel[1:]])
        return cls(d["variant"], selector, int(d["nnz"]), int(d["slots"]), float(d["predicted_us"]),
                   dict(d.get("format_params", {})), bool(d.get("pattern", False)), bool(d.get("coded", False)))


def _plain(v):
    if isinstance(v, (tuple, list, np.ndarray)):
        return [_plain(a) for a in v]
    if isinstance(v, np.integer):
        return int(v)
    return v


@dataclass
class Plan:
    """Parts in order (the first applies beta, the rest add), their predicted and measured time."""

    parts: tuple
    predicted_us: float
    measured_us: float | None = None

    @property
    def single(self) -> bool:
        """One part holding every entry: a plain format, not a Cocktail."""
        return len(self.parts) == 1

    def label(self, nnz: int | None = None) -> str:
        """``csr_vector(t=8)`` for a single format; ``DIA(9%) SELL(73%) COO(18%)`` for a Cocktail, a part
        that delegates to cuSPARSE named ``cuSPARSE-CSR``."""
        if self.single:
            return self.parts[0].name
        total = nnz or sum(p.nnz for p in self.parts) or 1
        return " ".join(f"{'cuSPARSE-' if p.vendor else ''}{p.format.upper()}({100 * p.nnz / total:.0f}%)"
                        for p in self.parts)

    @property
    def delegates(self) -> bool:
        """Whether any part runs a vendor library's kernel (cuSPARSE)."""
        return any(p.vendor for p in self.parts)

    def detail(self) -> str:
        """Each part's variant and selector: ``dia[diagonals x5] + ell[row_prefix 4] + csr_vector(t=4)``."""
        out = []
        for p in self.parts:
            kind = p.selector[0]
            if kind == "diagonals":
                out.append(f"{p.name}[{len(p.selector[1])} diagonals]")
            elif kind == "row_prefix":
                out.append(f"{p.name}[first {p.selector[1]} per row]")
            else:
                out.append(p.name)
        return " + ".join(out)

    def to_json(self) -> dict:
        return {"parts": [p.to_json() for p in self.parts], "predicted_us": self.predicted_us,
                "measured_us": self.measured_us}

    @classmethod
    def from_json(cls, d: dict) -> Plan:
        return cls(tuple(Part.from_json(p) for p in d["parts"]), float(d["predicted_us"]), d.get("measured_us"))


@dataclass
class Planning:
    """What the planner saw and weighed: the candidates, fastest predicted first."""

    features: Features
    candidates: list
    profile_source: str
    notice: str = ""
    #: The candidates as they were before the coded cut stored any part coded, fastest predicted first; empty
    #: when the cut was not made.
    uncut: list = field(default_factory=list)

    @property
    def chosen(self) -> Plan:
        return self.candidates[0]

    def vendor_rivals(self, chosen: Plan, reference_us: float | None = None) -> list:
        """The plans ``tune="model"`` times against ``chosen`` on the matrix: of the single plans that run a
        vendor variant (cuSPARSE's CSR or COO, algorithm 1 or 2) other than ``chosen`` itself, the
        :data:`VENDOR_RIVALS` fastest predicted within :data:`VENDOR_RACE_WITHIN` of ``reference_us``
        (``chosen``'s time: its prediction, or what it measured when slower), one per variant."""
        reference = chosen.predicted_us if reference_us is None else reference_us
        rivals = {}
        for p in self.candidates:
            if p is not chosen and p.single and p.delegates and p.parts[0].variant not in rivals:
                rivals[p.parts[0].variant] = p
        close = [p for p in rivals.values() if p.predicted_us <= VENDOR_RACE_WITHIN * reference]
        if chosen.single and chosen.delegates:
            close = [p for p in close if p.parts[0].variant != chosen.parts[0].variant]
        return close[:VENDOR_RIVALS]

    def own_rivals(self, chosen: Plan, reference_us: float | None = None) -> list:
        """The plans of our own kernels ``tune="model"`` also times against ``chosen``, of those predicted
        within :data:`OWN_RACE_WITHIN` of ``reference_us`` (as :meth:`vendor_rivals`): the fastest of
        each family (:func:`_family`) other than ``chosen``'s, and the fastest of ``chosen``'s family
        but of another kind (:func:`_kind`); never the vendor's singles."""
        reference = chosen.predicted_us if reference_us is None else reference_us
        family, kind = _family(chosen), _kind(chosen)
        seen, out = set(), []
        for p in self.candidates:
            if p.predicted_us > OWN_RACE_WITHIN * reference:
                break
            if p is chosen or (p.single and p.delegates):
                continue
            slot = _family(p)
            if slot == family and _kind(p) == kind:
                continue
            if slot not in seen:
                seen.add(slot)
                out.append(p)
        return out

    def uncut_rivals(self, chosen: Plan) -> list:
        """When the coded cut was made (:attr:`uncut`): ``chosen`` with its values stored again (where the cut
        stored a part of it: the plan of :attr:`uncut` it was made from), then the plan chosen without the cut,
        its vendor rivals and its own rivals (:meth:`vendor_rivals`, :meth:`own_rivals`), each once; else
        ``[]``.  The cut's share is measured over whole suites, and a coded plan predicted faster takes another
        plan's place among the rivals (a coded Cocktail in place of DIA as the diagonal family's other kind), so
        ``tune="model"`` also races what the matrix would have raced without the cut, and ``tune="measure"``
        times it (:meth:`to_measure`)."""
        if not self.uncut:
            return []
        out = []
        if any(p.coded for p in chosen.parts):
            values = Plan(tuple(replace(p, coded=False) if p.coded else p for p in chosen.parts), chosen.predicted_us)
            out.append(next((p for p in self.uncut if p.detail() == values.detail()), values))
        before = Planning(self.features, self.uncut, self.profile_source)
        first = self.uncut[0]
        return distinct_plans(out + [first] + before.vendor_rivals(first) + before.own_rivals(first), [chosen])

    def to_measure(self) -> list:
        """The candidates ``tune="measure"`` times: the MEASURE_TOP fastest predicted, and the fastest
        predicted of each kind (each single format, and Cocktails) besides, since the profile knows
        the formats' synthetic patterns better than it knows one matrix; where the coded cut was made, the
        plans without it too (:meth:`uncut_rivals`)."""
        chosen = list(self.candidates[:MEASURE_TOP])
        seen = {_kind(p) for p in chosen}
        for p in self.candidates[MEASURE_TOP:]:
            if _kind(p) not in seen:
                seen.add(_kind(p))
                chosen.append(p)
        without = self.uncut_rivals(self.candidates[0]) if self.candidates else []  # the coded cut: without it too
        return chosen + distinct_plans(without, chosen)


def distinct_plans(plans, taken=()) -> list:
    """``plans`` in order, each :meth:`Plan.detail` once and none of ``taken``'s: the rivals a race times
    once each, where the race without the coded cut names some plans twice."""
    out, seen = [], {p.detail() for p in taken}
    for p in plans:
        if p.detail() not in seen:
            seen.add(p.detail())
            out.append(p)
    return out


def _family(plan: Plan) -> str:
    """clSpMV's category (``flat``, ``block``, ``diagonal``) of the part holding most of ``plan``'s entries,
    ``:vendor`` when that part runs the vendor's kernel."""
    lead = max(plan.parts, key=lambda p: p.nnz)
    return _variants.get(lead.variant).category + (":vendor" if lead.vendor else "")


def _kind(plan: Plan) -> str:
    """``cocktail``, or a single plan's category and format (``flat:coo``, ``block:bell``; the vendor's
    kernels a kind of their own: ``flat:csr:vendor``)."""
    if not plan.single:
        return "cocktail"
    v = _variants.get(plan.parts[0].variant)
    return f"{v.category}:{v.format}" + (":vendor" if plan.delegates else "")


class _Costing:
    """Predictions for one matrix, dtype and profile: one at a time (:meth:`time`, :meth:`flat`) or many in one
    vectorised call (:meth:`times`, :meth:`flats`)."""

    def __init__(self, features: Features, profile, dtype, deterministic: bool = False, vendor: bool = True,
                 precision: str | None = None):
        # the profile's samples are real: float32 ones cost a half or complex64 matrix, float64 ones complex128
        self.f, self.profile, self.dtype = features, profile, sampled_dtype(dtype).name
        self.m = features.shape[0]
        self.scatter = float(features.x_scatter.get(sampled_dtype(dtype).itemsize, 0.0))
        self._has = {key: limit is None or features.distinct_values <= limit
                     for key, limit in _plannable(profile, self.dtype, deterministic, vendor, precision)}
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

    def times(self, variants, slots, widest) -> list[float]:
        """:meth:`time` of each sampled ``variants[i]`` reading ``slots[i]`` on the matrix's rows with its widest
        row's slots ``widest[i]``: the profile's surfaces evaluated in one vectorised call."""
        pred = self.profile.predictions(self.dtype)
        n = len(variants)
        index = np.fromiter((pred.index[v] for v in variants), np.int64, n)
        slots, widest = np.asarray(slots, dtype=float), np.asarray(widest, dtype=float)
        tail = widest > 0
        k = int(tail.sum())
        rows = np.concatenate([np.full(n, float(self.m)), np.full(k, float(TAIL_ROWS))])
        t = pred.us(np.concatenate([index, index[tail]]), rows, np.concatenate([slots, TAIL_ROWS * widest[tail]]),
                    self.scatter)
        out = t[:n]
        out[tail] = np.maximum(out[tail], t[n:])
        return out.tolist()

    def has(self, variant: str) -> bool:
        """Sampled in the profile, its kernel registered and allowed (:func:`allowed`), and its format able
        to store the matrix's values."""
        return self._has.get(variant, False)

    def flat(self, variant: str, groups, nnz: int, skip: int = 0, limit: int | None = None):
        """``(slots, µs)`` of a flat variant on rows whose widths ``groups`` describes, or None when unsampled."""
        if not self.has(variant):
            return None
        slots, tail = flat_work(_variants.get(variant), groups, nnz, self.m, skip, limit)
        t = self.time(variant, slots, tail)
        return None if t is None else (int(slots), t)

    def flats(self, groups, queries) -> list:
        """:meth:`flat` of each ``(variant, nnz, skip, limit)`` of ``queries`` (variants sampled and allowed), in one
        vectorised call: ``[(slots, µs)]``."""
        if not queries:
            return []
        slots, tails = self.widths(groups).flat_work(queries, self.m)
        return list(zip(slots, self.times([q[0] for q in queries], slots, tails)))

    def widths(self, groups) -> _Widths:
        """The :class:`_Widths` of ``groups`` (built once per plan and rows)."""
        found = self._widths.get(id(groups))
        if found is None or found.groups is not groups:
            found = self._widths[id(groups)] = _Widths(groups)
        return found


def _plannable(profile, dtype: str, deterministic: bool, vendor: bool, precision) -> tuple:
    """``(key, max_values)`` of every variant sampled in ``profile`` for ``dtype`` whose kernel may be planned
    (:func:`allowed`), ``max_values`` its format's value table (None: any values); once per profile."""
    key = ("plannable", dtype, deterministic, vendor, precision)
    found = profile.memo.get(key)
    if found is None:
        found = profile.memo[key] = tuple(
            (v.key, formats.get(v.format).max_values) for v in _variants.VARIANTS
            if profile.has(v.key, dtype) and allowed(v, deterministic, vendor, precision))
    return found


class _Widths:
    """The row groups of one set of rows (a :class:`~.features.GroupWidths` of every size) as one table:
    :meth:`padded_slots` answers many of ``GroupWidths.padded_slots``' questions in one vectorised call, those
    that skip nothing from running sums over the occupied widths (built once per group size and lanes of the
    padded variants)."""

    def __init__(self, groups):
        self.groups = groups
        sizes = sorted(groups)
        self.row = {g: i for i, g in enumerate(sizes)}
        cap = groups[sizes[0]].cap
        counts = np.stack([np.asarray(groups[g].counts[:cap + 1], dtype=np.int64) for g in sizes])
        occupied = np.nonzero(counts.any(axis=0))[0]
        self.widths, self.counts = occupied.astype(np.int64), counts[:, occupied]
        self.over = [(int(groups[g].counts[cap + 1]), groups[g].over_sum) for g in sizes]
        self.widest = groups[1].max_width
        # groups at or below each occupied width, by size: a leading 0, then running counts
        self._groups_upto = np.concatenate([np.zeros((len(sizes), 1), np.int64), self.counts.cumsum(axis=1)], axis=1)
        # groups x lane steps at or below each occupied width, by (size, lanes) of every padded variant
        combos = sorted({(self.row[g], n) for kind, g, n in map(_flat_shape, _variants.keys()) if kind == "padded"}
                        | {(self.row[1], 1)})  # and the rows' own lengths (covered)
        self._combo = {k: i for i, k in enumerate(combos)}
        r, n = np.array([k[0] for k in combos]), np.array([k[1] for k in combos], dtype=np.int64)
        steps = np.cumsum(self.counts[r] * -(-self.widths[None, :] // n[:, None]), axis=1)
        self._steps_upto = np.concatenate([np.zeros((len(combos), 1), np.int64), steps], axis=1)

    def padded_slots(self, size, lanes, limit, skip) -> list[int]:
        """``groups[size[i]].padded_slots(lanes[i], limit[i], skip[i])`` for every ``i`` (``limit[i]`` None: no
        limit), as that method computes it."""
        rows = [self.row[g] for g in size]
        totals = [0] * len(rows)
        whole = [i for i, k in enumerate(skip) if not k and (rows[i], lanes[i]) in self._combo]
        if whole:  # skip nothing: the widths up to the limit as they are, the wider ones at the limit
            r, n = [rows[i] for i in whole], [lanes[i] for i in whole]
            bound = np.array([_NO_LIMIT if limit[i] is None else limit[i] for i in whole], dtype=np.int64)
            upto = np.searchsorted(self.widths, bound, side="right")
            wider = self._groups_upto[r, -1] - self._groups_upto[r, upto]
            capped = np.where(upto < len(self.widths), -(-bound // np.array(n, dtype=np.int64)), 0)
            got = self._steps_upto[[self._combo[k] for k in zip(r, n)], upto] + wider * capped
            for i, t in zip(whole, got.tolist()):
                totals[i] = t
        done = set(whole)
        skipping = [i for i in range(len(rows)) if i not in done]
        if skipping:  # each width less the skip, then the limit: one row of widths per question
            r = [rows[i] for i in skipping]
            n = np.array([lanes[i] for i in skipping], dtype=np.int64)
            bound = np.array([_NO_LIMIT if limit[i] is None else limit[i] for i in skipping], dtype=np.int64)
            wide = np.minimum(np.maximum(self.widths[None, :] - np.array([skip[i] for i in skipping])[:, None], 0),
                              bound[:, None])
            for i, t in zip(skipping, (self.counts[r] * -(-wide // n[:, None])).sum(axis=1).tolist()):
                totals[i] = t
        for i, r in enumerate(rows):
            over, over_sum = self.over[r]
            if over:  # widths past the cap: their mean width, lanes rounding neglected (as padded_slots)
                mean = max(over_sum / over - skip[i], 0)
                totals[i] += int(over * -(-(mean if limit[i] is None else min(mean, limit[i])) // lanes[i]))
        return [t * n * g for t, n, g in zip(totals, lanes, size)]

    def flat_work(self, queries, m: int) -> tuple[list, list]:
        """:func:`flat_work` of each ``(variant, nnz, skip, limit)``: ``(slots, tails)``."""
        slots, tails, padded = [], [], []
        for i, (key, nnz, skip, limit) in enumerate(queries):
            kind, size, lanes = _flat_shape(key)
            widest = max(self.widest - skip, 0)
            if limit is not None:
                widest = min(widest, limit)
            if kind == "padded":
                padded.append((i, size, lanes, limit, skip))
                slots.append(0)
                tails.append(lanes * -(-widest // lanes))
            else:
                slots.append(m * widest if kind == "ell" else nnz + m if kind == "balanced" else nnz)
                tails.append(0)
        if padded:
            at, size, lanes, limit, skip = zip(*padded)
            for i, n in zip(at, self.padded_slots(size, lanes, limit, skip)):
                slots[i] = n
        return slots, tails

    def covered(self, limits) -> list[int]:
        """``groups[1].covered(w)`` of every ``w`` of ``limits``: the entries of the rows' first ``w`` positions."""
        n = len(limits)
        return self.padded_slots((1,) * n, (1,) * n, limits, (0,) * n)


_FLAT_SHAPES: dict = {}
#: A row-prefix limit no row reaches (none).
_NO_LIMIT = np.iinfo(np.int64).max


def _flat_shape(key: str) -> tuple:
    """How :func:`flat_work` counts flat variant ``key``'s slots: ``(kind, group size, lanes)``, ``kind`` one of
    ``padded`` (rows padded in groups of that size), ``ell``, ``balanced`` (``nnz + m``) or ``entries``."""
    found = _FLAT_SHAPES.get(key)
    if found is None:
        v = _variants.get(key)
        lanes = _lanes(v)
        if v.kernel == "csr_scalar":
            found = ("padded", 32, 1)
        elif v.kernel == "csr_vector":
            found = ("padded", 32 // lanes, lanes)
        elif v.kernel == "sell":
            found = ("padded", v.format_params["slice_height"], lanes)
        elif v.kernel == "ell":
            found = ("ell", 0, lanes)
        elif v.kernel in ("csr_merge", "csr_stream", "cusparse_csr"):
            found = ("balanced", 0, lanes)
        else:
            found = ("entries", 0, lanes)
        _FLAT_SHAPES[key] = found
    return found


def _lanes(v) -> int:
    return int(v.kernel_params.get("threads_per_row", 1))


def flat_work(v, groups, nnz: int, m: int, skip: int = 0, limit: int | None = None) -> tuple[int, int]:
    """``(slots, tail)`` of flat variant ``v``: the value slots it steps through (lanes' padding
    included) and the slots of its widest row (0 when no row waits on its longest one).

    ``skip`` entries of every row are taken by an earlier part, ``limit`` keeps a row prefix.
    """
    lanes = _lanes(v)
    widest = max(groups[1].max_width - skip, 0)
    if limit is not None:
        widest = min(widest, limit)
    tail = lanes * -(-widest // lanes)
    if v.kernel == "csr_scalar":
        return groups[32].padded_slots(1, limit, skip), tail
    if v.kernel == "csr_vector":  # a warp covers 32 / lanes rows
        return groups[32 // lanes].padded_slots(lanes, limit, skip), tail
    if v.kernel == "sell":
        return groups[v.format_params["slice_height"]].padded_slots(lanes, limit, skip), tail
    if v.kernel == "ell":
        return m * widest, 0
    if v.kernel in ("csr_merge", "csr_stream", "cusparse_csr"):  # balanced over rows and nonzeros
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
#: docs/benchmarks/2026-11-27-h200-coded/kernels_few_dac09f1.json; H200).  The byte model (:func:`entry_share`
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
    def one(part: Part) -> Part:
        if not _takes_cut(part.variant, cut):
            return part
        return replace(part, predicted_us=part.predicted_us * share, **{cut: True})

    parts = tuple(one(p) for p in plan.parts)
    if all(a is b for a, b in zip(parts, plan.parts)):
        return plan
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


def _flat_variants(c: _Costing, formats) -> list[str]:
    return [v.key for v in _variants.VARIANTS if v.format in formats and c.has(v.key)]


def _best(options):
    options = [o for o in options if o is not None]
    return min(options, key=lambda o: o[-1]) if options else None


def _remainders(c: _Costing, groups, asks) -> list:
    """The cheapest CSR or COO part for the entries left, ``(variant, slots, µs)`` or None, for each ``(nnz, skip)``
    of ``asks`` (``nnz`` entries left once ``skip`` of every row are taken): one vectorised call."""
    keys = [v for v in CSR_VARIANTS + COO_VARIANTS if c.has(v)]
    got = c.flats(groups, [(v, nnz, skip, None) for nnz, skip in asks for v in keys])
    n = len(keys)
    return [_best([(v, *got[i * n + j]) for j, v in enumerate(keys)]) for i in range(len(asks))]


def _remainder(c: _Costing, groups, nnz: int, skip: int = 0):
    """The cheapest CSR or COO part for the entries left: ``(variant, slots, µs)``."""
    return _remainders(c, groups, [(nnz, skip)])[0]


def _whole_matrix(c: _Costing, features: Features) -> dict:
    """``{variant: (slots, µs)}`` of every sampled variant holding the whole matrix, however much it
    pads (block shapes the features left out are missing): one vectorised call."""
    flat, other = [], []
    for v in _variants.VARIANTS:
        if not c.has(v.key):
            continue
        if v.pattern == "rows":
            flat.append((v.key, features.nnz, 0, None))
        else:
            got = _work(v, features)  # c.has: its format holds the values
            if got is not None:
                other.append((v.key, *got))
    slots, tails = c.widths(features.groups).flat_work(flat, c.m) if flat else ([], [])
    keys = [q[0] for q in flat] + [k for k, _, _ in other]
    slots += [s for _, s, _ in other]
    times = c.times(keys, slots, tails + [t for _, _, t in other]) if keys else []
    found = {k: (int(s), t) for k, s, t in zip(keys, slots, times)}
    return {v.key: found[v.key] for v in _variants.VARIANTS if v.key in found}  # in the variants' order


def _singles(whole: dict, nnz: int, dtype) -> list[Plan]:
    """The single-format plans: padded formats within MAX_SLOTS_PER_ENTRY, block formats within
    :func:`block_fill_limit`."""
    limit = MAX_SLOTS_PER_ENTRY * max(nnz, 1)
    block_limit = block_fill_limit(dtype) * max(nnz, 1)
    out = []
    for key, (slots, t) in whole.items():
        v = _variants.get(key)
        if v.format not in ("csr", "coo") and slots > limit:
            continue
        if v.pattern == "blocks" and slots > block_limit:
            continue
        out.append(Plan((Part(key, ("rest",), nnz, slots, t),), t))
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
    ``launcher``: the features' launcher protocol (``features._CupyLauncher``), to run the kernel elsewhere."""
    from ..arrays import get_xp

    xp = get_xp(csr.indptr)
    m = int(csr.shape[0])
    if xp is np and launcher is None:
        from ..arrays import entry_rows
        from ..formats.cocktail import on_diagonals

        rows = entry_rows(csr)
        return row_groups(np.diff(csr.indptr) - np.bincount(rows[on_diagonals(csr, offsets, rows)], minlength=m))
    from . import features as _features

    launch = launcher or _features._CupyLauncher()
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


def _bell_garland_width(m: int, g1) -> int:
    """Bell & Garland's HYB width: the widest K that a third of the ``m`` rows reach (0: none), from the
    row-length counts ``g1`` (``groups[1]``)."""
    need = max(1, math.ceil(m / ELL_SPEEDUP_OVER_COO))
    reached = np.cumsum(g1.counts[::-1])[::-1]  # rows with length >= w (w <= cap)
    return int(np.nonzero(reached[:g1.cap + 1] >= need)[0].max()) if (reached[:g1.cap + 1] >= need).any() else 0


def _prefix_widths(variant: str, widest: int, k: int, candidates, pre: dict, covered: dict, m_c: float) -> set:
    """Row-prefix widths to cost for ``variant``: Bell & Garland's ``k`` and clSpMV's rule, the largest of the
    ``candidates`` whose slots at the prefix rate (``pre[(variant, w)]``: ``(slots, µs)``) beat the entries
    it covers (``covered[w]``) at the remainder's rate ``m_c``."""
    out = set()
    if widest <= 1:
        return out
    if 0 < k < widest:
        out.add(k)
    best = 0
    for w in candidates:
        t = pre[(variant, w)][1]
        if covered[w] and t < covered[w] / m_c:
            best = w
    if best:
        out.add(best)
    return out


def _head_plans(c: _Costing, head: tuple, groups, left: int, nnz: int, prefix_variants) -> list[Plan]:
    """The plans that start with ``head`` (no part, or the diagonal part) for the ``left`` entries whose rows
    ``groups`` describes: ``head`` and CSR or COO (when ``head`` has a part), and ``head``, a row-prefix part of
    one of ``prefix_variants`` at each width :func:`_prefix_widths` picks and CSR or COO for the rest.  The
    remainders and every prefix at every width are costed in one vectorised call, the remainders after the
    prefixes kept in another."""
    widths = c.widths(groups)
    widest = groups[1].max_width
    candidates = [w for w in PREFIX_WIDTHS if w < widest] if widest > 1 else []
    k = _bell_garland_width(c.m, groups[1]) if widest > 1 else 0
    tried = sorted(set(candidates) | ({k} if 0 < k < widest else set()))
    keys = [v for v in CSR_VARIANTS + COO_VARIANTS if c.has(v)]
    prefixes = [(v, w) for v in prefix_variants for w in tried]
    got = c.flats(groups, [(v, left, 0, None) for v in keys] + [(v, left, 0, w) for v, w in prefixes])
    rest = _best([(v, *got[j]) for j, v in enumerate(keys)])
    if rest is None:
        return []
    out = []
    if head:
        out.append(Plan(head + (Part(rest[0], ("rest",), left, rest[1], rest[2]),),
                        sum(p.predicted_us for p in head) + rest[2]))
    m_c = left / rest[2]
    pre = dict(zip(prefixes, got[len(keys):]))
    covered = dict(zip(tried, widths.covered(tried)))
    chosen = [(v, w) for v in prefix_variants for w in _prefix_widths(v, widest, k, candidates, pre, covered, m_c)
              if MIN_PART_SHARE * nnz <= covered[w] < left]
    after_widths = list(dict.fromkeys(w for _, w in chosen))
    afters = dict(zip(after_widths, _remainders(c, groups, [(left - covered[w], w) for w in after_widths])))
    for variant, w in chosen:
        after = afters[w]
        if after is None:
            continue
        slots, t = pre[(variant, w)]
        parts = head + (Part(variant, ("row_prefix", int(w)), covered[w], slots, t, {"max_fill": None}),
                        Part(after[0], ("rest",), left - covered[w], after[1], after[2]))
        out.append(Plan(parts, sum(p.predicted_us for p in parts)))
    return out


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
    singles = _singles(whole, nnz, c.dtype)
    if not singles:
        raise ValueError(f"the device profile ({profile.source}) has no samples for {np.dtype(dtype).name}")
    flats = [p for p in singles if _variants.get(p.parts[0].variant).category == "flat"]
    g_flat = nnz / min(p.predicted_us for p in flats) if flats else 0.0
    plans = list(singles)
    # SELL variants ranked by their time on the whole matrix, however much they would pad.
    sells = sorted((k for k in whole if _variants.get(k).format == "sell"), key=lambda k: whole[k][1])
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
    for head, groups, left in heads:
        if left == 0:
            continue  # the diagonal part holds everything: that is the diagonal single
        plans += _head_plans(c, head, groups, left, nnz, prefix_variants)
    share = entry_share(dtype, csr.index_dtype, value_dtype)  # a half matrix, or values stored narrower
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
