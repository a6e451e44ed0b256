"""The answer of a benchmark run, one line per dtype: ``cocktail-auto`` against the baseline (the best of
cuSPARSE's algorithms on the GPU, SciPy on the CPU), from the records alone.

Wrong answers (:mod:`..records.wrong`) count as not measured.  On the CPU, where ``cocktail-auto`` and
SciPy are timed call for call (:mod:`..measuring.paired`), the line gives the noise band of the
geometric mean and calls a speedup within it the same speed.
"""

from __future__ import annotations

import math

from ..measuring.baselines import CUSPARSE, CUSPARSE_BEST
from ..measuring.paired import combined_band
from ..records import metrics
from ..records.selection import BEST_SINGLE, compared_methods, summary_records
from ..records.wrong import is_wrong

AUTO = "cocktail-auto"
#: The headline counts cocktail-auto as the fastest on a matrix when within this many percent of the
#: fastest time there: its plan is often one of the single-format methods, timed separately.
TIE_PERCENT = 2


def on_cpu(records) -> bool:
    """True when the SpMV records were timed on the host CPU (no GPU numbers)."""
    timed = [r["kernel_timing"] for r in records if r.get("kernel_timing")]  # refused methods have none
    return bool(timed) and all(t == "cpu" for t in timed)


def baseline(records) -> tuple[str, str]:
    """The method the headline compares cocktail-auto with, and its column label."""
    return ("scipy", "× SciPy") if on_cpu(records) else (CUSPARSE_BEST, "× cuSPARSE")


def methods_text(records) -> str:
    """How many methods a "fastest of" count is among: ``all 3 methods`` when every method tried ran, else
    ``the 15 methods that ran (16 tried)`` (:func:`~..records.selection.compared_methods`; ``that ran and
    answered right`` where some answered wrong)."""
    tried, ran = compared_methods(records)
    if len(ran) == len(tried):
        return f"all {len(ran)} methods"
    how = "ran and answered right" if any(is_wrong(r) for r in records) else "ran"
    return f"the {len(ran)} method{'s' * (len(ran) != 1)} that {how} ({len(tried)} tried)"


def _missing_text(records, table: dict, ratios: dict, base: str) -> str:
    """`` (2 more without a cocktail-auto time; 1 more where cocktail-auto answered wrong)``: the matrices
    the baseline ran on that the speedups leave out, or nothing."""
    lacking = [key for key, per in table.items() if base in per and key not in ratios]
    wrong = {(r.get("suite", ""), r["matrix"], r["dtype"]) for r in records if r["method"] == AUTO and is_wrong(r)}
    answered = sum(key in wrong for key in lacking)
    parts = [f"{len(lacking) - answered} more without a {AUTO} time"] if len(lacking) > answered else []
    parts += [f"{answered} more where {AUTO} answered wrong"] if answered else []
    return f" ({'; '.join(parts)})" if parts else ""


def noise_bands(records, base: str) -> dict:
    """``{(suite, matrix, dtype): band}`` of the cocktail-auto records timed call for call with ``base``."""
    return {(r.get("suite", ""), r["matrix"], r["dtype"]): r["noise_band"] for r in records
            if r["method"] == AUTO and r.get("paired_with") == base and r.get("noise_band") is not None}


def headline(records) -> str:
    """One dtype's answer: cocktail-auto's geometric-mean speedup over the baseline (with its noise band where
    the records carry one), the matrices where it is faster, and where it is (within ``TIE_PERCENT``) the
    fastest of every method; or the method with the most such matrices."""
    records = summary_records(records)
    if not records:
        return "nothing measured"
    dtype = records[0]["dtype"]
    base, _ = baseline(records)
    counts = metrics.win_lose(records, tie=TIE_PERCENT / 100)
    table = metrics.times_by_problem(records)
    ratios = metrics.speedups(records, base).get(AUTO, {})
    name = "SciPy" if base == "scipy" else f"cuSPARSE (best of {len(CUSPARSE)} algorithms)"
    among = methods_text(records)
    if not ratios:
        contenders = [m for m in counts if m != BEST_SINGLE]
        if not contenders:
            return f"{dtype}: fewer than two methods measured; nothing to compare"
        best = max(contenders, key=lambda m: counts[m]["win"])
        return f"{dtype}: {best} is the fastest of {among} on {counts[best]['win']} of " \
               f"{len(table)} matrices (within {TIE_PERCENT}%; {AUTO} against {name}: not both measured)"
    wins = counts.get(AUTO, {}).get("win", 0)
    missing = _missing_text(records, table, ratios, base)
    mean = metrics.geomean(ratios.values())
    bands = noise_bands(records, base)
    if bands and set(ratios) <= set(bands):
        return (f"{AUTO} vs {name}, {dtype}: {mean:.2f}x as fast (geometric mean{_band_text(mean, bands, ratios)}), "
                f"{_per_matrix_text(ratios, bands)}{missing}; fastest of {among} on {wins} (within {TIE_PERCENT}%)")
    faster = sum(v > 1 for v in ratios.values())
    return (f"{AUTO} vs {name}, {dtype}: {mean:.2f}x as fast (geometric mean), "
            f"faster on {faster} of {len(ratios)} matrices{missing}; fastest of {among} on {wins} "
            f"(within {TIE_PERCENT}%)")


def _band_text(mean: float, bands: dict, ratios: dict) -> str:
    """``, ±1.2% timing noise: the same speed`` (or without the verdict when the mean is outside the band)."""
    band = combined_band([bands[k] for k in ratios])
    if not math.isfinite(band):
        return ", timing noise unknown"
    same = abs(math.log(mean)) <= math.log1p(band)
    return f", ±{band:.1%} timing noise" + (": the same speed" if same else "")


def _per_matrix_text(ratios: dict, bands: dict) -> str:
    """``faster on 2 of 8 matrices, slower on 3, the same within timing noise on 3``: each matrix's speedup
    against its own band."""
    faster = slower = 0
    for key, ratio in ratios.items():
        edge = math.log1p(bands[key]) if math.isfinite(bands[key]) else math.inf
        faster += math.log(ratio) > edge
        slower += math.log(ratio) < -edge
    same = len(ratios) - faster - slower
    return (f"faster on {faster} of {len(ratios)} matrices, slower on {slower}, the same within timing noise "
            f"on {same}")
