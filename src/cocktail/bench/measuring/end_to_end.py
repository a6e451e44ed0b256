"""End to end: the user's whole job, building a matrix and then N products ``A @ x`` with it.

Per problem, dtype, source (``build_from``: the host's SciPy matrix, or on the GPU also a cupyx matrix
already on the device) and method (:mod:`.end_to_end_jobs`: ``cocktail-auto``, cupyx and torch on the
GPU, ``cocktail-auto`` and SciPy on the CPU), one record per N of :data:`GPU_MARKS` (CPU: :data:`CPU_MARKS`)
with ``build_us`` and ``total_us``.

How one *repetition* is timed: the stream is synchronised, the host clock read, the matrix built and the
stream synchronised again: ``build_us``.  Then the products run back to back from a Python loop, as a
user's loop runs them, each ``y = A @ x`` allocating its result, the ``x`` read in turn from 4 vectors
(a solver multiplies a new vector each iteration, and no product re-reads the ``x`` its predecessor just
read: the SpMV section's rotation).  Nothing waits at the marks: on the GPU a CUDA event is recorded after
the product that completes each mark, and one before the first product; the stream is synchronised
once, after the last product, and ``total_us(N) = build_us + elapsed(first event, event of mark N)``,
the time at which the N-th product was done (the final synchronisation's return, a few µs, left out).
On the CPU the host clock is read at each mark instead.  One repetition thus gives every N at once:
nothing is rebuilt per N.

Each method is first built and run twice untimed on the same problem and source (CuPy, cupyx and torch
compile or load their kernels on first use, once a process; that cost belongs to no matrix's build).
Then the whole (build + products) is repeated :data:`REPEATS` times, the methods taking turns in each
round, and each figure is the median over the repetitions.  The decision cache of ``format="auto"`` is
off throughout, so that every build of ours pays its own decision, as a user's first build of a
structure does.

The products of a repetition stop at a time budget (:data:`GPU_BUDGET_S`, :data:`CPU_BUDGET_S` of products
by the host clock after the build): the first repetition runs until the last mark or the budget, and the
later ones up to the last mark the first reached.  A record of a mark beyond the budget has no
``total_us`` and says so in its note (how many products ran), rather than extrapolating.  Each method's
answer (``A @ x`` of the last repetition's matrix) is checked against the float64 product as in the
other sections (:mod:`..records.wrong`), after every round of its problem and source.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from .end_to_end_jobs import CPU_METHODS, DEVICE, GPU_METHODS, HOST, device_source
from .methods import Inputs, Unavailable
from ..records import wrong
from ..records.record import END_TO_END, Record

#: The product counts a record is kept at, on the GPU and on the CPU (where 1,000 products of the CPU suite
#: would take seconds a matrix: the default run's section stays within a few seconds in all).
GPU_MARKS = (1, 10, 100, 1_000, 10_000)
CPU_MARKS = (1, 10, 100)
#: Repetitions of the whole job; each figure is their median.
REPEATS = 3
#: Seconds of products a repetition may run after its build, by the host clock.
GPU_BUDGET_S, CPU_BUDGET_S = 2.0, 0.5
#: How a record beyond the budget's note starts.
BUDGET_NOTE = "beyond the time budget"


@dataclass(frozen=True)
class Plan:
    """What the section runs: the product counts kept, the repetitions and the products' time budget."""

    marks: tuple = GPU_MARKS
    repeats: int = REPEATS
    budget_s: float = GPU_BUDGET_S


def plan_for(on_gpu: bool) -> Plan:
    """The section's marks, repetitions and budget on the GPU or on the CPU."""
    return Plan() if on_gpu else Plan(CPU_MARKS, REPEATS, CPU_BUDGET_S)


class HostClock:
    """The CPU's clock: the host clock at each mark, nothing to synchronise."""

    def sync(self) -> None:
        """Nothing runs asynchronously on the CPU."""

    def mark(self):
        """The host clock now."""
        return time.perf_counter()

    def seconds(self, start, end) -> float:
        """Seconds between two marks."""
        return end - start


