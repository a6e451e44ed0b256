"""The block of wrong answers that every report shows first: each record whose relative error is past the
bound of its dtype (:mod:`..records.wrong`), with that error and that bound."""

from __future__ import annotations

import contextlib

from ..records.selection import section
from .progress import say
from ..records.wrong import EXIT_WRONG, error_bound, stored_dtype, wrong_records

#: What a record's section is called in the block, where the block holds more than SpMV records.
_WHAT = {"spmv": "SpMV", "spmm": "SpMM", "overhead": "call overhead"}


def title(count: int) -> str:
    """The block's title for ``count`` wrong records."""
    return (f"WRONG ANSWERS: {count} record{'s' * (count != 1)} past the error bound of {'their' if count != 1 else 'its'}"
            f" dtype; left out of every speedup, count and summary below")


def error_text(value) -> str:
    """A relative error as the block shows it: ``4.40e-08``, ``nan``, or ``-`` when the record has none."""
    return "-" if value is None else f"{float(value):.2e}"


def table(records) -> tuple[str, list[str], list[list[str]]] | None:
    """(title, header, rows) of the wrong records of ``records`` (dictionaries), or None when there is none.

    A row per record: matrix, dtype (the stored one after a slash when narrower), method, relative error
    and its bound; and what was timed (SpMV, SpMM k=..., call overhead) when not only SpMV records are wrong.
    """
    found = wrong_records(records)
    if not found:
        return None
    header = ["matrix", "dtype", "method", "rel err", "bound"]
    rows = []
    for r in found:
        dtype = r["dtype"] if stored_dtype(r) == r["dtype"] else f"{r['dtype']}/{stored_dtype(r)}"
        rows.append([r["matrix"], dtype, r["method"], error_text(r.get("rel_err")), f"{error_bound(r):.0e}"])
    kinds = [section(r) for r in found]
    if any(k != "spmv" for k in kinds):
        header.insert(0, "timed")
        for row, r, kind in zip(rows, found, kinds):
            row.insert(0, _WHAT.get(kind, kind) + (f" k={r.get('k')}" if kind == "spmm" else ""))
    return title(len(found)), header, rows


def exit_status(records, command: str) -> int:
    """The exit status of ``cocktail COMMAND`` for ``records``: 0, or :data:`~..records.wrong.EXIT_WRONG` saying
    on stderr how many records answered wrong."""
    found = wrong_records(records)
    if found:
        say(f"{_wrong_text(command, len(found))}; exit status {EXIT_WRONG}")
    return EXIT_WRONG if found else 0


@contextlib.contextmanager
def told_on_error(records, command: str):
    """Run the block (printing a report, drawing plots); where it raises, first say how many records answered
    wrong, which the error's exit status no longer says."""
    try:
        yield
    except BaseException:
        found = wrong_records(records)
        if found:
            say(f"{_wrong_text(command, len(found))}; the error below stops the command before its exit status "
                f"{EXIT_WRONG}")
        raise


def _wrong_text(command: str, count: int) -> str:
    return (f"cocktail {command}: {count} record{'s' * (count != 1)} past {'their' if count > 1 else 'its'} error "
            f"bound, listed first in the report and left out of every speedup and count")
