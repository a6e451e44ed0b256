"""Which records a table, summary or plot reads: the SpMV records, the block-product ones, the call-overhead
ones, the end-to-end ones or the workload ones.

Records are dictionaries as written to JSON.  Every record names its ``section``: ``"spmv"``
(one method's kernel and call time on one problem), ``"spmm"`` (the same for a block of ``k``
vectors), ``"overhead"`` (per-call host+GPU time of one way of calling a product, see
:mod:`.overhead`), ``"end-to-end"`` (a build and N products, :mod:`..measuring.end_to_end`) or
``"workload"`` (many matrices, each built and multiplied, :mod:`..measuring.workload`); records
written before the field existed are SpMV records.
"""

from __future__ import annotations

from ..measuring.baselines import CUSPARSE, CUSPARSE_BEST
from .record import END_TO_END, OVERHEAD, SPMM, SPMV, WORKLOAD
from .wrong import is_wrong, untimed

#: The derived record of the fastest of our single formats on a problem (:func:`~..runner.best_single`).
BEST_SINGLE = "best-single"


def section(record) -> str:
    """The record's section, ``"spmv"`` when it has none."""
    value = record.get("section") if isinstance(record, dict) else getattr(record, "section", None)
    return value or SPMV


def spmv_records(records) -> list:
    """The records of SpMV measurements (kernel and call time per method)."""
    return [r for r in records if section(r) == SPMV]


def spmm_records(records) -> list:
    """The records of block products (``cocktail bench --k``)."""
    return [r for r in records if section(r) == SPMM]


def overhead_records(records) -> list:
    """The records of the call-overhead section."""
    return [r for r in records if section(r) == OVERHEAD]


def end_to_end_records(records) -> list:
    """The records of the end-to-end section (a build and N products)."""
    return [r for r in records if section(r) == END_TO_END]


def workload_records(records) -> list:
    """The records of the workload section (many matrices, each built and multiplied; one per method and
    dtype)."""
    return [r for r in records if section(r) == WORKLOAD]


def summary_records(records) -> list[dict]:
    """The SpMV records summaries compare: ``cusparse-best`` stands for the four cuSPARSE algorithms, and a wrong
    answer (:mod:`.wrong`) is there without its time, so that it counts as not measured."""
    algs = {b.name for b in CUSPARSE}
    return [untimed(r) if is_wrong(r) else r for r in spmv_records(records) if r["method"] not in algs]


def compared_methods(records) -> tuple[list[str], list[str]]:
    """(tried, ran): the methods a run tried (every SpMV record's method, as :func:`compared_label` counts it, so
    that a problem where every cuSPARSE algorithm was refused still tried ``cusparse-best``), and those with a
    time (a right answer, :func:`summary_records`) on at least one problem.  ``best-single`` (a copy of the
    fastest of our single formats' records) is no method of its own."""
    tried = list(dict.fromkeys(compared_label(r["method"]) for r in spmv_records(records)
                               if r["method"] != BEST_SINGLE))
    timed = {r["method"] for r in summary_records(records) if r.get("kernel_us", r.get("time_us"))}
    return tried, [m for m in tried if m in timed]


def compared_label(method: str) -> str:
    """The name a method is counted under among :func:`compared_methods`: ``cusparse-best`` for each of
    cuSPARSE's algorithms, the method itself otherwise."""
    return CUSPARSE_BEST if method in {b.name for b in CUSPARSE} else method