class EventClock:
    """The GPU's clock: a CUDA event recorded on ``stream`` at each mark, read after one synchronisation."""

    def __init__(self, stream):
        self.stream = stream

    def sync(self) -> None:
        """Wait for the stream's work."""
        self.stream.synchronize()

    def mark(self):
        """A CUDA event recorded on the stream now."""
        import cupy

        event = cupy.cuda.Event()
        event.record(self.stream)
        return event

    def seconds(self, start, end) -> float:
        """Seconds between two recorded events (both done: after :meth:`sync`)."""
        import cupy

        return cupy.cuda.get_elapsed_time(start, end) * 1e-3


@dataclass
class Repetition:
    """One timed job: its build's seconds, the total seconds at each mark reached, the products it ran and
    the matrix it built."""

    build_s: float
    totals: dict
    ran: int
    matrix: object


def repetition(job, clock, marks, budget_s: float | None, stop_at: int | None = None) -> Repetition:
    """Build ``job``'s matrix and run its products up to the last of ``marks`` (or ``stop_at``), stopping
    once the products have run ``budget_s`` seconds by the host clock (``None``: no budget); the totals of
    the marks reached (see the module's docstring for the clock)."""
    clock.sync()
    t0 = time.perf_counter()
    A = job.build()
    clock.sync()
    built = time.perf_counter()
    build_s = built - t0
    wanted = set(marks)
    last = stop_at if stop_at is not None else marks[-1]
    start, stamps, ran = clock.mark(), {}, 0
    for i in range(1, last + 1):
        job.multiply(A, i)
        ran = i
        if i in wanted:
            stamps[i] = clock.mark()
        if budget_s is not None and time.perf_counter() - built > budget_s:
            break
    clock.sync()
    return Repetition(build_s, {n: build_s + clock.seconds(start, s) for n, s in stamps.items()}, ran, A)


@dataclass
class Timed:
    """One method's job on one problem and source, and what the repetitions gave (or why it did not run)."""

    method: object
    job: object = None
    reps: list = None
    rel_err: float | None = None
    params: dict = None
    note: str = ""
    answer: object = None  # the last repetition's A @ x, checked after every round


def _failure(exc: Exception) -> str:
    return str(exc) if isinstance(exc, Unavailable) else f"error: {type(exc).__name__}: {exc}"


def measure(methods, inputs: Inputs, source, build_from: str, clock, plan: Plan, on_gpu: bool) -> list[Timed]:
    """The jobs of ``methods`` on one problem and source: warmed, then :attr:`Plan.repeats` rounds in which
    each takes its turn (the first round's budget sets every later round's last product), then each
    answer checked.  A method that cannot run, or fails, is kept with its note and the others go on."""
    timed = [Timed(m) for m in methods]
    for t in timed:
        try:
            t.job = t.method.job(inputs, source, build_from, on_gpu)
            A = t.job.build()
            t.job.multiply(A, 1)
            t.job.multiply(A, 2)
            clock.sync()
            t.reps = []
        except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
            t.note = _failure(exc)
        finally:
            A = None
    for round_ in range(plan.repeats):
        for t in (t for t in timed if not t.note):
            try:
                _one_round(t, clock, plan, inputs, last=round_ == plan.repeats - 1)
            except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
                t.note, t.reps = _failure(exc), []
    for t in timed:
        if t.job is not None:
            t.job.close()
            t.job = None
        if not t.note:  # after every round: the check's arithmetic runs between no two timings
            t.rel_err, t.answer = relative_error(t.answer, inputs.want), None
    return timed


def _one_round(t: Timed, clock, plan: Plan, inputs: Inputs, last: bool) -> None:
    """One repetition of ``t``'s job; the first under the budget; the last also keeps its matrix's answer
    ``A @ x`` and params."""
    stop_at = max(t.reps[0].totals) if t.reps else None
    rep = repetition(t.job, clock, plan.marks, None if t.reps else plan.budget_s, stop_at)
    if last:
        t.params = {**t.job.params, **t.job.describe(rep.matrix)}
        t.answer = t.job.answer(t.job.multiply(rep.matrix, 0))
        clock.sync()
    rep.matrix = None
    t.reps.append(rep)


