"""Tables of call time: ``cocktail-auto`` against cupyx, torch and SciPy, the call-overhead
section, the planner's table and the target verdicts of :mod:`.targets`; each table
is (title, header, rows) of text.

Records are dictionaries as written to JSON.
"""

from __future__ import annotations

from collections import defaultdict

from ..measuring import paired
from ..records import metrics
from . import targets
from ..measuring.overhead_ways import BOUND, MATMUL, MATVEC, METHODS
from ..records.selection import BEST_SINGLE, overhead_records, spmv_records
from ..records.wrong import is_wrong, usable

#: What a cell of a wrong answer's time or ratio says (:mod:`..records.wrong`).
WRONG = "wrong"


def cell(value) -> str:
    """A table cell: ``-`` for nothing, three significant digits for a float."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _dtypes(records) -> list[str]:
    return list(dict.fromkeys(r["dtype"] for r in records))


def overhead_table(records, dtype: str) -> tuple[list[str], list[list[str]]]:
    """Call overhead of one dtype: a row per matrix, each way of calling's back-to-back / synchronous
    per-call µs, and the back-to-back ratios to the floors that the targets read (``cocktail-matvec``
    and ``cocktail-matmul`` over ``empty-launch``, ``cocktail-bound`` over ``empty-graph``); ``wrong`` for
    the times and ratios of a wrong answer."""
    rows = [r for r in overhead_records(records) if r["dtype"] == dtype]
    order = [m.name for m in METHODS]
    methods = sorted(dict.fromkeys(r["method"] for r in rows),
                     key=lambda m: order.index(m) if m in order else len(order))
    by_matrix = defaultdict(dict)
    for r in rows:
        by_matrix[(r.get("suite", ""), r["matrix"])][r["method"]] = r
    ratio_columns = ((MATVEC, "over_empty_launch", "matvec / launch"), (MATMUL, "over_empty_launch", "A @ x / launch"),
                     (BOUND, "over_empty_graph", "bound / empty graph"))
    body = []
    for by_method in by_matrix.values():
        first = next(iter(by_method.values()))
        cells = []
        for m in methods:
            r = by_method.get(m, {})
            b2b, sync = r.get("back_to_back_us"), r.get("sync_call_us")
            cells.append(WRONG if r and is_wrong(r) else "-" if b2b is None else f"{b2b:.3g} / {cell(sync)}")
        ratios = [WRONG if m in by_method and is_wrong(by_method[m]) else cell(by_method.get(m, {}).get(field))
                  for m, field, _ in ratio_columns]
        body.append([first["matrix"], str(first["rows"]), str(first["nnz"]), *cells, *ratios])
    return ["matrix", "rows", "nnz", *(f"{m} µs" for m in methods), *(h for _, _, h in ratio_columns)], body


def comparison_table(records, dtype: str, cpu: bool = False) -> tuple[list[str], list[list[str]]]:
    """``cocktail-auto`` beside cupyx and torch (GPU call time), or on the CPU beside SciPy, a row per matrix
    where it and another ran; the ratios are speedups, as everywhere: their time over ours (on the CPU the
    paired median ratio, :func:`~..measuring.paired.speedup`), none beside a wrong answer, whose time says
    ``wrong``."""
    auto = targets.AUTO
    if cpu:
        others, time_of = ["scipy"], metrics.time_us
    else:
        others, time_of = ["cupyx", "torch"], (lambda r: r.get("call_us"))
    by_matrix = defaultdict(dict)
    for r in spmv_records(records):
        on_cpu = r.get("kernel_timing") == "cpu"
        if r["dtype"] == dtype and r["method"] in (auto, *others) and on_cpu == cpu and time_of(r) \
                and (usable(r) or is_wrong(r)):
            by_matrix[(r.get("suite", ""), r["matrix"])][r["method"]] = r
    body = []
    for (_, matrix), by in by_matrix.items():
        if auto not in by or not set(others) & set(by):
            continue
        shown = {m: WRONG if is_wrong(r) else time_of(r) for m, r in by.items()}
        ratios = [_speedup(by[auto], by[o], time_of, cpu) if o in by else None for o in others]
        body.append([matrix, cell(shown[auto]), *(cell(shown.get(o)) for o in others), *map(cell, ratios)])
    ratio_headers = [f"{o} / {auto}" for o in others]
    return ["matrix", f"{auto} µs", *(f"{o} µs" for o in others), *ratio_headers], body


def _speedup(auto, other, time_of, cpu: bool) -> float | None:
    """``other``'s time over ``auto``'s, None where either answered wrong; on the CPU the paired ratio."""
    if is_wrong(auto) or is_wrong(other):
        return None
    return paired.speedup(auto, other) if cpu else time_of(other) / time_of(auto)


def call_tables(records) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of the call-time comparisons, the call-overhead tables and the targets."""
    tables = []
    for cpu, what in ((False, "Call time (one synchronous call): cocktail-auto against cupyx and torch"),
                      (True, "CPU time: cocktail-auto against SciPy")):
        for dtype in _dtypes(spmv_records(records)):
            header, rows = comparison_table(records, dtype, cpu)
            if rows:
                tables.append((f"{what}, {dtype}", header, rows))
    for dtype in _dtypes(overhead_records(records)):
        header, rows = overhead_table(records, dtype)
        tables.append((f"Call overhead, {dtype}: per-call µs, back to back / one synchronous call", header, rows))
    for dtype in _dtypes(spmv_records(records)):
        header, rows = planner_table(records, dtype)
        if rows:
            tables.append((f"format='auto' against best-single, {dtype}: kernel µs and plans", header, rows))
    found = targets.verdicts(records)
    if found:
        tables.append(("Targets: call overhead and the planner", *verdict_table(found)))
    found = targets.performance_verdicts(records)
    if found:
        tables.append(("Targets: kernel time, call time, DRAM bandwidth, DIA floor", *verdict_table(found)))
    found = targets.vendor_verdicts(records)
    if found:
        tables.append(("Targets: never slower than cuSPARSE", *verdict_table(found)))
    return tables


