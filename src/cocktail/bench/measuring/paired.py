"""The CPU headline's two methods timed side by side: ``cocktail-auto`` and SciPy, call for call.

Timed one after the other, two methods meet different moments of a shared machine (another
process, the clock, the caches): on identical code the CPU headline read 1.16x, 1.01x and 1.01x.
Timed in rounds, both meet the same moments.  The order within a round matters too (the second
call runs after the other method's, its caches cold: rounds with A first and B first differed by
2.5-3%), so one *sample* is a round A B and a round B A, ``A B B A``, and its ratio is the geometric
mean of the two rounds' ratios: each method is timed once first and once second, and the order
cancels.  The samples' median is the paired speedup; :func:`median_interval` is its 95% interval.

Each method's own time is the median of its calls that follow a call of its own (the first A of
``A | A B B A``, the second B): timed as every method timed alone is, so the two compare with the
others (the headline's "fastest of N") on the same footing.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

from ...timing import Timing

#: Samples (an A B round and a B A round each) of the pair: this many times ``repeat``, fewer past the budget.
PAIRS_PER_REPEAT = 3
#: The least samples, whatever the budget: the fewest with a 95% interval of their median (:func:`order_index`).
MIN_PAIRS = 6
#: The interval's confidence.
CONFIDENCE = 0.95
#: The shortest time a call is taken to last (a ratio needs no zero).
_TICK = 1e-9


@dataclass(frozen=True)
class PairTiming:
    """The pair's times and A's speedup over B: the median of the samples' ratios (B's time over A's) and
    its :data:`CONFIDENCE` interval (``low`` and ``high`` None with too few samples)."""

    a: Timing
    b: Timing
    ratio: float
    low: float | None
    high: float | None


def time_pair(calls_a, calls_b, repeat: int, budget_seconds: float) -> PairTiming:
    """``calls_a`` and ``calls_b`` (each rotated) timed in samples of ``A B B A`` (module docstring).

    ``PAIRS_PER_REPEAT * repeat`` samples, or fewer (not under :data:`MIN_PAIRS`) once the calls' time adds
    up to ``budget_seconds``.
    """
    calls_b[0]()  # warm-up, A last: each sample's first call follows one of its own
    calls_a[0]()
    most = max(MIN_PAIRS, PAIRS_PER_REPEAT * repeat)
    own_a, own_b, ratios, spent = [], [], [], 0.0
    while len(ratios) < most and (len(ratios) < MIN_PAIRS or spent < budget_seconds):
        i = 2 * len(ratios)
        a_after_a = _timed(calls_a[i % len(calls_a)])
        b_after_a = _timed(calls_b[i % len(calls_b)])
        b_after_b = _timed(calls_b[(i + 1) % len(calls_b)])
        a_after_b = _timed(calls_a[(i + 1) % len(calls_a)])
        ratios.append(math.sqrt(b_after_a / a_after_a * b_after_b / a_after_b))
        own_a.append(a_after_a)
        own_b.append(b_after_b)
        spent += a_after_a + b_after_a + b_after_b + a_after_b
    interval = median_interval(ratios)
    low, high = interval if interval else (None, None)
    return PairTiming(_timing(own_a), _timing(own_b), statistics.median(ratios), low, high)


def _timed(call) -> float:
    t0 = time.perf_counter()
    call()
    return max(time.perf_counter() - t0, _TICK)


def _timing(times) -> Timing:
    median_us = statistics.median(times) * 1e6
    return Timing(median_us, median_us, "cpu", len(times))


def order_index(n: int, confidence: float = CONFIDENCE) -> int | None:
    """The largest ``l`` with ``P(Binomial(n, 1/2) <= l) <= (1 - confidence) / 2``, or None where there is none
    (fewer than 6 samples at 95%).

    Of ``n`` sorted samples, the ``l``-th and the ``(n - 1 - l)``-th (counted from 0) then hold the median of
    the population they come from with at least ``confidence``, whatever its distribution: the exact
    distribution-free interval (the count of samples below the median is Binomial(n, 1/2)).
    """
    alpha = (1 - confidence) / 2
    cdf, low = 0.0, None
    for l in range(n):
        cdf += math.comb(n, l) / 2 ** n
        if cdf > alpha:
            break
        low = l
    return low


def median_interval(samples, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """``(low, high)``: the order statistics of ``samples`` that hold their population's median with at least
    ``confidence`` (:func:`order_index`); None with too few samples to say."""
    low = order_index(len(samples), confidence)
    if low is None:
        return None
    ordered = sorted(samples)
    return ordered[low], ordered[len(ordered) - 1 - low]


def combined_interval(points) -> tuple[float, float, float] | None:
    """``(geomean, low, high)`` of per-matrix ``(ratio, low, high)`` speedups: the geometric mean of the ratios,
    each side of its interval the matrices' sides (log distances to their ratio) added in quadrature over the
    count (independent errors); None without points or where a matrix's interval is unknown."""
    points = list(points)
    if not points or any(lo is None or hi is None for _, lo, hi in points):
        return None
    logs = [math.log(r) for r, _, _ in points]
    mean = sum(logs) / len(logs)
    below = math.sqrt(sum(math.log(r / lo) ** 2 for r, lo, _ in points)) / len(points)
    above = math.sqrt(sum(math.log(hi / r) ** 2 for r, _, hi in points)) / len(points)
    return math.exp(mean), math.exp(mean - below), math.exp(mean + above)


def speedup(record, base) -> float | None:
    """``base``'s time over ``record``'s: the paired median ratio where the two were timed together, else the
    ratio of their kernel times; None where either lacks a time (a wrong answer's is blanked)."""
    a, b = record.get("kernel_us"), base.get("kernel_us")
    if not a or not b:
        return None
    if record.get("paired_with") == base.get("method") and record.get("paired_ratio"):
        return float(record["paired_ratio"])
    return b / a
