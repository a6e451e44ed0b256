"""The answer of a benchmark run, one line per dtype: ``cocktail-auto`` against the baseline (the best of
cuSPARSE's algorithms on the GPU, SciPy on the CPU), from the records alone.

Wrong answers (:mod:`..records.wrong`) count as not measured; the matrices they leave out are named.  On
the CPU, where ``cocktail-auto`` and SciPy are timed call for call (:mod:`..measuring.paired`), each
matrix's speedup is the paired median ratio, the line gives the 95% interval of the geometric mean, and
calls a speedup whose interval holds 1 the same speed.
"""

from __future__ import annotations

from ..measuring import paired
from ..measuring.baselines import CUSPARSE, CUSPARSE_BEST, Scipy
from ..measuring.methods import AUTO
from ..records import metrics
from ..records.selection import BEST_SINGLE, compared_label, compared_methods, spmv_records, summary_records
from ..records.wrong import is_wrong

#: The CPU's baseline, and how the headline names it.
SCIPY, SCIPY_NAME = Scipy().name, "SciPy"
#: The headline counts cocktail-auto as the fastest on a matrix when within this many percent of the
#: fastest time there: its plan is often one of the single-format methods, timed separately.
TIE_PERCENT = 2


def on_cpu(records) -> bool:
    """True when the SpMV records were timed on the host CPU (no GPU numbers)."""
    timed = [r["kernel_timing"] for r in records if r.get("kernel_timing")]  # refused methods have none
    return bool(timed) and all(t == "cpu" for t in timed)


def baseline(records) -> tuple[str, str]:
    """The method the headline compares cocktail-auto with, and its column label."""
    return (SCIPY, "× SciPy") if on_cpu(records) else (CUSPARSE_BEST, "× cuSPARSE")


def _key(r) -> tuple:
    return r.get("suite", ""), r["matrix"], r["dtype"]


def methods_text(records) -> str:
    """How many methods a "fastest of" count is among: ``all 3 methods`` when every method tried ran, else
    ``the 15 methods that ran (16 tried)`` (:func:`~..records.selection.compared_methods`; ``that ran and
    answered right`` where some answered wrong)."""
    tried, ran = compared_methods(records)
    if len(ran) == len(tried):
        return f"all {len(ran)} methods"
    how = "ran and answered right" if any(is_wrong(r) for r in records) else "ran"
    return f"the {len(ran)} method{'s' * (len(ran) != 1)} that {how} ({len(tried)} tried)"


def auto_speedups(records, base: str) -> dict:
    """``{(suite, matrix, dtype): speedup}`` of cocktail-auto over ``base`` where both have a right answer
    (:func:`~..measuring.paired.speedup`: the paired median ratio where the two were timed together)."""
    rows = {(*_key(r), r["method"]): r for r in summary_records(records)}
    out = {}
    for (*key, method), r in rows.items():
        other = rows.get((*key, base))
        ratio = paired.speedup(r, other) if method == AUTO and other else None
        if ratio:
            out[tuple(key)] = ratio
    return out


def intervals(records, base: str) -> dict:
    """``{(suite, matrix, dtype): (low, high)}`` of the cocktail-auto records timed call for call with ``base``
    (ends None where too few rounds were timed to tell)."""
    return {_key(r): (r.get("paired_low"), r.get("paired_high")) for r in records
            if r["method"] == AUTO and r.get("paired_with") == base and r.get("paired_ratio")}


def _missing_text(records, ratios: dict, base: str) -> str:
    """`` (2 more without a cocktail-auto time; 1 more where SciPy answered wrong)``: the matrices the speedups
    leave out where the baseline ran, or where either side answered wrong; or nothing."""
    rows = spmv_records(records)
    right = metrics.times_by_problem(summary_records(rows))
    auto_wrong = {_key(r) for r in rows if r["method"] == AUTO and is_wrong(r)}
    base_wrong = {_key(r) for r in rows if compared_label(r["method"]) == base and is_wrong(r)}
    who = SCIPY_NAME if base == SCIPY else "every cuSPARSE algorithm that ran"
    counts = {f"without a {AUTO} time": 0, f"where {AUTO} answered wrong": 0, f"where {who} answered wrong": 0}
    for key in dict.fromkeys(_key(r) for r in rows):
        if key in ratios:
            continue
        if key in auto_wrong:
            counts[f"where {AUTO} answered wrong"] += 1
        elif key in base_wrong and base not in right.get(key, {}):
            counts[f"where {who} answered wrong"] += 1
        elif base in right.get(key, {}):
            counts[f"without a {AUTO} time"] += 1
    parts = [f"{n} more {what}" for what, n in counts.items() if n]
    return f" ({'; '.join(parts)})" if parts else ""


