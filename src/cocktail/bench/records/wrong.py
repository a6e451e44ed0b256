"""Wrong answers: records whose relative error is past the bound of the dtype their values were stored in.

The harness checks every product it times against the float64 answer (:mod:`.runner`, :mod:`.overhead`)
and notes a record past its bound ``WRONG: relative error ...``.  Such a record's time is of a product
that did not compute the product: the reports list it on its own, leave it out of every speedup,
count and summary, and ``cocktail bench`` and ``cocktail report`` exit with :data:`EXIT_WRONG`.
Every place that judges whether a record's figures count asks :func:`is_wrong` (or :func:`usable`).
Records are :class:`~.record.Record` objects or the dictionaries written to JSON.
"""

from __future__ import annotations

#: Relative error above which a record is flagged: far beyond rounding for the dtype its values are stored in.
ERROR_FLAG = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-3, "float64": 1e-9, "complex64": 1e-3,
              "complex128": 1e-9}
#: The bound of a dtype not named in ERROR_FLAG.
DEFAULT_BOUND = 1e-3
#: How a wrong record's note starts.
PREFIX = "WRONG"
#: The exit status of ``cocktail bench`` and ``cocktail report`` when a record holds a wrong answer.
EXIT_WRONG = 3


def _get(record, key, default=None):
    return record.get(key, default) if isinstance(record, dict) else getattr(record, key, default)


def stored_dtype(record) -> str:
    """The dtype the record's values were stored in: ``params["value_dtype"]`` when narrower, else its dtype."""
    return (_get(record, "params") or {}).get("value_dtype") or _get(record, "dtype")


def error_bound(record) -> float:
    """The largest relative error the record may have: :data:`ERROR_FLAG` of its stored dtype."""
    return ERROR_FLAG.get(stored_dtype(record), DEFAULT_BOUND)


def flag(record) -> None:
    """Note ``record`` (a :class:`~.record.Record` with ``rel_err`` set) as wrong when its error is past its
    bound; a NaN error is past every bound."""
    if not record.rel_err <= error_bound(record):
        record.note = f"{PREFIX}: relative error {record.rel_err:.2e}"


def is_wrong(record) -> bool:
    """True for a record noted wrong, or measured with a relative error past its bound (NaN included)."""
    if (_get(record, "note") or "").startswith(PREFIX):
        return True
    err = _get(record, "rel_err")
    return isinstance(err, (int, float)) and not err <= error_bound(record)


def wrong_records(records) -> list:
    """The records of ``records`` that hold a wrong answer, in order."""
    return [r for r in records if is_wrong(r)]


def usable(record) -> bool:
    """True for a record whose figures count: it ran to the end (no note saying it was refused or failed) and
    did not answer wrong (:func:`is_wrong`)."""
    return not _get(record, "note") and not is_wrong(record)


#: Every field a measurement fills or derives from its times: what a wrong record must not show.  The
#: format's byte models (``spmv_bytes``, ``dram_bytes``, ``l2_ratio``, ``padding_ratio``) and the device's
#: ``copy_gbps`` stay: they are no measurement of the product.
MEASURED_FIELDS = ("kernel_us", "call_us", "time_us", "samples", "setup_ms", "gflops", "gbps", "bandwidth_fraction",
                   "dram_fraction", "speedup_cusparse_best", "speedup_cupyx", "paired_ratio", "paired_low",
                   "paired_high", "analysis_spmvs", "features_spmvs", "convert_spmvs", "measure_spmvs",
                   "cache_hit_spmvs", "back_to_back_us", "back_to_back_calls", "sync_call_us", "over_empty_launch",
                   "over_empty_graph", "sync_over_empty_launch", "sync_over_empty_graph", "build_us", "total_us")


def untimed(record: dict) -> dict:
    """A copy of a record dictionary with every measured or derived field (:data:`MEASURED_FIELDS`) None: what
    every summary, table and plot sees of a wrong record, so that it counts as not measured."""
    return {**record, **{key: None for key in MEASURED_FIELDS if key in record}}
