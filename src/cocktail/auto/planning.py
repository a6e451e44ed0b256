"""``format="auto"`` on the GPU: features, the planner, tuning, the decision cache.

:func:`choose` runs once at construction of a ``SparseMatrix``: it computes the matrix's features on
the GPU, costs the candidate plans with the device profile (:mod:`cocktail.auto.planner`) and builds
the fastest that fits in GPU memory.  Nothing is timed at construction unless asked:

1. ``tune="auto"`` (default): the model's plan runs from the first product, and the matrix tunes it on
   the user's own products (:mod:`cocktail.auto.online`): the rivals the model ranks close (the
   vendor's kernels, cuSPARSE's CSR and COO algorithms; plans of ours of other families; the plan
   without the coded cut) are built and timed one at a time, within a budget of the products' time,
   and the matrix moves to one only once it measured it faster.  With ``deterministic=True`` it never
   moves (a move may change the rounding).
2. ``tune="model"``: the model's plan, never timed, never moved.
3. ``tune="measure"``: build the best candidates (:meth:`~cocktail.auto.candidates.Planning.to_measure`),
   time each on the matrix (CUDA graph replays, as the benchmark does) and keep the fastest.

Where cuSPARSE refuses a plan (an error of the library), the matrix is planned again with Cocktail's
own kernels.  Decisions are cached on disk (:mod:`cocktail.auto.decisions`): a matrix of the same
structure, dtype and device reuses one without features or planning (a measured decision serves every
mode, a tuned or modelled one ``"auto"`` and ``"model"``); ``tune="auto"`` still tunes a modelled one,
analysing the matrix for its rivals only once the products have paid for it.

With ``deterministic=True`` only kernels declared deterministic are planned, and with
``vendor=False`` only our own (no cuSPARSE); each is cached apart.  With ``yielding=True`` (the launch
policy of :func:`cocktail.kernels.device.for_launches`) every plan is built, timed and tuned with yielding
grids, and cached apart too.

The times spent (analysis, conversion, measurement) are kept in the returned :class:`AutoReport`.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, field

from .. import _memory, executors, formats, kernels
from ..precision import sampled_dtype
from ..timing import executor_us
from . import variants
from ..errors import DeviceMemoryError, FormatFillError, FormatValuesError

TUNE = ("auto", "model", "measure")
#: The cached decisions each mode reuses, first found first (a measured one serves every mode).
REUSES = {"measure": ("measure",), "auto": ("measure", "auto", "model"), "model": ("measure", "auto", "model")}
#: Products per timed graph and timed replays of ``tune="measure"``.
MEASURE_CALLS, MEASURE_REPLAYS = 10, 3


@dataclass
class AutoReport:
    """How ``format="auto"`` decided: the chosen plan, the candidates and the time each step took."""

    plan: object
    tune: str
    planning: object = None  # auto.candidates.Planning, None when the decision came from the cache
    cached: bool = False
    analysis_s: float = 0.0  # features and planning (and the cache's fingerprint and lookup)
    features_s: float = 0.0  # of which the features
    convert_s: float = 0.0  # building the chosen plan (storage and bound executor)
    measure_s: float = 0.0  # timing on the matrix: tune="model" its plan and rivals, "measure" the candidates
    measured: dict = field(default_factory=dict)  # candidate label -> measured µs
    notice: str = ""
    tuning: list | None = None  # tune="auto" while it may move: (product, what happened), as it happens


def build(plan, csr, device: str = "cuda", guard: bool = False, yielding: bool = False):
    """The storage and executor of ``plan`` for the canonical CSR ``csr``, its launches bound with the launch policy
    ``yielding``.

    ``guard`` (a plan from the decision cache, made for another matrix of the same fingerprint):
    a padded part may store at most twice the slots per entry it was planned with, else the
    format raises :class:`~cocktail.errors.FormatFillError` before allocating (and a part with a
    value table refuses more distinct values than it holds: :class:`~cocktail.errors.FormatValuesError`).
    """
    from ..formats.cocktail import Cocktail
    from ..tuning.format_rules import format_params
    from . import planner

    def params(p):
        given = p.params()
        defaults = formats.get(p.format).defaults
        if guard and "max_fill" in defaults:
            given["max_fill"] = 2.0 * p.slots / max(p.nnz, 1) + 1.0
        if p.format in planner.SHORT_COLUMNS_CUT and "short_columns" in kernels.get(p.kernel).layouts:
            given.setdefault("short_columns", None)  # a lossless cut: 16-bit columns wherever they fit
        return format_params(p.format, csr.dtype, given)

    if plan.single:
        part = plan.parts[0]
        storage = formats.get(part.format).from_csr(csr, **params(part))
        return storage, executors.create(None, storage, device, kernels.get(part.kernel), part.kernel_params,
                                         yielding=yielding)
    storage = Cocktail.from_csr(csr, parts=[(p.format, params(p), p.selector) for p in plan.parts])
    chosen = [(kernels.get(plan.parts[i].kernel), plan.parts[i].kernel_params) for i in storage.kept]
    return storage, executors.create(None, storage, device, chosen, yielding=yielding)


def fitting_build(plan, csr, guard: bool = False, yielding: bool = False):
    """:func:`build` on the GPU, CuPy's out-of-memory turned into :class:`~cocktail.errors.DeviceMemoryError`
    (the failed build's arrays released, so the next plan can be tried)."""
    what = f"plan {plan.label(csr.nnz)} of a {_memory.shape_text(csr.shape)} matrix with {csr.nnz:,} entries"
    return _memory.gpu_build(what, lambda: build(plan, csr, guard=guard, yielding=yielding))


def first_that_fits(plans, build_plan, last_resort):
    """``(plan, built, skipped)``: the first of ``plans`` (fastest predicted first) whose ``build_plan(plan)``
    does not raise :class:`~cocktail.errors.DeviceMemoryError`.

    ``skipped`` lists ``(plan, error)`` of those that did not fit.  When none fits, ``last_resort()``
    gives ``(plan, built)`` (plain CSR); its own ``DeviceMemoryError`` propagates: nothing fits.
    """
    skipped = []
    for plan in plans:
        try:
            return plan, build_plan(plan), skipped
        except DeviceMemoryError as exc:
            skipped.append((plan, exc))
    plan, built = last_resort()
    return plan, built, skipped


def fallback_notice(skipped, chosen, nnz: int) -> str:
    """The notice of a ``format="auto"`` that fell back: which plans did not fit, with bytes, and what it chose."""
    if not skipped:
        return ""
    missed = "; ".join(f"{plan.label(nnz)} needs {_memory.size_text(exc.needed)}" for plan, exc in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    free = skipped[-1][1].available
    free_text = f"{_memory.size_text(free)} available" if free is not None else "free memory unknown"
    return (f"fell back to {chosen.label(nnz)}: {len(skipped)} candidate plan(s) did not fit in GPU memory "
            f"({missed}{more}; {free_text})")


def _join(*notices: str) -> str:
    return "; ".join(n for n in notices if n)


def _single(csr, name: str, deterministic: bool = False, yielding: bool = False):
    """``(plan, (storage, executor))``: format ``name`` with its default parameters and kernel, for a
    decision not made by the planner (its plan describes it as one part)."""
    from .candidates import Part, Plan
    from ..tuning.format_rules import format_params

    storage = formats.get(name).from_csr(csr, **format_params(name, csr.dtype, {}))
    executor = executors.create(None, storage, "cuda", deterministic=deterministic, yielding=yielding)
    variant = executor.kernel if executor.kernel in variants.keys() else "csr_scalar"
    plan = Plan((Part(variant, ("rest",), csr.nnz, storage.stored_slots, 0.0),), 0.0)
    return plan, (storage, executor)


def _plain_csr(csr, deterministic: bool = False, yielding: bool = False):
    """Plain CSR (:func:`_single`), the last resort of a plan that does not fit."""
    return _single(csr, "csr", deterministic, yielding)


def _fallback(csr, notice: str, deterministic: bool = False, yielding: bool = False):
    """The rule of :mod:`cocktail.auto.fixed_rule` when there is no profile to plan with."""
    from . import planner
    from .fixed_rule import choose_format

    plan, (storage, executor) = _single(csr, choose_format(csr, device="cuda"), deterministic, yielding)
    warnings.warn(notice, planner.PlannerNotice, stacklevel=5)  # _fallback, choose, decide, SparseMatrix, caller
    return storage, executor, AutoReport(plan, "model", notice=notice)


def rivals(planning, plan, reference_us: float) -> list:
    """The plans ``tune="auto"`` tries against ``plan`` once it measured ``reference_us``
    (:meth:`~cocktail.auto.candidates.Planning.tuning_rivals`)."""
    return planning.tuning_rivals(plan, reference_us)


def _aside_stream():
    """A low-priority stream of the current device on which rivals are built, off the user's stream."""
    import cupy

    device_id = cupy.cuda.Device().id
    stream = _ASIDE.get(device_id)
    if stream is None:  # CUDA's default stream priority is its lowest (0; higher priorities are negative)
        stream = _ASIDE[device_id] = cupy.cuda.Stream(non_blocking=True)
    return stream


_ASIDE = {}  # device id -> stream


def _in_background(device_id: int):
    """The tuner's ``aside``: ``work()`` on a thread of its own (one for the process) with device ``device_id``
    and its aside stream current, once the user's products queued until then have finished: a rival's conversion,
    the compilation of its kernels or an analysis never holds up the user's products, and the worker never takes
    memory those products may still read."""
    def aside(work):
        import cupy

        queued = cupy.cuda.get_current_stream().record()  # the user's products queued so far

        def run():
            with cupy.cuda.Device(device_id):
                # Once they are done: memory that a dropped matrix's rival gave back to the aside stream's pool may
                # still be read by them, and this work may take it.  Waited for here: the work's time leaves it out.
                queued.synchronize()
                with _aside_stream():
                    return work()

        return _worker().submit(run)

    return aside


def _worker():
    """The thread that works aside for every tuning matrix of the process (made on first use)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            from concurrent.futures import ThreadPoolExecutor

            _WORKER = ThreadPoolExecutor(1, thread_name_prefix="cocktail-tuning", initializer=_relaxed_captures)
        return _WORKER


def _relaxed_captures() -> None:
    """Let the worker thread allocate and synchronise its own stream while another thread captures a CUDA graph
    in the global mode (torch's default): in that mode such calls from any thread would fail and end the user's
    capture; the worker's own work is never captured.  Without the driver's entry point it stays as it is."""
    import ctypes

    try:
        mode = ctypes.c_int(2)  # CU_STREAM_CAPTURE_MODE_RELAXED
        ctypes.CDLL("libcuda.so.1").cuThreadExchangeStreamCaptureMode(ctypes.byref(mode))
    except (OSError, AttributeError):
        pass


_WORKER, _WORKER_LOCK = None, threading.Lock()


def build_aside(plan, csr, yielding: bool = False):
    """``(storage, executor, ready)``: :func:`fitting_build` of ``plan`` on a stream of its own, the user's
    products going on meanwhile (the CSR is complete: construction synchronised); a product of it must wait
    for the event ``ready`` first.  ``yielding``: the launch policy the matrix's first plan was bound with."""
    with _aside_stream() as stream:
        storage, executor = fitting_build(plan, csr, yielding=yielding)
        ready = stream.record()
    return storage, executor, ready


def _cached(csr, keys, yielding: bool):
    """``(plan, (storage, executor), convert_s, key)`` of the first of ``keys`` the decision cache holds and
    whose plan builds for ``csr`` (:func:`build`'s guard; bound with the launch policy ``yielding``), else None."""
    from ..kernels.cusparse import CusparseError
    from . import decisions

    for k in keys:
        plan = decisions.lookup(k)
        if plan is None:
            continue
        t0 = time.perf_counter()
        try:
            built = fitting_build(plan, csr, guard=True, yielding=yielding)
        except (FormatFillError, FormatValuesError, DeviceMemoryError, CusparseError):
            continue  # another structure, other values, less free memory or a refusing library: decide afresh
        return plan, built, time.perf_counter() - t0, k
    return None


def choose(csr, tune: str = "auto", deterministic: bool = False, vendor: bool = True, yielding: bool = False):
    """``(storage, product, AutoReport)`` for a real-valued canonical CSR on the current GPU, ``product`` a
    :class:`~cocktail.auto.plans.PlannedProduct` (tuning on the user's products with ``tune="auto"``);
    ``deterministic``: from plans whose every kernel is declared deterministic; ``vendor``: cuSPARSE's
    kernels are candidates too (where the library loads); ``yielding``: the launch policy every plan is bound,
    timed and cached with (:func:`cocktail.kernels.device.for_launches`)."""
    from .plans import PlannedProduct

    storage, executor, report, tuner = _decide(csr, tune, deterministic, vendor, yielding)
    product = PlannedProduct(report, storage, executor, deterministic, vendor, yielding)
    if tuner is not None:
        product.tuner = tuner(product)
        report.tuning = product.tuner.history
    return storage, product, report


def _decide(csr, tune, deterministic, vendor, yielding):
    """``(storage, executor, AutoReport, tuner)`` of :func:`choose`; ``tuner(product)`` makes the
    :class:`~cocktail.auto.online.OnlineTuner` of ``tune="auto"`` (None: the plan stays)."""
    from . import decisions, planner, profile
    from .features import compute, quick_facts

    if tune not in TUNE:
        raise ValueError(f"tune must be one of {TUNE}, got {tune!r}")
    vendor = vendor and any(kernels.get(n).vendor and kernels.get(n).runs_here() for n in kernels.names())
    device = profile.current_device()
    prof = profile.for_device(device)
    sampled = sampled_dtype(csr.dtype)  # a half or complex matrix plans with real samples, scaled by its bytes
    if prof is None or not any(prof.has(key, sampled) for key in variants.keys()):
        return _fallback(csr, f"no device profile with {sampled.name} samples for {device['name']}: "
                              "format='auto' used its fixed rule; run `cocktail calibrate`", deterministic,
                         yielding) + (None,)
    keys, t0 = {}, time.perf_counter()
    uniform = distinct = None  # without the cache, the features find them
    if decisions.path() is not None:
        fingerprint, uniform, distinct = quick_facts(csr)  # one pass and one synchronisation on the GPU
        coded = planner.CODED_CUT and planner.takes_coded_cut(uniform, distinct, csr.dtype, csr.value_dtype)
        keys = {t: decisions.key(fingerprint, profile.key_of(device), csr.dtype, csr.index_dtype, deterministic,
                                 vendor, t, prof.digest, uniform, csr.value_dtype, coded, yielding)
                for t in TUNE}
        hit = _cached(csr, [keys[t] for t in REUSES[tune]], yielding)
        if hit is not None:
            plan, (storage, executor), convert_s, found = hit
            report = AutoReport(plan, tune, cached=True, analysis_s=time.perf_counter() - t0 - convert_s,
                                convert_s=convert_s, notice=prof.notice)
            if tune != "auto" or found != keys["model"] or deterministic:
                return storage, executor, report, None
            # a modelled decision, never tuned: tune it, its rivals chosen once the products have paid for it

            def analysed():
                feats = compute(csr, block_fill_limit=planner.block_fill_limit(csr.dtype, csr.index_dtype),
                                one_value=uniform, distinct=distinct)
                return planner.plan(csr, feats, prof, csr.dtype, deterministic, vendor)

            return storage, executor, report, _tuner_of(analysed, csr, keys["auto"], yielding, lazy=True)
    t1 = time.perf_counter()
    feats = compute(csr, block_fill_limit=planner.block_fill_limit(csr.dtype, csr.index_dtype), one_value=uniform,
                    distinct=distinct)
    t2 = time.perf_counter()
    planning = planner.plan(csr, feats, prof, csr.dtype, deterministic, vendor)
    report = AutoReport(planning.chosen, tune, planning, analysis_s=time.perf_counter() - t0, features_s=t2 - t1,
                        notice=prof.notice)

    def fits(plans):  # the first of plans that fits in GPU memory, else plain CSR: first_that_fits
        return first_that_fits(plans, lambda p: fitting_build(p, csr, yielding=yielding),
                               lambda: _plain_csr(csr, deterministic, yielding))

    if tune == "measure":
        return _measured(csr, planning, report, keys, fits, yielding) + (None,)
    from ..kernels.cusparse import CusparseError

    t0 = time.perf_counter()
    try:
        plan, built, skipped = fits(planning.candidates)
    except CusparseError as exc:  # the library refused a plan that delegates: our own kernels only
        planning = planner.plan(csr, feats, prof, csr.dtype, deterministic, vendor=False)
        report.planning, report.notice = planning, _join(report.notice, f"cuSPARSE refused ({exc}): planned "
                                                                        "with Cocktail's own kernels")
        plan, built, skipped = fits(planning.candidates)
        keys = {}  # a refusal may be this run's (an allocation): not a decision to keep for the structure
    report.plan, report.convert_s = plan, time.perf_counter() - t0
    report.notice = _join(report.notice, fallback_notice(skipped, plan, csr.nnz))
    if skipped:  # a plan forced by free memory is neither kept nor tuned
        return built[0], built[1], report, None
    if keys:
        decisions.store_later(keys["model"], plan)
    if tune == "model" or deterministic:
        return built[0], built[1], report, None
    return built[0], built[1], report, _tuner_of(lambda: planning, csr, keys.get("auto"), yielding)


def _tuner_of(planning, csr, key, yielding: bool, lazy: bool = False):
    """``tuner(product)``: the :class:`~cocktail.auto.online.OnlineTuner` of a planned product, its rivals
    from ``planning()`` (``lazy``: an analysis of the matrix, made when the tuner chooses them), built from
    ``csr`` aside with the launch policy ``yielding``, its last plan cached under ``key`` (None: not cached)
    when it stops."""
    from . import decisions
    from .online import OnlineTuner

    import cupy

    aside = _in_background(cupy.cuda.Device().id)

    def tuner(product):
        def done(plan, crowded):
            product.retire(csr)  # the CSR the rivals were built from goes once no queued product reads it
            if key is not None and not crowded:
                decisions.store_later(key, plan)

        return OnlineTuner(product, lambda us: rivals(planning(), product.plan, us),
                           lambda plan: build_aside(plan, csr, yielding), done, lazy_rivals=lazy, aside=aside)

    return tuner


def _measured(csr, planning, report, keys, fits, yielding: bool):
    """``tune="measure"``: build the candidates to measure (with the launch policy ``yielding``), time each on the
    matrix and keep the fastest (``(storage, executor, report)``); the first other candidate that fits where none of
    them does."""
    from . import decisions

    t0 = time.perf_counter()
    best, skipped = None, []
    for candidate in planning.to_measure():
        t1 = time.perf_counter()
        try:
            built = fitting_build(candidate, csr, yielding=yielding)
        except DeviceMemoryError as exc:
            skipped.append((candidate, exc))
            continue
        convert = time.perf_counter() - t1
        candidate.measured_us = executor_us(built[1], csr.shape, csr.dtype, MEASURE_CALLS, MEASURE_REPLAYS)
        report.measured[candidate.detail()] = candidate.measured_us
        if best is None or candidate.measured_us < best[0].measured_us:
            best = (candidate, built)
            report.convert_s = convert
    if best is None:  # no measured candidate fits: the first other candidate that does, else plain CSR
        rest = [p for p in planning.candidates if all(p is not q for q, _ in skipped)]
        plan, built, more = fits(rest)
        best, skipped = (plan, built), skipped + more
    report.measure_s = time.perf_counter() - t0 - report.convert_s
    report.plan = best[0]
    report.notice = _join(report.notice, fallback_notice(skipped, best[0], csr.nnz))
    if keys and not skipped:
        decisions.store_later(keys["measure"], best[0])
    return best[1][0], best[1][1], report
