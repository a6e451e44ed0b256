"""Call overhead: what one SpMV call costs, host and GPU together, against the cheapest launches.

For each matrix and dtype every *way of calling* a product is timed twice, on a non-default
stream: **back to back** (N calls from a Python loop, then one stream synchronisation; the time
over N, N chosen so that the loop lasts about 30 ms, the median of a few loops after a warm-up)
and **one synchronous call** (the call and a stream synchronisation, the median of many).  The
ways of calling (:mod:`.overhead_methods`) are Cocktail's ``A.matvec(x, out=y)``, ``A @ x`` and the bound
product ``A.bind(x, out=y)()``, cupyx, torch and cuSPARSE, and the floors: one empty kernel launch
and one replay of a CUDA graph holding it.  Every record carries its times over the floors' of the
same matrix and dtype; :mod:`.targets` turns them into verdicts.

The timing takes any callable and a ``sync`` callable, so the logic runs on the CPU with
stand-ins; only the methods' ``prepare`` touch CuPy.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import scipy.sparse as sp

from .methods import Inputs, Unavailable
from .overhead_ways import EMPTY_GRAPH, EMPTY_LAUNCH, METHODS
from ..records import wrong
from ..records.record import OVERHEAD, Record
from ..runner import Problem, stream_for

#: The small matrix, where host time dominates: rows, nonzeros per row, name.
SMALL_ROWS, SMALL_PER_ROW = 10_000, 5
SMALL_NAME = "random10k"
SMALL_KIND = "random: 10,000 rows, 5 nonzeros per row (host time dominates)"

#: Back to back: how long one timed loop should last, and how many loops give the median.
TARGET_SECONDS, LOOPS = 0.03, 5
MAX_CALLS = 200_000
#: One synchronous call: the least samples, and the time after which fewer (not under 10) will do.
SYNC_BUDGET_SECONDS = 0.5


def small_matrix(rows: int = SMALL_ROWS, per_row: int = SMALL_PER_ROW, seed: int = 8) -> sp.csr_array:
    """A square random matrix with exactly ``per_row`` distinct columns in every row (fixed seed)."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, rows, size=(rows, 1))
    gaps = rng.integers(1, rows // per_row, size=(rows, per_row - 1))  # the gaps sum to less than rows
    cols = (start + np.concatenate([np.zeros((rows, 1), dtype=gaps.dtype), np.cumsum(gaps, axis=1)], axis=1)) % rows
    S = sp.csr_array((rng.standard_normal(rows * per_row), (np.repeat(np.arange(rows), per_row), cols.ravel())),
                     shape=(rows, rows))
    S.sort_indices()
    return S


def small_problem() -> Problem:
    """The small matrix as a benchmark problem (suite ``overhead``)."""
    return Problem(OVERHEAD, SMALL_NAME, SMALL_KIND, small_matrix())


def back_to_back(call, sync, target_seconds: float = TARGET_SECONDS, loops: int = LOOPS, warmup: int = 3,
                 max_calls: int = MAX_CALLS) -> tuple[float, int]:
    """Per-call microseconds of ``call`` issued N times in a row before one ``sync``, and N.

    N grows from 1 until a loop lasts an eighth of ``target_seconds``, then is scaled so that a
    loop lasts about ``target_seconds``; the result is the median over ``loops`` loops.
    """
    for _ in range(warmup):
        call()
    sync()

    def loop(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        sync()
        return time.perf_counter() - t0

    n, elapsed = 1, loop(1)
    while elapsed < target_seconds / 8 and n < max_calls:
        n = min(4 * n, max_calls)
        elapsed = loop(n)
    n = max(1, min(max_calls, round(n * target_seconds / elapsed))) if elapsed > 0 else max_calls
    return statistics.median(loop(n) / n for _ in range(loops)) * 1e6, n


def sync_call(call, sync, least: int = 100, budget_seconds: float = SYNC_BUDGET_SECONDS) -> tuple[float, int]:
    """Median microseconds of one ``call`` and ``sync``, and the sample count: ``least`` samples, fewer
    (not under 10) once they add up to ``budget_seconds``."""
    call()
    sync()
    samples, spent = [], 0.0
    while len(samples) < least and (len(samples) < 10 or spent < budget_seconds):
        t0 = time.perf_counter()
        call()
        sync()
        samples.append(time.perf_counter() - t0)
        spent += samples[-1]
    return statistics.median(samples) * 1e6, len(samples)


def measure(method, inputs: Inputs, rec: Record, sync, repeat: int = 100,
            target_seconds: float = TARGET_SECONDS) -> None:
    """Fill ``rec`` with ``method``'s back-to-back and synchronous per-call times on ``inputs``.

    The first of the prepared calls is timed; the result is then checked against the float64
    answer where the method has one (the floors have none).
    """
    t0 = time.perf_counter()
    prep = method.prepare(inputs)
    rec.setup_ms = (time.perf_counter() - t0) * 1e3
    try:
        rec.method, rec.params = prep.label, prep.params
        call = prep.calls[0]
        rec.back_to_back_us, rec.back_to_back_calls = back_to_back(call, sync, target_seconds)
        rec.sync_call_us, rec.samples = sync_call(call, sync, least=repeat)
        if inputs.y_dev is not None:
            inputs.y_dev.fill(np.nan)  # a call that writes nothing must not pass on an earlier answer
        got = prep.result()
        if got is not None:
            rec.rel_err = inputs.rel_err(got)
            wrong.flag(rec)
    finally:
        prep.close()


def add_floor_ratios(records) -> None:
    """Fill each record's times over the floors (``empty-launch``, ``empty-graph``) of its matrix and dtype;
    none for a wrong answer (:func:`~..records.wrong.is_wrong`): its time is no call of the product."""
    floors = {}
    for r in records:
        if r.method in (EMPTY_LAUNCH, EMPTY_GRAPH) and r.back_to_back_us and r.sync_call_us and wrong.usable(r):
            floors[(r.suite, r.matrix, r.dtype, r.method)] = r
    for r in records:
        if wrong.is_wrong(r):
            continue
        key = (r.suite, r.matrix, r.dtype)
        launch, graph = floors.get(key + (EMPTY_LAUNCH,)), floors.get(key + (EMPTY_GRAPH,))
        r.over_empty_launch = _over(r, launch, "back_to_back_us")
        r.over_empty_graph = _over(r, graph, "back_to_back_us")
        r.sync_over_empty_launch = _over(r, launch, "sync_call_us")
        r.sync_over_empty_graph = _over(r, graph, "sync_call_us")


def _over(record: Record, floor: Record | None, key: str) -> float | None:
    value = getattr(record, key)
    return None if value is None or floor is None else value / getattr(floor, key)


def run(problems, dtypes, methods=METHODS, on_gpu: bool = True, repeat: int = 100,
        target_seconds: float = TARGET_SECONDS, progress=None) -> list[Record]:
    """One overhead record per (problem, dtype, method), all on one non-default stream.

    A method that cannot run gets a record whose ``note`` says why, and the run goes on.
    ``on_gpu=False`` runs stand-in methods on the host (their ``sync`` does nothing).
    """
    records = []
    with stream_for(on_gpu) as stream:
        sync = stream.synchronize if stream is not None else (lambda: None)
        for p in problems:
            for dtype in dtypes:
                inputs = Inputs.create(p.S, dtype, on_gpu)
                group = []
                for method in methods:
                    rec = Record(p.suite, p.name, p.S.shape[0], p.S.shape[1], int(p.S.nnz), np.dtype(dtype).name,
                                 method.name, section=OVERHEAD, kind=p.kind, family=p.family)
                    try:
                        measure(method, inputs, rec, sync, repeat, target_seconds)
                    except Unavailable as exc:
                        rec.note = str(exc)
                    except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
                        rec.note = f"error: {type(exc).__name__}: {exc}"
                    group.append(rec)
                    if progress:
                        progress(rec)
                add_floor_ratios(group)
                records += group
                del inputs
                if on_gpu:
                    import cupy

                    cupy.get_default_memory_pool().free_all_blocks()
    return records
