"""The workload: many different matrices, each built from the host and multiplied a few times, as a user with
many matrices runs them (the workload target: 50 matrices, 20 products each, at least 1.0x cupyx).

The matrices are :mod:`..problems.workload`'s (held out of every suite).  The methods are the end-to-end
section's jobs (:mod:`.end_to_end_jobs`): on the GPU ``cocktail-auto`` (``SparseMatrix(S)``), cupyx
(``cupyx.scipy.sparse.csr_matrix(S)``) and torch where installed; on the CPU ``cocktail-auto`` and SciPy.
Every build starts from the host's SciPy matrix.

One *pass* of a method runs the whole workload: for each matrix in turn, :func:`.end_to_end.repetition`
(synchronise, build, synchronise: the build's time; then :attr:`Plan.products` products ``A @ x`` back to
back, the inputs rotated, timed by the end-to-end clocks, synchronised at the end).  The pass's ``build_us``
is the sum of its builds, its ``total_us`` the sum of the matrices' builds and products; making each
matrix's job (untimed: torch's builds its matrix once to warn once) and the time between matrices are left
out.  Each method first runs one untimed pass (CuPy, cupyx, torch and our plans compile or load their
kernels on first use, once a process), then :attr:`Plan.repeats` timed passes, the methods taking turns
in each round; each figure is the median over the passes.  The decision cache of ``format="auto"`` is off
throughout, so that every build of ours pays its decision.

The last pass keeps each matrix's answer ``A @ x``; after every round they are checked against SciPy's
float64 product (:func:`.end_to_end.relative_error`).  A record's ``rel_err`` is the largest over the
matrices: one wrong matrix makes the method's whole record wrong (:mod:`..records.wrong`), its note naming
the matrix.  A method that cannot run, or fails on a matrix, gets a record with its note and no times.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from .end_to_end import EventClock, HostClock, relative_error, repetition
from .end_to_end_jobs import CPU_METHODS, GPU_METHODS, HOST
from .methods import Inputs, Unavailable
from ..problems.workload import group_of
from ..records import wrong
from ..records.record import WORKLOAD, Record

#: The products after each build.
PRODUCTS = 20
#: Timed passes over the whole workload; each figure is their median.
REPEATS = 3
#: The record's suite and matrix name (followed by the count of matrices).
SUITE, NAME = "workload", "workload"


@dataclass(frozen=True)
class Plan:
    """What the section runs: the products after each build and the timed passes."""

    products: int = PRODUCTS
    repeats: int = REPEATS


@dataclass
class Pass:
    """One timed pass over the workload: per matrix its build's and its whole job's seconds."""

    builds: list = field(default_factory=list)
    totals: list = field(default_factory=list)


@dataclass
class Timed:
    """One method's passes over the workload, its answers (the last pass's, one per matrix) and its plans
    (ours: what each matrix's last build chose), or why it did not run."""

    method: object
    passes: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    chosen: list = field(default_factory=list)
    call: str = ""
    note: str = ""


def _failure(exc: Exception, where: str) -> str:
    if isinstance(exc, Unavailable):
        return str(exc)
    return f"error on {where}: {type(exc).__name__}: {exc}"


def one_pass(t: Timed, problems, inputs, clock, plan: Plan, keep: bool) -> Pass:
    """One pass of ``t``'s method over the workload (see the module's docstring); ``keep``: keep each matrix's
    answer and plan.  Raises what a job raised, after noting it in ``t.note``."""
    done = Pass()
    for p, inp in zip(problems, inputs):
        job = None
        try:
            job = t.method.job(inp, inp.S, HOST, clock_on_gpu(clock))
            rep = repetition(job, clock, (plan.products,), None)
            if keep:
                t.answers.append(job.answer(job.multiply(rep.matrix, 0)))
                t.chosen.append(job.describe(rep.matrix))
                t.call = job.params.get("call", "")
                clock.sync()
            rep.matrix = None
        except Exception as exc:
            t.note = _failure(exc, p.name)
            raise
        finally:
            if job is not None:
                job.close()
        done.builds.append(rep.build_s)
        done.totals.append(rep.totals[plan.products])
    return done


def clock_on_gpu(clock) -> bool:
    """True for the GPU's clock (:class:`~.end_to_end.EventClock`)."""
    return isinstance(clock, EventClock)


def measure(methods, problems, inputs, clock, plan: Plan, progress=None) -> list[Timed]:
    """Each of ``methods`` over the workload of ``problems`` (their :class:`~.methods.Inputs` ``inputs``): an
    untimed pass, then :attr:`Plan.repeats` rounds of one timed pass each, then the answers checked.
    ``progress(method_name, what, seconds)`` is called after each pass."""
    timed = [Timed(m) for m in methods]
    for round_ in range(-1, plan.repeats):
        for t in (t for t in timed if not t.note):
            _free_pool(clock)
            t0 = time.perf_counter()
            try:
                done = one_pass(t, problems, inputs, clock, plan, keep=round_ == plan.repeats - 1)
            except Exception:  # noqa: BLE001 - noted by one_pass, shown in the table and JSON
                t.passes, t.answers, t.chosen = [], [], []
                continue
            if round_ >= 0:
                t.passes.append(done)
            if progress:
                progress(t.method.name, "warm-up" if round_ < 0 else f"pass {round_ + 1}/{plan.repeats}",
                         time.perf_counter() - t0)
    for t in timed:  # after every round: the check's arithmetic runs between no two timings
        t.errors = [relative_error(got, inp.want) for got, inp in zip(t.answers, inputs)]
        t.answers = []
    return timed


def _free_pool(clock) -> None:
    """On the GPU, give CuPy's pooled memory back before a pass, so that no method inherits another's pool."""
    if clock_on_gpu(clock):
        import cupy

        clock.sync()
        cupy.get_default_memory_pool().free_all_blocks()


def worst(errors) -> float:
    """The largest of the relative errors, NaN where any is NaN."""
    return math.nan if any(e != e for e in errors) else max(errors, default=0.0)


def record_of(t: Timed, problems, dtype, plan: Plan) -> Record:
    """The workload record of one method: medians over its passes, the largest relative error, and per
    matrix its nonzeros, median build and whole job (µs), error and (ours) plan in ``params["per_matrix"]``."""
    nnz = [int(p.S.nnz) for p in problems]
    classes = list(dict.fromkeys(group_of(p.name) or p.kind.split(":")[0] for p in problems))
    rec = Record(SUITE, f"{NAME}{len(problems)}", sum(p.S.shape[0] for p in problems),
                 sum(p.S.shape[1] for p in problems), sum(nnz), np.dtype(dtype).name, t.method.name,
                 section=WORKLOAD, kind=f"workload: {len(problems)} matrices of {len(classes)} classes",
                 build_from=HOST, products=plan.products, note=t.note,
                 params={"matrices": len(problems), "nnz_min": min(nnz, default=0), "nnz_max": max(nnz, default=0),
                         "classes": classes, "products": plan.products})
    if t.note:
        return rec
    rec.params.update(call=t.call, repeats=plan.repeats)
    rec.samples = len(t.passes)
    rec.build_us = statistics.median(sum(d.builds) for d in t.passes) * 1e6
    rec.total_us = statistics.median(sum(d.totals) for d in t.passes) * 1e6
    rec.params["per_matrix"] = [
        {"matrix": p.name, "nnz": n, "build_us": round(statistics.median(d.builds[i] for d in t.passes) * 1e6, 1),
         "total_us": round(statistics.median(d.totals[i] for d in t.passes) * 1e6, 1), "rel_err": err,
         **_plan_of(chosen)}
        for i, (p, n, err, chosen) in enumerate(zip(problems, nnz, t.errors, t.chosen))]
    rec.rel_err = worst(t.errors)
    wrong.flag(rec)
    if rec.note:
        bad = [p.name for p, e in zip(problems, t.errors) if not e <= wrong.error_bound(rec)]
        rec.note += f" on {len(bad)} of {len(problems)} matrices: {', '.join(bad)}"
    return rec


def _plan_of(chosen: dict) -> dict:
    """What a record keeps per matrix of a built matrix's description: our plan (or format)."""
    if "plan" in chosen:
        return {"plan": chosen["plan"]}
    return {"format": chosen["format"]} if "format" in chosen else {}


def workload_problems(on_gpu: bool, shrink: int | None = None, count: int | None = None) -> list:
    """The workload's matrices as problems (:class:`~..runner.Problem`, suite ``workload``), in its order: at
    full size on the GPU, at CPU size (:data:`~..problems.suites.CPU_SHRINK`) on the CPU, or at 1/``shrink`` of
    the rows; the first ``count`` of them (all by default).  Generated matrices are cached
    (:func:`..problems.workload.load`)."""
    from ..problems import workload
    from ..problems.suites import CPU_SHRINK
    from ..runner import Problem

    shrink = shrink or (1 if on_gpu else CPU_SHRINK)
    return [Problem(SUITE, m.name, m.kind, workload.load(m), m.family) for m in workload.matrices(shrink, count)]


def run(problems, dtypes, on_gpu: bool, plan: Plan | None = None, methods=None, value_dtype=None,
        progress=None) -> list[Record]:
    """The workload records of ``problems`` (:class:`~..runner.Problem`, in the workload's order): one per
    dtype and method, each the whole workload (see the module's docstring).

    ``methods`` default to :data:`~.end_to_end_jobs.GPU_METHODS` or :data:`~.end_to_end_jobs.CPU_METHODS`;
    ``progress(dtype, method_name, what, seconds)`` is called after each pass.
    """
    from ..runner import stream_for
    from ...auto import decisions

    plan = plan or Plan()
    methods = methods or (GPU_METHODS if on_gpu else CPU_METHODS)
    records = []
    with stream_for(on_gpu) as stream, decisions.using(decisions.OFF):
        clock = EventClock(stream) if on_gpu else HostClock()
        for dtype in dtypes:
            inputs = [Inputs.create(p.S, dtype, on_gpu, value_dtype=value_dtype) for p in problems]
            said = None if progress is None else (lambda name, what, s, d=dtype: progress(d, name, what, s))
            timed = measure(methods, problems, inputs, clock, plan, said)
            records += [record_of(t, problems, dtype, plan) for t in timed]
            inputs = None
            _free_pool(clock)
    return records
