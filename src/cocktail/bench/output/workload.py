"""The workload part of the reports (:mod:`..measuring.workload`): per dtype a headline, ``cocktail-auto``'s
whole workload against the baseline's (cupyx on the GPU, SciPy on the CPU) as a ratio, above 1 ours is faster,
and a short table of each method's builds and whole workload.

Records are dictionaries as written to JSON.  A ratio is the baseline's ``total_us`` over ours; a wrong answer
(:mod:`..records.wrong`) or a method that did not run gives none.
"""

from __future__ import annotations

from ...describe import figures
from ..measuring.methods import AUTO
from ..records.selection import workload_records
from ..records.wrong import is_wrong, usable
from .end_to_end import CUPYX, NAMES, SCIPY, WRONG

#: The workload target: the whole workload at least this fraction of cupyx's speed.
TARGET = 1.0

#: The terms the section's table uses, for the report's footnote.
TERMS = {
    "builds s": "the workload's builds from the host matrices (cocktail-auto: SparseMatrix(S), format='auto', the "
                "decision cache off, so that every build pays its decision), each synchronised, summed over the "
                "matrices; the median of the passes",
    "total s": "the whole workload: each matrix built, then its products A @ x back to back, synchronised at the "
               "end of each matrix, summed over the matrices; the median of the passes",
    "× ours": "the method's whole workload over cocktail-auto's; above 1 ours is faster",
}


def groups(records) -> dict:
    """The workload records by dtype, in the order they come."""
    out = {}
    for r in workload_records(records):
        out.setdefault(r["dtype"], []).append(r)
    return out


def baseline(records) -> str:
    """The headline's baseline: cupyx where the records hold it (GPU), else SciPy."""
    return CUPYX if any(r["method"] == CUPYX for r in records) else SCIPY


def _by_method(records) -> dict:
    return {r["method"]: r for r in records}


def ratio(records, method: str) -> float | None:
    """``method``'s whole workload over cocktail-auto's (above 1 ours is faster), None unless both ran and
    answered right."""
    by = _by_method(records)
    pair = by.get(AUTO), by.get(method)
    if None in pair or not all(usable(r) and r.get("total_us") for r in pair):
        return None
    return pair[1]["total_us"] / pair[0]["total_us"]


def _seconds(us) -> str:
    """Microseconds as seconds to three significant figures, ``-`` for none."""
    return figures(None if us is None else us / 1e6)


def _nonzeros(n: int) -> str:
    """A count of nonzeros in millions (``1.2M``) or thousands (``47K``)."""
    return f"{n / 1e6:.2g}M" if n >= 1e6 else f"{n / 1e3:.3g}K"


def _what(record) -> str:
    """What the workload was: ``50 matrices of 1.2-9.2M nonzeros, each built from the host, then 20 products``."""
    p = record.get("params") or {}
    return (f"{p.get('matrices', '?')} matrices of {_nonzeros(p.get('nnz_min', 0))}-{_nonzeros(p.get('nnz_max', 0))}"
            f" nonzeros, each built from the host, then {record.get('products')} products A @ x")


def title(dtype: str, records) -> str:
    """What a dtype's headline and table are of: ``workload of 50 matrices, float64``."""
    count = (records[0].get("params") or {}).get("matrices", "?") if records else "?"
    return f"workload of {count} matrices, {dtype}"


def headline(records) -> str:
    """One dtype's answer: cocktail-auto's whole workload against the baseline's, the ratio (above 1 ours is
    faster), both totals and both builds; on the GPU whether the workload target (:data:`TARGET`) is met."""
    base = baseline(records)
    name = NAMES[base]
    by = _by_method(records)
    ours, theirs = by.get(AUTO), by.get(base)
    value = ratio(records, base)
    if value is None:
        bad = [m for m in (AUTO, base) if m in by and is_wrong(by[m])]
        why = f": {' and '.join(bad)} answered wrong" if bad else ""
        return f"{AUTO}'s whole workload against {name}'s: not both measured{why}"
    text = (f"{AUTO}'s whole workload ({_what(ours)}) runs at {value:.2f}x {name}'s speed "
            f"({'faster' if value > 1 else 'slower'}): {_seconds(ours['total_us'])} s against "
            f"{_seconds(theirs['total_us'])} s, of which builds {_seconds(ours['build_us'])} s against "
            f"{_seconds(theirs['build_us'])} s")
    if base == CUPYX:
        text += f"; target at least {TARGET:.1f}x: {'met' if value >= TARGET else 'missed'}"
    return text


def table(records) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one dtype: per method its builds' and whole workload's seconds and, for a baseline,
    its whole workload over ours; a note column where a method did not run."""
    rows = []
    for r in records:
        wrong = is_wrong(r)
        value = None if r["method"] == AUTO else ratio(records, r["method"])
        rows.append([r["method"], WRONG if wrong else _seconds(r.get("build_us")),
                     WRONG if wrong else _seconds(r.get("total_us")),
                     "" if r["method"] == AUTO else (WRONG if wrong else "-" if value is None else f"{value:.2f}"),
                     "" if wrong else r.get("note") or ""])
    header = ["method", "builds s", "total s", "× ours", "note"]
    if not any(row[-1] for row in rows):
        header, rows = header[:-1], [row[:-1] for row in rows]
    return header, rows


def sections(records) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """``(title, headline, header, rows)`` per dtype of the workload records, in their order."""
    return [(title(dtype, rows), headline(rows), *table(rows)) for dtype, rows in groups(records).items()]


def terms(header) -> list[str]:
    """The footnote terms a section's table used."""
    return [h for h in header if h in TERMS]
