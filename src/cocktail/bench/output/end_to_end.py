"""The end-to-end part of the reports (:mod:`..measuring.end_to_end`): per dtype and source a headline saying
from which number of products on ``cocktail-auto``'s whole job (build and N products) is faster than the
baseline's (cupyx on the GPU, SciPy on the CPU), and a table of each matrix's builds and whole-job speedups.

Records are dictionaries as written to JSON.  A speedup is the baseline's ``total_us`` over ours at the
same N; a wrong answer (:mod:`..records.wrong`) or a mark beyond the time budget gives none.
"""

from __future__ import annotations

from collections import defaultdict

from ...describe import figures
from ..measuring.end_to_end import BUDGET_NOTE
from ..measuring.methods import AUTO
from ..records import metrics
from ..records.selection import end_to_end_records
from ..records.wrong import is_wrong, usable

#: The baseline of the headline on the GPU and on the CPU, and how the lines name them.
CUPYX, SCIPY = "cupyx", "scipy"
NAMES = {CUPYX: "cupyx", SCIPY: "SciPy", "torch": "torch"}
#: What a cell says of a wrong answer, and of a mark beyond the time budget.
WRONG, BUDGET = "wrong", "budget"
#: Where the matrix was built from, as the headline says it.
SOURCE_TEXT = {"host": "from a host matrix", "device": "from a device matrix"}

#: The terms the section's table uses, for the report's footnote.
TERMS = {
    "ours ms": "cocktail-auto's construction, SparseMatrix(S) with format='auto' and the decision cache off "
               "(every build pays its decision), synchronised; the median of the repetitions",
    "their ms": "the baseline's construction (cupyx's csr_matrix(S), torch's sparse_csr_tensor, SciPy's "
                "csr_array(S)), synchronised; the median of the repetitions",
    "× N": "end to end: the baseline's whole job (build, then N products A @ x back to back, synchronised at "
           "the end) over cocktail-auto's, medians of the repetitions; above 1 ours is faster; 'budget': the "
           "products stopped at the time budget before N",
}


def _key(r) -> tuple:
    return r.get("suite", ""), r["matrix"]


def baseline(records) -> str:
    """The headline's baseline: cupyx where the records hold it (GPU), else SciPy."""
    return CUPYX if any(r["method"] == CUPYX for r in records) else SCIPY


def groups(records) -> dict:
    """The end-to-end records by (dtype, build_from), in the order they come."""
    out = defaultdict(list)
    for r in end_to_end_records(records):
        out[(r["dtype"], r.get("build_from") or "host")].append(r)
    return dict(out)


def _totals(records) -> dict:
    """``{(suite, matrix, method): {N: total_us}}`` of the records that ran to N and answered right."""
    out = defaultdict(dict)
    for r in records:
        if r.get("total_us") and usable(r):
            out[(*_key(r), r["method"])][r["products"]] = r["total_us"]
    return out


def speedups(records, base: str) -> dict:
    """``{(suite, matrix): {N: ratio}}``: ``base``'s whole job over ours at each N where both have one."""
    totals = _totals(records)
    out = defaultdict(dict)
    for (suite, matrix, method), ours in totals.items():
        if method != AUTO:
            continue
        theirs = totals.get((suite, matrix, base), {})
        for n, t in ours.items():
            if n in theirs:
                out[(suite, matrix)][n] = theirs[n] / t
    return dict(out)


def crossover(ratios: dict) -> tuple[str, list]:
    """Where ``{N: ratio}`` says ours wins (ratio above 1): ``("always", [])``, ``("never", [])``, ``("from",
    [N])`` (faster from N on, to the last N), or ``("only", [N, ...])`` (faster at those N, not at the last)."""
    marks = sorted(ratios)
    wins = [n for n in marks if ratios[n] > 1]
    if not wins:
        return "never", []
    if len(wins) == len(marks):
        return "always", []
    if wins[-1] == marks[-1]:
        last_loss = next(n for n in reversed(marks) if ratios[n] <= 1)
        return "from", [marks[marks.index(last_loss) + 1]]
    return "only", wins


def _n(n: int) -> str:
    return f"{n:,}"


def _matrices(count: int) -> str:
    return f"{count} matri{'x' if count == 1 else 'ces'}"


def title(dtype: str, build_from: str) -> str:
    """What a (dtype, source)'s headline and table are of: ``end to end from a host matrix, float64``."""
    return f"end to end {SOURCE_TEXT.get(build_from, build_from)}, {dtype}"


