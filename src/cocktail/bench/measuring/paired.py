"""The CPU headline's two methods timed side by side: ``cocktail-auto`` and SciPy, call for call.

Timed one after the other, two methods meet different moments of a shared machine (another
process, the clock, the caches): on identical code the CPU headline read 1.16x, 1.01x and 1.01x.
Timed in rounds of one call each, in alternating order (A B, then B A), both meet the same
moments, and each round's ratio is a paired sample of the speedup.  The spread of those ratios
gives the noise band the headline prints (:func:`noise_band`).
"""

from __future__ import annotations

import math
import statistics
import time

from ...timing import Timing

#: Rounds of the pair: this many times ``repeat`` (at least 3), fewer past the time budget.
ROUNDS_PER_REPEAT = 5
#: The least rounds, whatever the budget.
MIN_ROUNDS = 3
#: z of the two-sided 95% band.
Z95 = 1.96


def time_pair(calls_a, calls_b, repeat: int, budget_seconds: float) -> tuple[Timing, Timing, float]:
    """Median host times of ``calls_a`` and ``calls_b`` (each rotated), timed in alternating rounds, and the
    :func:`noise_band` of their ratio.

    ``ROUNDS_PER_REPEAT * repeat`` rounds, or fewer (not under :data:`MIN_ROUNDS`) once both methods'
    time adds up to ``budget_seconds``.
    """
    calls_a[0]()  # warm-up
    calls_b[0]()
    rounds = max(MIN_ROUNDS, ROUNDS_PER_REPEAT * repeat)
    times_a, times_b, spent = [], [], 0.0
    while len(times_a) < rounds and (len(times_a) < MIN_ROUNDS or spent < budget_seconds):
        i = len(times_a)
        order = ((calls_a, times_a), (calls_b, times_b)) if i % 2 == 0 else ((calls_b, times_b), (calls_a, times_a))
        for calls, times in order:
            call = calls[i % len(calls)]
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
            spent += times[-1]
    band = noise_band([b / a for a, b in zip(times_a, times_b)])
    return _timing(times_a), _timing(times_b), band


def _timing(times) -> Timing:
    median_us = statistics.median(times) * 1e6
    return Timing(median_us, median_us, "cpu", len(times))


def noise_band(ratios) -> float:
    """Half the width of the 95% confidence band of the median of paired ratios, as a fraction (0.02: ±2%).

    Distribution-free: the band runs between the order statistics of the log ratios that bound the
    median with 95% confidence (binomial, normal approximation); with too few samples for that, the
    whole range.
    """
    logs = sorted(math.log(r) for r in ratios if r > 0)
    n = len(logs)
    if n < 2:
        return math.inf
    low = max(0, math.floor((n - Z95 * math.sqrt(n)) / 2))
    high = min(n - 1, n - 1 - low)
    return math.expm1((logs[high] - logs[low]) / 2)


def combined_band(bands) -> float:
    """The band of a geometric mean of ratios whose bands are ``bands``: independent errors in the logs, added
    in quadrature over the count."""
    logs = [math.log1p(b) for b in bands]
    return math.expm1(math.sqrt(sum(x * x for x in logs)) / len(logs)) if logs else math.inf
