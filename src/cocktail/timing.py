"""The one GPU timer, below both the planner and the benchmark: kernel time, call time, CPU time and
the device's copy bandwidth.

*Kernel time* amortises the host: the calls (one per input buffer, so consecutive calls read
different ``x`` vectors) are captured once in a CUDA graph and the graph is replayed, with a
pair of CUDA events around each replay.  A method whose calls cannot be captured (cupyx
refuses stream capture) has its calls issued back to back from Python behind a queued busy
wait, so that the GPU, not the host, sets the pace between the events.  *Call time* is one
synchronous call as a user makes it: host clock around the call and a stream synchronisation.
Both are medians over at least ``repeat`` samples; a sample of a tiny matrix is short, so its
count grows until the samples add up to ``min_seconds``.  The planner's race times a plan with
:func:`replay_us`: the same graph replays, fewer of them.
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass

#: Upper bound on the adaptive sample count, as a multiple of ``repeat``.
MAX_REPEAT_FACTOR = 20
#: Back-to-back samples queued behind one busy wait (few enough that the launch queue never fills).
BATCH = 25


@dataclass
class Timing:
    """Median kernel and call times of one method, in microseconds."""

    kernel_us: float
    call_us: float
    kernel_timing: str  # "graph", "back-to-back" or "cpu"
    samples: int


def sample_count(estimate_s: float, repeat: int, min_seconds: float) -> int:
    """At least ``repeat`` samples, more for short ones until they add up to ``min_seconds``."""
    if estimate_s <= 0:
        return repeat * MAX_REPEAT_FACTOR
    return max(repeat, min(repeat * MAX_REPEAT_FACTOR, int(min_seconds / estimate_s) + 1))


def capture(calls, stream, strict: bool = False):
    """A CUDA graph of ``calls`` on ``stream``, or None when they cannot be captured.

    ``strict``: the calls' own exception propagates instead (the capture ended first), and a capture
    that CUDA invalidated raises ``RuntimeError`` from CUDA's error.
    """
    stream.begin_capture()
    try:
        for call in calls:
            call()
    except Exception:  # the method refused capture (cupyx does); it is timed uncaptured
        _end_capture(stream)
        if strict:
            raise
        return None
    except BaseException:  # an interrupt: the stream must not stay capturing
        _end_capture(stream)
        raise
    try:
        return stream.end_capture()
    except Exception as exc:  # an invalidated capture
        if strict:
            raise RuntimeError("the capture was invalidated: the calls cannot be timed as a CUDA graph") from exc
        return None


def _end_capture(stream) -> None:
    """End the capture under way on ``stream`` after a failed call, whatever state CUDA left it in."""
    try:
        stream.end_capture()
    except Exception:
        pass


def side_stream():
    """A non-blocking stream of its own that starts only after the work queued so far on the current stream
    (the operands a timing reads were built and filled there: it must not read arrays still being written)."""
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)
    built = cupy.cuda.Event()
    built.record(cupy.cuda.get_current_stream())
    stream.wait_event(built)
    return stream


def replay_us(call, calls: int, replays: int) -> float:
    """Median µs of one ``call`` (which enqueues one product on the current stream) from ``replays``
    timed replays of a CUDA graph of ``calls`` calls: the planner's timing, shorter than :func:`time_gpu`.

    The current stream must not be the default one (capture needs its own). One call runs first and
    one replay untimed (lazy work outside the timing); the timed replays are queued back to back, as
    :func:`time_gpu` queues its graph replays. The calls' own exception propagates (:func:`capture`
    with ``strict``).
    """
    import cupy

    stream = cupy.cuda.get_current_stream()
    call()
    graph = capture([call] * calls, stream, strict=True)
    graph.launch(stream)
    ms = event_samples(lambda: graph.launch(stream), replays, stream)
    return statistics.median(ms) * 1e3 / calls


def executor_us(executor, shape, dtype, calls: int, replays: int) -> float:
    """Median µs of one product ``y = A @ x`` of ``executor`` (an m x n matrix of ``shape`` and ``dtype``), from
    ``replays`` timed replays of a CUDA graph of ``calls`` products (:func:`replay_us`) on a stream of its own."""
    import cupy

    m, n = shape
    x = cupy.random.default_rng(0).standard_normal(n).astype(dtype)
    y = cupy.zeros(m, dtype=dtype)
    with side_stream():
        return replay_us(lambda: executor.run(x, y, 1, 0), calls, replays)


def event_samples(enqueue, count: int, stream) -> list[float]:
    """Milliseconds between CUDA events around ``count`` calls of ``enqueue``."""
    import cupy

    pairs = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(count)]
    for start, end in pairs:
        start.record(stream)
        enqueue()
        end.record(stream)
    pairs[-1][1].synchronize()
    return [cupy.cuda.get_elapsed_time(start, end) for start, end in pairs]


@functools.lru_cache(maxsize=None)
def _clock_khz(device_id: int) -> int:
    """The clock rate of device ``device_id`` in kHz (reading every attribute of a device costs a while: once)."""
    import cupy

    return cupy.cuda.Device(device_id).attributes["ClockRate"]


def spin(seconds: float, stream) -> None:
    """Queue a busy wait of about ``seconds`` (at most one second) on ``stream``."""
    import cupy
    import numpy as np

    from .kernels import source

    cycles = int(min(seconds, 1.0) * _clock_khz(cupy.cuda.Device().id) * 1e3)
    source.helper("spin", "spin")((1,), (1,), (np.int64(cycles),), stream=stream)


def time_gpu(calls, repeat: int = 100, warmup: int = 3, min_seconds: float = 0.05,
             use_graph: bool = True) -> Timing:
    """Kernel and call time of ``calls``: callables that each enqueue one product on the current stream.

    Every callable is one product (on its own input buffer); the caller makes the current
    stream a non-default one, which graph capture needs.
    """
    import cupy

    stream = cupy.cuda.get_current_stream()
    for _ in range(warmup):
        for call in calls:
            call()
    stream.synchronize()
    t0 = time.perf_counter()
    for call in calls:
        call()
    stream.synchronize()
    estimate = (time.perf_counter() - t0) / len(calls)

    graph = capture(calls, stream) if use_graph else None
    if graph is not None:
        graph.launch(stream)  # first replay outside the timing
        enqueue, mode = (lambda: graph.launch(stream)), "graph"
    else:
        def enqueue():
            for call in calls:
                call()
        mode = "back-to-back"
    count = sample_count(estimate * len(calls), repeat, min_seconds)
    if graph is None:
        # The host is slower than the GPU here: a busy wait queued first keeps the GPU behind the
        # host, so the samples measure the products, not the Python between them.
        ms = []
        for start in range(0, count, BATCH):
            batch = min(BATCH, count - start)
            spin(2.0 * batch * estimate * len(calls), stream)
            ms += event_samples(enqueue, batch, stream)
    else:
        ms = event_samples(enqueue, count, stream)
    per_call_ms = [t / len(calls) for t in ms]

    call_s = []
    for i in range(sample_count(estimate, repeat, min_seconds)):
        call = calls[i % len(calls)]
        t0 = time.perf_counter()
        call()
        stream.synchronize()
        call_s.append(time.perf_counter() - t0)
    return Timing(statistics.median(per_call_ms) * 1e3, statistics.median(call_s) * 1e6, mode, count)


def time_cpu(calls, repeat: int = 20, budget_seconds: float = 2.0) -> Timing:
    """Median host time of ``calls`` (rotated): ``repeat`` samples, or fewer (not under 3) past the budget."""
    calls[0]()  # warm-up
    times = []
    spent = 0.0
    while len(times) < repeat and (len(times) < 3 or spent < budget_seconds):
        call = calls[len(times) % len(calls)]
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        spent += times[-1]
    median_us = statistics.median(times) * 1e6
    return Timing(median_us, median_us, "cpu", len(times))


def copy_bandwidth(nbytes: int = 1 << 30, repeat: int = 20) -> float:
    """The device's measured copy bandwidth in GB/s: a device-to-device copy, read plus write bytes.

    ``nbytes`` shrinks to a quarter of the free memory when that is less.
    """
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    nbytes = max(1 << 20, min(nbytes, free // 4))
    src = cupy.ones(nbytes // 8, dtype=cupy.float64)
    dst = cupy.empty_like(src)
    stream = cupy.cuda.get_current_stream()
    kind = cupy.cuda.runtime.memcpyDeviceToDevice

    def copy():
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, kind, stream.ptr)

    copy()
    ms = statistics.median(event_samples(copy, repeat, stream))
    return 2 * src.nbytes / (ms * 1e-3) / 1e9
