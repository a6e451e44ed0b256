"""What the planner answers: plans made of parts, and the planning that ranks them and names the rivals raced.

A :class:`Part` is one format and kernel variant holding a share of the entries, a :class:`Plan` its parts in
order with their predicted time, and a :class:`Planning` the candidate plans the :mod:`planner <.planner>`
weighed, fastest predicted first: the rivals ``tune="model"`` and ``tune="auto"`` race against the chosen plan
on the matrix (:meth:`Planning.vendor_rivals`, :meth:`Planning.own_rivals`, :meth:`Planning.tuning_rivals`,
:meth:`Planning.uncut_rivals`) and the candidates ``tune="measure"`` times (:meth:`Planning.to_measure`), with
the thresholds of those races.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import formats
from . import variants as _variants
from .features import Features

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