def headline(records) -> str:
    """One (dtype, source)'s answer, after its :func:`title`: from which N on cocktail-auto's whole job is
    faster than the baseline's (:func:`crossover` of the geometric mean over the matrices of the speedups at
    each N), those means, and the matrices where it is faster at no N measured."""
    base = baseline(records)
    name = NAMES[base]
    per_matrix = speedups(records, base)
    wrong = {_key(r) for r in records if is_wrong(r) and r["method"] in (AUTO, base)}
    left_out = f"; {len(wrong)} more where an answer was wrong" if wrong else ""
    if not per_matrix:
        return f"{AUTO} against {name}: not both measured" + left_out
    marks = sorted({n for ratios in per_matrix.values() for n in ratios})
    means = {n: metrics.geomean([r[n] for r in per_matrix.values() if n in r]) for n in marks}
    counts = {n: sum(n in r for r in per_matrix.values()) for n in marks}
    kind, at = crossover(means)
    verdict = _verdict(kind, at, name, marks)
    mean_text = ", ".join(f"{means[n]:.2f}x at {_n(n)}" + (f" (on {_matrices(counts[n])})"
                                                             if counts[n] < len(per_matrix) else "") for n in marks)
    text = (f"{AUTO}'s whole job (build, then N products A @ x) {verdict} (geometric mean of {name}'s "
            f"time over ours: {mean_text}; {_matrices(len(per_matrix))})")
    never = [(key, max(r)) for key, r in per_matrix.items() if all(v <= 1 for v in r.values())]
    if never and (kind != "never" or len(never) < len(per_matrix)):
        names = [key[1] + (f" (to {_n(top)})" if top < marks[-1] else "") for key, top in never]
        text += (f"; never faster up to N = {_n(marks[-1])} on {len(never)} of {len(per_matrix)} matrices: "
                 f"{', '.join(names)}")
    return text + left_out


def _verdict(kind: str, at: list, name: str, marks: list) -> str:
    """The words of :func:`crossover`'s answer against ``name``, over ``marks``."""
    if kind == "always":
        return f"is faster than {name}'s at every N from {_n(marks[0])} on"
    if kind == "never":
        return f"is not faster than {name}'s at any N up to {_n(marks[-1])}"
    if kind == "from":
        return f"is faster than {name}'s from N = {_n(at[0])} products on"
    return f"is faster than {name}'s only at N = {' and '.join(map(_n, at))}"


def _mark_heading(n: int) -> str:
    return f"× {n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"× {n}"


def _ms(r) -> str:
    """A build's milliseconds from one of its records: ``wrong``, or ``-`` where it did not run."""
    if r is None or r.get("build_us") is None:
        return WRONG if r is not None and is_wrong(r) else "-"
    return WRONG if is_wrong(r) else figures(r["build_us"] / 1e3)


def beyond_budget(record) -> bool:
    """True for an end-to-end record of a mark its products did not reach within the time budget."""
    return (record.get("note") or "").startswith(BUDGET_NOTE)


def _ratio_cell(ours, theirs, n: int) -> str:
    """A speedup cell: theirs over ours at ``n``; ``wrong``, ``budget`` or ``-`` where there is none."""
    pair = (ours.get(n), theirs.get(n))
    if any(r is not None and is_wrong(r) for r in pair):
        return WRONG
    if any(r is not None and beyond_budget(r) for r in pair):
        return BUDGET
    if None in pair or not all(usable(r) and r.get("total_us") for r in pair):
        return "-"
    return f"{pair[1]['total_us'] / pair[0]['total_us']:.2f}"


def table(records) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one (dtype, source): per matrix and baseline (cupyx and torch on the GPU, SciPy on the
    CPU), the two builds' milliseconds and the whole-job speedup at each N; the method column is left out
    where there is one baseline, which the build column then names."""
    by = defaultdict(dict)  # (suite, matrix, method) -> {N: record}
    for r in records:
        by[(*_key(r), r["method"])][r["products"]] = r
    marks = sorted({r["products"] for r in records})
    bases = [m for m in dict.fromkeys(r["method"] for r in records) if m != AUTO]
    rows = []
    for suite, matrix in dict.fromkeys(_key(r) for r in records):
        ours = by.get((suite, matrix, AUTO), {})
        first_ours = next(iter(ours.values()), None)
        for i, base in enumerate(bases):
            theirs = by.get((suite, matrix, base), {})
            rows.append([matrix if i == 0 else "", base, _ms(first_ours) if i == 0 else "",
                         _ms(next(iter(theirs.values()), None)), *(_ratio_cell(ours, theirs, n) for n in marks)])
    header = ["matrix", "method", "ours ms", "their ms", *map(_mark_heading, marks)]
    if len(bases) == 1:
        header[3] = f"{NAMES.get(bases[0], bases[0])} ms"
        header, rows = header[:1] + header[2:], [row[:1] + row[2:] for row in rows]
    return header, rows


def sections(records) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """``(title, headline, header, rows)`` per (dtype, source) of the end-to-end records, in their order."""
    return [(title(dtype, build_from), headline(rows), *table(rows))
            for (dtype, build_from), rows in groups(records).items()]


def terms(header) -> list[str]:
    """The footnote terms a section's table used."""
    used = ["ours ms", "their ms"] if "ours ms" in header else []  # "their ms" named after a lone baseline too
    return used + (["× N"] if any(h.startswith("× ") for h in header) else [])