def relative_error(got, want) -> float:
    """:func:`.methods.relative_error`, its norms summed by NumPy rather than BLAS: OpenBLAS's threads spin
    for about 0.1 s after a call, which halves a 2-core CPU's products timed next."""
    got = np.asarray(got.get() if hasattr(got, "get") else got,
                     dtype=np.complex128 if np.iscomplexobj(want) else np.float64)
    norm = float(np.sqrt(np.sum(np.abs(want) ** 2)))
    diff = float(np.sqrt(np.sum(np.abs(got - want) ** 2)))
    return diff / norm if norm else diff


def records_of(t: Timed, p, dtype, build_from: str, plan: Plan) -> list[Record]:
    """One record per mark of one method's job: the medians over its repetitions, or its note."""
    out = []
    for n in plan.marks:
        rec = Record(p.suite, p.name, p.S.shape[0], p.S.shape[1], int(p.S.nnz), np.dtype(dtype).name,
                     t.method.name, section=END_TO_END, kind=p.kind, family=p.family, build_from=build_from,
                     products=n, params=dict(t.params or {}), note=t.note)
        if not t.note:
            rec.params.update(repeats=plan.repeats, budget_s=plan.budget_s)
            rec.samples = len(t.reps)
            rec.build_us = statistics.median(r.build_s for r in t.reps) * 1e6
            reached = [r.totals[n] for r in t.reps if n in r.totals]
            if len(reached) == len(t.reps):
                rec.total_us = statistics.median(reached) * 1e6
            else:
                rec.params["products_ran"] = t.reps[0].ran
                rec.note = (f"{BUDGET_NOTE}: {t.reps[0].ran:,} products ran in the budget of {plan.budget_s:g} s, "
                            f"short of {n:,}")
            rec.rel_err = t.rel_err
            wrong.flag(rec)
        out.append(rec)
    return out


def run(problems, dtypes, on_gpu: bool, plan: Plan | None = None, methods=None, value_dtype=None,
        progress=None) -> list[Record]:
    """The end-to-end records of ``problems`` in each of ``dtypes``: per problem, dtype, source (the host's;
    on the GPU also the device's) and method, one record per mark of ``plan`` (default :func:`plan_for`).

    ``methods`` default to :data:`~.end_to_end_jobs.GPU_METHODS` or :data:`~.end_to_end_jobs.CPU_METHODS`;
    ``progress(problem, dtype, records, seconds)`` is called after each problem and dtype.
    """
    from ..runner import stream_for
    from ...auto import decisions

    plan = plan or plan_for(on_gpu)
    methods = methods or (GPU_METHODS if on_gpu else CPU_METHODS)
    sources = (HOST, DEVICE) if on_gpu else (HOST,)
    records = []
    with stream_for(on_gpu) as stream, decisions.using(decisions.OFF):
        clock = EventClock(stream) if on_gpu else HostClock()
        for p in problems:
            for dtype in dtypes:
                t0 = time.perf_counter()
                inputs = Inputs.create(p.S, dtype, on_gpu, value_dtype=value_dtype)
                done = []
                for build_from in sources:
                    try:
                        source = device_source(inputs) if build_from == DEVICE else inputs.S
                        timed = measure(methods, inputs, source, build_from, clock, plan, on_gpu)
                    except Exception as exc:  # noqa: BLE001 - the device source could not be made
                        timed = [Timed(m, note=_failure(exc)) for m in methods]
                    source = None
                    for t in timed:
                        done += records_of(t, p, dtype, build_from, plan)
                records += done
                inputs = None
                if on_gpu:
                    import cupy

                    cupy.get_default_memory_pool().free_all_blocks()
                if progress:
                    progress(p, dtype, done, time.perf_counter() - t0)
    return records