def planner_table(records, dtype: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows): per matrix, best-single and the plans of cocktail-auto and cocktail-measured,
    their kernel time, best-single's time over theirs, and cocktail-auto's planning cost in SpMVs (analysis,
    the race, a decision from the decision cache, conversion)."""
    by = defaultdict(dict)
    for r in spmv_records(records):
        if r["dtype"] == dtype and r.get("kernel_timing") != "cpu":
            by[(r.get("suite", ""), r["matrix"])][r["method"]] = r
    rows = []
    for (suite, matrix), methods in by.items():
        best, auto = methods.get(BEST_SINGLE), methods.get(targets.AUTO)
        if not best or not auto or not usable(auto):
            continue
        row = [suite, matrix, f"{best['params'].get('best_of', '')} {cell(best['kernel_us'])}"]
        for method in (targets.AUTO, targets.MEASURED):
            r = methods.get(method)
            if not r or not usable(r) or not r.get("kernel_us"):
                row += ["-", WRONG if r and is_wrong(r) else "-", "-"]
                continue
            plan = r["params"].get("plan_detail") or r["params"].get("plan", "")
            share = r["params"].get("plan", "")
            label = plan if share == plan or " " not in share else f"{share}: {plan}"
            row += [label, cell(r["kernel_us"]), cell(best["kernel_us"] / r["kernel_us"])]
        row += [cell(auto.get(k)) for k in ("analysis_spmvs", "measure_spmvs", "cache_hit_spmvs", "convert_spmvs")]
        rows.append(row)
    header = ["suite", "matrix", "best-single µs", "cocktail-auto plan", "µs", "best / auto",
              "cocktail-measured plan", "µs", "best / measured", "analysis (SpMVs)", "race (SpMVs)",
              "cache hit (SpMVs)", "conversion (SpMVs)"]
    return header, rows


def verdict_table(found) -> tuple[list[str], list[list[str]]]:
    """(header, rows): a row per verdict with its matrices, geometric mean, worst matrix, limit and verdict."""
    rows = []
    for v in found:
        worst = v.worst
        rows.append([v.target.title, v.dtype, str(len(v.ratios) + len(v.missing) + len(v.wrong)), cell(v.geomean),
                     "-" if worst is None else f"{worst[1]:.3g} ({worst[0]})", v.target.limit_text(),
                     v.verdict_text()])
    return ["target", "dtype", "matrices", "geomean", "worst (matrix)", "limit", "verdict"], rows
