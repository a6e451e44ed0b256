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

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import formats, kernels
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
#: a whole (its formats, variants and the Cocktails it leads alike), and the fastest of each kind
#: (:func:`_kind`) of the plan's own family, its own kind included, since formats of one family and settings
#: of one kernel still differ by more than the profile tells (measured on an H200: holdout_mesh2d's
#: csr_vector with 4 lanes 6.8 µs, predicted 10.5, against 10.4 with 8, predicted 9.9; laplace27's
#: dia_vi 46 µs against dia's 59, predicted 76 and 66).
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

    @classmethod
    def planned(cls, variant: str, selector: tuple, nnz: int, slots: int, predicted_us: float,
                format_params: dict | None = None) -> Part:
        """``Part(variant, selector, nnz, slots, predicted_us, format_params or {})``, its fields set straight into the
        instance: the frozen ``__init__`` assigns each through ``object.__setattr__``, and a plan makes a hundred."""
        part = object.__new__(cls)
        fields = part.__dict__
        fields["variant"], fields["selector"], fields["nnz"], fields["slots"] = variant, selector, nnz, slots
        fields["predicted_us"], fields["format_params"] = predicted_us, {} if format_params is None else format_params
        fields["pattern"] = fields["coded"] = False
        return part

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
        each family (:func:`_family`) other than ``chosen``'s, and the fastest of each kind (:func:`_kind`) of
        ``chosen``'s family, ``chosen``'s own kind included (its next setting: csr_vector's other lanes, BCSR's
        other block shape); never the vendor's singles."""
        reference = chosen.predicted_us if reference_us is None else reference_us
        family = _family(chosen)
        seen, out = set(), []
        for p in self.candidates:
            if p.predicted_us > OWN_RACE_WITHIN * reference:
                break
            if p is chosen or (p.single and p.delegates):
                continue
            slot = _family(p)
            if slot == family:  # the plan's own family: one of each kind, the plan's own kind included
                slot = (slot, _kind(p))
            if slot not in seen:
                seen.add(slot)
                out.append(p)
        return out

    def tuning_rivals(self, chosen: Plan, reference_us: float) -> list:
        """The plans ``tune="auto"`` tries against ``chosen`` once it measured ``reference_us``, taken in turn from
        each source, fastest predicted first within it: the plans without the coded cut (:meth:`uncut_rivals`),
        ours of each other family (a source each), the vendor's kernels (:meth:`vendor_rivals`), ours of
        ``chosen``'s own family (its other kinds and settings, :meth:`own_rivals`); each once.  Taken in turn, the
        first few hold every source that has one: a family mispredicted as a whole, a vendor's kernel and a
        kernel's next setting each won on some matrices, and sorted by prediction alone, one family's many close
        variants crowded the others out (fem_spheres' bcsr(3x3) behind three diagonal plans)."""
        reference = max(chosen.predicted_us, reference_us)
        own, family = self.own_rivals(chosen, reference), _family(chosen)
        others = [[p] for p in own if _family(p) != family]  # one a family: a source each
        sources = [self.uncut_rivals(chosen), *others, self.vendor_rivals(chosen, reference),
                   [p for p in own if _family(p) == family]]
        in_turn = [s[i] for i in range(max(map(len, sources))) for s in sources if i < len(s)]
        return distinct_plans(in_turn, [chosen])

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
        padded = kind == _KINDS["padded"]
        tails = np.where(padded, lanes * -(-widest // lanes), 0)
        slots = np.where(kind == _KINDS["ell"], m * widest, np.where(kind == _KINDS["balanced"], nnz + m, nnz))
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
        padded = catalog.kind[ids] == _KINDS["padded"]
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
#: The kinds of :func:`_flat_shape` of the kernels' walks other than ``rows`` (any other walk: ``entries``).
_WALK_KINDS = {"full_width": "ell", "balanced": "balanced"}
#: :func:`_flat_shape`'s kinds as the numbers of the vectorised tables (:class:`_Catalog`, :meth:`_Widths.work`).
_KINDS = {"entries": 0, "balanced": 1, "ell": 2, "padded": 3}


@functools.cache
def _lanes_taken() -> tuple:
    """The lanes per row of the padded flat variants, and 1 (the rows' own lengths: covered entries), rising (the
    registry is fixed once loaded)."""
    return tuple(sorted({n for kind, _, n in map(_flat_shape, _variants.keys()) if kind == "padded"} | {1}))


def _flat_shape(key: str) -> tuple:
    """How :func:`flat_work` counts flat variant ``key``'s slots: ``(kind, group size, lanes)``, ``kind`` one of
    ``padded`` (rows padded in groups of that size), ``ell``, ``balanced`` (``nnz + m``) or ``entries``, from its
    kernel's walk (``KernelSpec.walk``)."""
    found = _FLAT_SHAPES.get(key)
    if found is None:
        v = _variants.get(key)
        spec, lanes = kernels.get(v.kernel), _lanes(v)
        if spec.walk == "rows":
            found = ("padded", spec.group_rows(v.kernel_params, v.format_params), lanes)
        else:
            found = (_WALK_KINDS.get(spec.walk, "entries"), 0, lanes)
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
    kind, group, _ = _flat_shape(v.key)
    if kind == "padded":  # a group of rows padded to its longest: a warp covers 32 / lanes rows of csr_vector
        return groups[group].padded_slots(lanes, limit, skip), tail
    if kind == "ell":
        return m * widest, 0
    if kind == "balanced":  # balanced over rows and nonzeros
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
