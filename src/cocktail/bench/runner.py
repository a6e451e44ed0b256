"""Run methods over benchmark problems and turn their timings into records."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .measuring import paired
from .measuring.baselines import CUPYX, CUSPARSE_BEST, Scipy, best_of_cusparse
from .measuring.blocks import SPMM_BEST, BlockKernel, best_of_cusparse_spmm, for_block
from .measuring.methods import CPU_AUTO, AutoMethod, Inputs, KernelMethod, Unavailable
from ..timing import time_cpu, time_gpu
from .records import metrics, wrong
from .records.record import SPMM, Record, fastest_per_problem
from .records.selection import BEST_SINGLE  # the derived record of the fastest of our single formats
from ..auto import decisions


@dataclass(frozen=True)
class Problem:
    """A matrix to benchmark: the suite it came from (or ``file``), its name, class and family."""

    suite: str
    name: str
    kind: str
    S: sp.csr_array
    family: str = ""


def pattern_of(p: Problem) -> Problem:
    """``p`` with every stored entry 1 (explicit zeros too): the adjacency matrix of its pattern, named
    ``<name>:pattern``, so that records of both kinds of one matrix stay apart."""
    S = p.S.copy()
    S.data = np.ones_like(S.data)
    return Problem(p.suite, f"{p.name}:pattern", p.kind, S, p.family)


#: The values ``--values few`` gives the entries: sixteen weights, 0.25 to 4.0, each exact in every value dtype.
FEW_VALUES = np.arange(1, 17) / 4.0


def few_values_of(p: Problem) -> Problem:
    """``p`` with every stored entry one of :data:`FEW_VALUES` (explicit zeros too, drawn reproducibly): a
    weighted graph of small weights, which csr_vi stores with a one-byte code per entry, named ``<name>:few``."""
    S = p.S.copy()
    S.data = FEW_VALUES[np.random.default_rng(S.nnz).integers(0, FEW_VALUES.size, S.nnz)].astype(S.data.dtype)
    return Problem(p.suite, f"{p.name}:few", p.kind, S, p.family)


@dataclass(frozen=True)
class Settings:
    """How to time: repetitions, the device's copy bandwidth and L2 size (GPU runs)."""

    repeat: int = 100
    min_seconds: float = 0.05
    cpu_budget_seconds: float = 0.5
    copy_gbps: float | None = None
    l2_bytes: int | None = None
    #: Our methods store their values in this dtype, narrower than the problem's (None: in the problem's dtype).
    value_dtype: str | None = None


def _prepare(method, inputs: Inputs, rec: Record):
    """``method`` made ready on ``inputs``: ``rec`` gets its setup time, label and parameters."""
    t0 = time.perf_counter()
    prep = method.prepare(inputs)
    rec.setup_ms = (time.perf_counter() - t0) * 1e3
    rec.method, rec.params = prep.label, prep.params
    return prep


def _error(prep, inputs: Inputs) -> float:
    """The relative error of the prepared method's product (after its timing: the answer it leaves)."""
    if prep.on_gpu:
        inputs.poison_outputs()  # a product that writes nothing must not pass on an earlier answer
    return prep.rel_err() if prep.rel_err is not None else inputs.rel_err(prep.result())


def _measure(method, inputs: Inputs, rec: Record, settings: Settings) -> None:
    # Before the timed matrix is built, so that the two it makes are freed first.
    hit_s = method.cache_hit_s(inputs) if isinstance(method, AutoMethod) else None
    prep = _prepare(method, inputs, rec)
    try:
        if prep.on_gpu:
            t = time_gpu(prep.calls, repeat=settings.repeat, min_seconds=settings.min_seconds)
        else:
            t = time_cpu(prep.calls, repeat=settings.repeat, budget_seconds=settings.cpu_budget_seconds)
        rec.rel_err = _error(prep, inputs)
    finally:
        prep.close()
    _fill(rec, prep, t, inputs, settings, hit_s)