def headline(records) -> str:
    """One dtype's answer: cocktail-auto's geometric-mean speedup over the baseline (with its 95% interval where
    the pair was timed call for call), the matrices where it is faster, and where it is (within
    ``TIE_PERCENT``) the fastest of every method; or the method with the most such matrices."""
    rows = summary_records(records)
    if not rows:
        return "nothing measured"
    dtype = rows[0]["dtype"]
    base, _ = baseline(rows)
    counts = metrics.win_lose(rows, tie=TIE_PERCENT / 100)
    ratios = auto_speedups(rows, base)
    name = SCIPY_NAME if base == SCIPY else f"cuSPARSE (best of {len(CUSPARSE)} algorithms)"
    among = methods_text(records)
    if not ratios:
        contenders = [m for m in counts if m != BEST_SINGLE]
        if not contenders:
            return f"{dtype}: fewer than two methods measured; nothing to compare"
        best = max(contenders, key=lambda m: counts[m]["win"])
        return f"{dtype}: {best} is the fastest of {among} on {counts[best]['win']} of " \
               f"{len(metrics.times_by_problem(rows))} matrices (within {TIE_PERCENT}%; {AUTO} against {name}: " \
               f"not both measured)"
    wins = counts.get(AUTO, {}).get("win", 0)
    missing = _missing_text(records, ratios, base)
    mean = metrics.geomean(ratios.values())
    ends = {k: v for k, v in intervals(rows, base).items() if k in ratios}
    if ends:
        return (f"{AUTO} vs {name}, {dtype}: {mean:.2f}x as fast (geometric mean{_interval_text(ratios, ends)}), "
                f"{_per_matrix_text(ratios, ends)}{missing}; fastest of {among} on {wins} (within {TIE_PERCENT}%)")
    faster = sum(v > 1 for v in ratios.values())
    return (f"{AUTO} vs {name}, {dtype}: {mean:.2f}x as fast (geometric mean), "
            f"faster on {faster} of {len(ratios)} matrices{missing}; fastest of {among} on {wins} "
            f"(within {TIE_PERCENT}%)")


def _interval_text(ratios: dict, ends: dict) -> str:
    """``; timing noise 0.992-1.011x at 95%: the same speed`` (the verdict only where the interval holds 1), or
    which matrices leave the noise unknown."""
    combined = paired.combined_interval((ratios[k], *ends.get(k, (None, None))) for k in ratios)
    if combined is None:
        unknown = sum(None in ends.get(k, (None, None)) for k in ratios)
        return (f"; timing noise unknown on {unknown} of {len(ratios)} matrices: timed alone, or in fewer than "
                f"{paired.MIN_PAIRS} pairs of rounds")
    _, low, high = combined
    return f"; timing noise {low:.3f}-{high:.3f}x at 95%" + (": the same speed" if low <= 1 <= high else "")


def _per_matrix_text(ratios: dict, ends: dict) -> str:
    """``faster on 2 of 8 matrices, slower on 3, the same within timing noise on 3``: each matrix's interval
    above 1, below it, or holding it (and on how many the noise is unknown)."""
    faster = slower = unknown = 0
    for key in ratios:
        low, high = ends.get(key, (None, None))
        if low is None or high is None:
            unknown += 1
        else:
            faster += low > 1
            slower += high < 1
    same = len(ratios) - faster - slower - unknown
    return (f"faster on {faster} of {len(ratios)} matrices, slower on {slower}, the same within timing noise on "
            f"{same}" + (f", noise unknown on {unknown}" if unknown else ""))
