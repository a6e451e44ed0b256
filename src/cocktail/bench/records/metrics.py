"""Benchmark metrics and suite summaries (Bell & Garland §5; Flegar & Anzt §4: Fig. 7, Table 1, Fig. 9).

Records are dictionaries with at least ``matrix``, ``dtype``, ``method`` and a time in
microseconds (``kernel_us``, or ``time_us`` for older records); refused measurements have
no time and are left out of every summary, except the performance profile, where a problem a
method did not run counts against it.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict


def gflops(nnz: int, seconds: float) -> float:
    """SpMV rate: 2 flops per stored entry (a multiply and an add) over the time."""
    return 2.0 * nnz / seconds / 1e9


def gbps(nbytes: int, seconds: float) -> float:
    """Effective bandwidth: the bytes a format's model says one SpMV moves, over the time."""
    return nbytes / seconds / 1e9


def bandwidth_fraction(effective_gbps: float, copy_gbps: float) -> float:
    """Effective bandwidth as a fraction of the device's measured copy bandwidth."""
    return effective_gbps / copy_gbps


def geomean(values) -> float:
    """Geometric mean of positive numbers (NaN for none)."""
    values = [float(v) for v in values]
    if not values:
        return math.nan
    if any(v <= 0 for v in values):
        raise ValueError("geometric mean needs positive values")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def time_us(record) -> float | None:
    """A record's time in microseconds (kernel time; ``time_us`` in older records), None if it did not run."""
    t = record.get("kernel_us", record.get("time_us"))
    return None if t is None else float(t)


def times_by_problem(records) -> dict:
    """``{(suite, matrix, dtype): {method: time_us}}`` for the measured records."""
    table = defaultdict(dict)
    for r in records:
        t = time_us(r)
        if t is not None and t > 0:
            table[(r.get("suite", ""), r["matrix"], r["dtype"])][r["method"]] = t
    return dict(table)


def speedups(records, baseline: str) -> dict:
    """``{method: {(suite, matrix, dtype): baseline_time / method_time}}`` where both were measured."""
    out = defaultdict(dict)
    for problem, times in times_by_problem(records).items():
        if baseline not in times:
            continue
        for method, t in times.items():
            out[method][problem] = times[baseline] / t
    return dict(out)


def geomean_speedups(records, baseline: str) -> dict:
    """Geometric-mean speedup of every method over ``baseline`` across the problems both ran."""
    return {method: geomean(per.values()) for method, per in speedups(records, baseline).items()}


def win_lose(records, tie: float = 0.0) -> dict:
    """Flegar & Anzt Fig. 7: per method, problems where it was fastest, slowest, or in between.

    Only problems with at least two measured methods count; ties count for every tied method.  A time
    within ``tie`` (a fraction) of the fastest counts as fastest too.
    """
    counts = defaultdict(lambda: {"win": 0, "lose": 0, "ballpark": 0})
    for times in times_by_problem(records).values():
        if len(times) < 2:
            continue
        best, worst = min(times.values()), max(times.values())
        for method, t in times.items():
            key = "win" if t <= best * (1 + tie) else "lose" if t == worst else "ballpark"
            counts[method][key] += 1
    return {m: dict(c) for m, c in counts.items()}


def gflops_statistics(records) -> dict:
    """Flegar & Anzt Table 1: min, max, mean, median and standard deviation of GFLOP/s per method."""
    rates = defaultdict(list)
    for r in records:
        t = time_us(r)
        if t is not None and t > 0:
            rates[r["method"]].append(gflops(int(r["nnz"]), t * 1e-6))
    return {
        m: {"min": min(v), "max": max(v), "mean": statistics.fmean(v), "median": statistics.median(v),
            "stddev": statistics.pstdev(v), "count": len(v)}
        for m, v in rates.items()
    }


def performance_ratios(records) -> dict:
    """``{method: {problem: time / best time}}`` over every problem some method ran.

    A method's ratio is ``inf`` on a problem where it did not run (refused, failed, or no record),
    so it is never within any factor of the best there.  Every method named in ``records`` appears.
    """
    table = times_by_problem(records)
    methods = dict.fromkeys(r["method"] for r in records)
    ratios = {m: {} for m in methods}
    for problem, times in table.items():
        best = min(times.values())
        for m in methods:
            ratios[m][problem] = times[m] / best if m in times else math.inf
    return ratios


def performance_profile(records, taus) -> dict:
    """Dolan & More's performance profile (Flegar & Anzt Fig. 9): ``{method: [rho(tau) for tau in taus]}``.

    ``rho(tau)`` is the fraction of problems on which the method's time is within a factor ``tau``
    of the fastest method's; a problem the method did not run counts against it, so its curve
    stays below 1.  Problems are those some method ran.
    """
    return profile_of(performance_ratios(records), taus)


def profile_of(ratios, taus) -> dict:
    """:func:`performance_profile` from the :func:`performance_ratios` already computed."""
    taus = [float(t) for t in taus]
    out = {}
    for method, per in ratios.items():
        values = list(per.values())
        n = len(values)
        out[method] = [sum(r <= tau for r in values) / n if n else 0.0 for tau in taus]
    return out