def _fill(rec: Record, prep, t, inputs: Inputs, settings: Settings, hit_s=None) -> None:
    """The record's times (``t``, a :class:`~cocktail.timing.Timing`) and the figures derived from them and
    from the prepared method's byte models; notes it wrong when its error is past its bound."""
    seconds = t.kernel_us * 1e-6
    rec.kernel_us, rec.call_us, rec.kernel_timing, rec.samples = t.kernel_us, t.call_us, t.kernel_timing, t.samples
    rec.gflops = metrics.gflops(rec.nnz * inputs.k, seconds)
    rec.spmv_bytes = prep.spmv_bytes
    rec.gbps = metrics.gbps(prep.spmv_bytes, seconds)
    rec.padding_ratio = prep.padding_ratio
    if prep.on_gpu and settings.copy_gbps:
        rec.copy_gbps = settings.copy_gbps
        rec.bandwidth_fraction = metrics.bandwidth_fraction(rec.gbps, settings.copy_gbps)
    if prep.on_gpu and settings.l2_bytes:
        rec.l2_ratio = prep.spmv_bytes / settings.l2_bytes
        rec.l2_bytes = settings.l2_bytes
    if prep.dram_bytes is not None:
        rec.dram_bytes = prep.dram_bytes(settings.l2_bytes)
        if prep.on_gpu and settings.copy_gbps:
            rec.dram_fraction = metrics.bandwidth_fraction(metrics.gbps(rec.dram_bytes, seconds), settings.copy_gbps)
    if prep.planning_s and t.kernel_us:
        spmv_s = t.kernel_us * 1e-6
        rec.analysis_spmvs = prep.planning_s["analysis"] / spmv_s
        rec.features_spmvs = prep.planning_s["features"] / spmv_s
        rec.convert_spmvs = prep.planning_s["convert"] / spmv_s
        rec.measure_spmvs = prep.planning_s["measure"] / spmv_s
        if hit_s is not None:
            rec.cache_hit_spmvs = hit_s / spmv_s
    wrong.flag(rec)  # values stored narrower: their dtype's rounding counts


def _headline_pair(methods, keys, done) -> list:
    """On the CPU: ``[(cocktail-auto, key), (scipy, key)]`` when both are to be measured now, else ``[]``; the
    pair is :data:`~.measuring.methods.CPU_AUTO`, the method the headline reads, and SciPy."""
    auto = [(m, k) for m, k in zip(methods, keys) if m == CPU_AUTO]
    scipy = [(m, k) for m, k in zip(methods, keys) if isinstance(m, Scipy)]
    pair = auto[:1] + scipy[:1]
    return pair if len(pair) == 2 and not any(k in done for _, k in pair) else []


def _measure_pair(p: Problem, dtype, pair, inputs: Inputs, settings: Settings, stamp) -> dict:
    """The records of the CPU headline's two methods (:func:`_headline_pair`), timed call for call
    (:func:`.paired.time_pair`), by key; ``{}`` when either fails to prepare or run (each is then
    measured alone, which records why).  SciPy is prepared first: it refuses a half dtype at once, before
    cocktail-auto plans."""
    recs = [_new_record(p, dtype, method) for method, _ in pair]
    preps = []
    try:
        for (method, _), rec in reversed(list(zip(pair, recs))):
            preps.insert(0, _prepare(method, inputs, rec))
        timed = paired.time_pair(preps[0].calls, preps[1].calls, settings.repeat, 2 * settings.cpu_budget_seconds)
        for rec, prep in zip(recs, preps):
            rec.rel_err = _error(prep, inputs)
    except Exception:  # noqa: BLE001 - measured again alone, where the error is recorded
        return {}
    finally:
        for prep in preps:
            prep.close()
    auto, scipy = recs
    flipped = tuple(None if end is None else 1 / end for end in (timed.high, timed.low))  # SciPy's over ours
    sides = ((auto, preps[0], timed.a, scipy, timed.ratio, (timed.low, timed.high)),
             (scipy, preps[1], timed.b, auto, 1 / timed.ratio, flipped))
    for rec, prep, t, other, ratio, (low, high) in sides:
        try:
            _fill(rec, prep, t, inputs, settings)
            rec.paired_with, rec.paired_ratio, rec.paired_low, rec.paired_high = other.method, ratio, low, high
        except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
            _failed(rec, exc)
    return {key: _stamped(rec, stamp) for (_, key), rec in zip(pair, recs)}


