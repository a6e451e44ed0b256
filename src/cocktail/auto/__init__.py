"""``format="auto"``: everything that picks a plan for a matrix, in one package.

- :mod:`.features`: what the planner sees of a matrix, computed on the GPU (row lengths, diagonals,
  block statistics, how scattered the gathers of ``x`` are, the structure's fingerprint); its records in
  :mod:`.feature_records`, the length histograms in :mod:`.feature_histograms`, the fused pass's launcher in
  :mod:`.feature_launch`;
- :mod:`.variants` and :mod:`.profile`: the kernel variants the planner weighs and the device
  profile that predicts their times (the H100 and H200 profiles ship in ``profiles/``; the fitted curves and
  surfaces in :mod:`.profile_surfaces`);
- :mod:`.calibration`: ``cocktail calibrate``, which times every variant on synthetic matrices and
  writes the device profile (clSpMV's offline stage);
- :mod:`.planner`: the candidates, single formats and Cocktails, costed from the profile, with the
  planner's thresholds; :mod:`.candidates` (parts, plans, the planning's candidates and rivals) and
  :mod:`.cost_model` (the slots each variant steps through, from its kernel's walk, and their predicted times);
- :mod:`.planning`: the construction-time entry (:func:`.planning.choose`): features, planner,
  ``tune="measure"``, the decision cache (:mod:`.decisions`);
- :mod:`.plans` and :mod:`.online`: the planned matrix's product, and ``tune="auto"``'s tuning of it on
  the user's own products;
- :mod:`.fixed_rule`: the rule without a profile (and on the CPU).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Decision:
    """What ``format="auto"`` decided for one matrix: a plan built by the planner (``storage``, ``executor``,
    ``report``), or the fixed rule's ``format`` and the ``reason`` for explain()."""

    storage: object = None
    executor: object = None
    report: object = None  # planning.AutoReport when the planner ran
    format: str | None = None
    reason: str | None = None


def decide(csr, device: str, executor=None, tune: str = "auto", deterministic: bool = False,
           vendor: bool = True, yielding: bool = False) -> Decision:
    """``format="auto"`` for the canonical CSR ``csr``: the planner on the GPU (real values with entries,
    GPU kernels: :func:`.planning.choose`, its plans bound with the launch policy ``yielding``), else the fixed
    rule (:mod:`.fixed_rule`)."""
    unplanned = why_not_planned(csr, executor, device)
    if unplanned is None:
        from .planning import choose

        storage, bound, report = choose(csr, tune, deterministic, vendor, yielding)
        return Decision(storage, bound, report)
    from .fixed_rule import choose_with_reason

    format, why = choose_with_reason(csr, device=device)
    return Decision(format=format, reason=unplanned + why)


def why_not_planned(csr, executor, device: str) -> str | None:
    """None when format="auto" runs the planner (a matrix with entries, on the GPU, GPU kernels); else
    why it does not, as the start of explain()'s sentence (empty on the CPU, where it never does)."""
    if device != "cuda":
        return ""
    if executor not in (None, "cuda"):
        why = f"executor={executor!r} runs no GPU kernel"
    elif csr.nnz == 0:
        why = "it plans matrices with entries"
    else:
        return None
    return f"the planner did not run ({why}); "
