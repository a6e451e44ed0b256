"""Which records a table, summary or plot reads: the SpMV records, the block-product ones or the call-overhead
ones.

Records are dictionaries as written to JSON.  Every record names its ``section``: ``"spmv"``
(one method's kernel and call time on one problem), ``"spmm"`` (the same for a block of ``k``
vectors) or ``"overhead"`` (per-call host+GPU time of one way of calling a product, see
:mod:`.overhead`); records written before the field existed are SpMV records.
"""

from __future__ import annotations

from ..measuring.baselines import CUSPARSE
from .record import OVERHEAD, SPMM, SPMV


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


def summary_records(records) -> list[dict]:
    """The SpMV records summaries compare: ``cusparse-best`` stands for the four cuSPARSE algorithms."""
    algs = {b.name for b in CUSPARSE}
    return [r for r in spmv_records(records) if r["method"] not in algs]