def _failed(rec: Record, exc: Exception) -> None:
    """Note ``rec`` as failed with ``exc``, with no figure left of the measurement it did not finish."""
    for key in wrong.MEASURED_FIELDS:
        if hasattr(rec, key):
            setattr(rec, key, None)
    rec.note = f"error: {type(exc).__name__}: {exc}"


def _stamped(rec: Record, stamp) -> Record:
    """``rec`` with the provenance fields of ``stamp``; an error there is recorded, not raised."""
    try:
        return rec.stamp(stamp or {})
    except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
        rec.note = rec.note or f"error: provenance: {type(exc).__name__}: {exc}"
        return rec


def stream_for(on_gpu: bool):
    """A non-default stream for the run (graph capture needs one), or a context giving None on the CPU."""
    if not on_gpu:
        return contextlib.nullcontext()
    import cupy

    return cupy.cuda.Stream(non_blocking=True)


def methods_for(methods, k: int, all_kernels: bool = False) -> list:
    """The methods a run times at block width ``k``: ``methods`` themselves for SpMV (``k == 1``), their
    block counterparts (:func:`.blocks.for_block`) otherwise."""
    return list(methods) if k == 1 else for_block(methods, all_kernels)


def run(problems, methods, dtypes, settings: Settings, on_gpu: bool, progress=None, stamp=None,
        journal=None, ks=(1,), all_kernels: bool = False) -> list[Record]:
    """One record per (problem, dtype, k, method), plus ``cusparse-best`` (``cusparse-spmm-best`` for blocks)
    and speedups where cuSPARSE ran.

    ``ks``: block widths; 1 is the SpMV, any other ``k`` times each method's block product
    (:func:`methods_for`) in records of the ``spmm`` section.  A method that cannot run on a
    problem gets a record whose ``note`` says why; an error inside a method is recorded the same
    way, so one failing baseline does not end a long run.  Each record gets the fields of
    ``stamp`` (provenance) as it is measured and goes to ``journal`` (:class:`~.journal.Journal`)
    at once; what the journal already holds is not measured again.
    """
    records, singles = [], []
    done = journal.done if journal is not None else {}
    per_k = {k: methods_for(methods, k, all_kernels) for k in ks}
    # Every record pays its own decision: no plan from an earlier run or method.
    with stream_for(on_gpu), decisions.using(decisions.OFF):
        if on_gpu and any(_key(p, d, m, k) not in done for p in problems for d in dtypes for k in ks
                          for m in per_k[k]):
            warm_up(methods, dtypes)
        for p in problems:
            for dtype in dtypes:
                for k in ks:
                    keys = [_key(p, dtype, method, k) for method in per_k[k]]
                    inputs = None if all(key in done for key in keys) else Inputs.create(p.S, dtype, on_gpu, k=k,
                                                                                      value_dtype=settings.value_dtype)
                    pair = [] if on_gpu else _headline_pair(per_k[k], keys, done)
                    together = _measure_pair(p, dtype, pair, inputs, settings, stamp) if pair else {}
                    if journal is not None:  # both at once: an interrupt before SciPy's turn keeps its record
                        for key, rec in together.items():
                            journal.append(key, rec)
                    for method, key in zip(per_k[k], keys):
                        rec = done.get(key) or together.get(key) or _record(p, dtype, method, inputs, settings,
                                                                            stamp, k)
                        if key not in done and key not in together and journal is not None:
                            journal.append(key, rec)
                        records.append(rec)
                        if isinstance(method, (KernelMethod, BlockKernel)):
                            singles.append(rec)
                        if progress:
                            progress(rec)
                    del inputs
                    if on_gpu:
                        import cupy

                        cupy.get_default_memory_pool().free_all_blocks()
    records += best_of_cusparse(records)
    records += best_of_cusparse_spmm(records)
    records += best_single(singles)
    add_speedups(records)
    return records


