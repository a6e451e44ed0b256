"""Timing on the GPU with CUDA events: warm-up, then the median of many timed calls."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Timing:
    """Per-call times in microseconds and their median."""

    median_us: float
    times_us: list


def time_gpu(fn, repeat: int = 200, warmup: int = 10) -> Timing:
    """Time ``fn()`` (which enqueues GPU work on the current stream) with a pair of CUDA events per call.

    ``warmup`` untimed calls first keep compilation and first-touch costs out of the numbers.
    """
    import cupy

    stream = cupy.cuda.get_current_stream()
    for _ in range(warmup):
        fn()
    stream.synchronize()
    starts = [cupy.cuda.Event() for _ in range(repeat)]
    ends = [cupy.cuda.Event() for _ in range(repeat)]
    for start, end in zip(starts, ends):
        start.record(stream)
        fn()
        end.record(stream)
    ends[-1].synchronize()
    times = [cupy.cuda.get_elapsed_time(s, e) * 1e3 for s, e in zip(starts, ends)]
    return Timing(statistics.median(times), times)