def _key(p: Problem, dtype, method, k: int = 1) -> tuple:
    """A measurement's key in the journal: suite, matrix, dtype and method, and ``k`` for a block product."""
    key = (p.suite, p.name, np.dtype(dtype).name, method.name)
    return key if k == 1 else key + (k,)


def _record(p: Problem, dtype, method, inputs: Inputs, settings: Settings, stamp, k: int = 1) -> Record:
    """The record of ``method`` on ``p`` in ``dtype`` (a block of ``k`` columns when ``k > 1``), measured now,
    or saying why it did not run."""
    rec = _new_record(p, dtype, method)
    if k != 1:
        rec.section, rec.k = SPMM, k
    try:
        _measure(method, inputs, rec, settings)
    except Unavailable as exc:
        rec.note = str(exc)
    except Exception as exc:  # noqa: BLE001 - recorded, shown in the table and JSON
        _failed(rec, exc)
    return _stamped(rec, stamp)


def _new_record(p: Problem, dtype, method) -> Record:
    """The record of ``method`` on ``p`` in ``dtype``, not measured yet."""
    return Record(p.suite, p.name, p.S.shape[0], p.S.shape[1], int(p.S.nnz), np.dtype(dtype).name, method.name,
                  kind=p.kind, family=p.family)


def warm_up(methods, dtypes) -> None:
    """Each ``format="auto"`` method once per dtype on a small matrix, untimed and unrecorded: CuPy compiles
    the kernels behind the features and the plans on their first use in a process, once, and that cost
    belongs to no matrix's analysis figure."""
    autos = [m for m in methods if isinstance(m, AutoMethod) and m.needs_gpu]
    if not autos:
        return
    # Every path of the features: dense 8 x 8 blocks (no block shape left out), a band, few values.
    n = 4096
    S = sp.csr_array(sp.kron(sp.eye_array(n // 8), np.ones((8, 8))) + sp.diags_array(
        [1.0, 2.0, 1.0], offsets=[-9, 0, 9], shape=(n, n)))
    for dtype in dtypes:
        inputs = Inputs.create(S, dtype, True)
        for method in autos:
            try:
                method.prepare(inputs).close()
            except Exception:  # noqa: BLE001 - the real run records whatever this method does
                pass


def best_single(records: list) -> list:
    """One ``best-single`` record per (matrix, dtype): a copy of the fastest of our single-format records.

    ``records`` are those of our formats and kernels (not ``cocktail-auto``, not baselines); its
    ``params["best_of"]`` names the winner.  Run with ``--all-kernels`` it is the best single
    format and kernel found by trying every one on that matrix (the planner targets' reference point).
    """
    return fastest_per_problem(records, BEST_SINGLE, lambda r: {"best_of": r.method})


def add_speedups(records) -> None:
    """Fill ``speedup_cusparse_best`` and ``speedup_cupyx``: baseline kernel time over the record's, at the
    record's ``k`` (a block record's cuSPARSE reference is ``cusparse-spmm-best``); none for a wrong answer."""
    base = {}
    for r in records:
        if r.method in (CUSPARSE_BEST, SPMM_BEST, CUPYX) and r.kernel_us and wrong.usable(r):
            base[(r.suite, r.matrix, r.dtype, r.k, r.method)] = r.kernel_us
    for r in records:
        if not r.kernel_us or wrong.is_wrong(r):  # a wrong answer's time is no speedup
            continue
        key = (r.suite, r.matrix, r.dtype, r.k)
        best = key + (CUSPARSE_BEST if r.k == 1 else SPMM_BEST,)
        if best in base:
            r.speedup_cusparse_best = base[best] / r.kernel_us
        if key + (CUPYX,) in base:
            r.speedup_cupyx = base[key + (CUPYX,)] / r.kernel_us
