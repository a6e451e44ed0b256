"""Benchmark records for people: the terminal table and summary, and the Markdown report.

``python -m cocktail.bench.report RESULTS.json [...] --title T --plots DIR`` writes the Markdown
report (``docs/benchmarks.md`` is made this way, never by hand).
"""

from __future__ import annotations

import sys
from collections import defaultdict

from . import metrics
from .baselines import CUSPARSE, CUSPARSE_BEST, Cusparse

COLUMNS = (("matrix", "matrix"), ("dtype", "dtype"), ("method", "method"), ("kernel_us", "kernel µs"),
           ("call_us", "call µs"), ("gflops", "GFLOP/s"), ("gbps", "GB/s"), ("bandwidth_fraction", "of copy"),
           ("speedup_cusparse_best", "× cuSPARSE"), ("rel_err", "rel err"), ("note", "note"))


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _value(record, key):
    return record.get(key) if isinstance(record, dict) else getattr(record, key)


def _print_rows(title: str, header, rows, file) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
        print(title, file=file)
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)), file=file)
        for row in rows:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)), file=file)
        return
    table = Table(title=title)
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 or h in ("matrix", "method", "dtype", "note") else "right")
    for row in rows:
        table.add_row(*row)
    Console(file=file, width=200).print(table)


def print_table(records, title: str, file=None) -> None:
    """Write one row per record to ``file`` (default stdout)."""
    rows = [[_cell(_value(r, key)) for key, _ in COLUMNS] for r in records]
    _print_rows(title, [h for _, h in COLUMNS], rows, file or sys.stdout)


def summary_records(records) -> list[dict]:
    """The records summaries compare: ``cusparse-best`` stands for the four cuSPARSE algorithms."""
    algs = {b.name for b in CUSPARSE}
    return [r for r in records if r["method"] not in algs]


def summary_tables(records) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of the suite summaries: speedups, win/lose counts, GFLOP/s statistics."""
    records = summary_records(records)
    tables = []
    methods = list(dict.fromkeys(r["method"] for r in records if metrics.time_us(r)))
    vs_best = metrics.geomean_speedups(records, CUSPARSE_BEST)
    vs_cupyx = metrics.geomean_speedups(records, "cupyx")
    if vs_best or vs_cupyx:
        rows = [[m, _cell(vs_best.get(m)), _cell(vs_cupyx.get(m))] for m in methods]
        tables.append(("Geometric-mean speedup (kernel time) over the problems both ran",
                       ["method", f"over {CUSPARSE_BEST}", "over cupyx"], rows))
    counts = metrics.win_lose(records)
    if counts:
        rows = [[m, str(counts[m]["win"]), str(counts[m]["ballpark"]), str(counts[m]["lose"])]
                for m in methods if m in counts]
        tables.append(("Fastest / in between / slowest per problem (Flegar & Anzt Fig. 7)",
                       ["method", "win", "ballpark", "lose"], rows))
    stats = metrics.gflops_statistics(records)
    rows = [[m, *(_cell(stats[m][k]) for k in ("min", "max", "mean", "median", "stddev")), str(stats[m]["count"])]
            for m in methods if m in stats]
    tables.append(("GFLOP/s statistics (Flegar & Anzt Table 1)",
                   ["method", "min", "max", "mean", "median", "stddev", "problems"], rows))
    return tables


def print_summary(records, file=None) -> None:
    """The suite summaries after the table, when there is more than one measured method."""
    if len({r["method"] for r in records if metrics.time_us(r)}) < 2:
        return
    for title, header, rows in summary_tables(records):
        _print_rows(title, header, rows, file or sys.stdout)


def _md_table(header, rows) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def pivot(records, dtype: str, suite: str) -> tuple[list[str], list[list[str]]]:
    """GFLOP/s of one suite and dtype: a row per matrix, a column per method, the fastest in bold."""
    rows = [r for r in records if r["dtype"] == dtype and r["suite"] == suite]
    methods = list(dict.fromkeys(r["method"] for r in summary_records(rows)))
    rate = defaultdict(dict)
    for r in summary_records(rows):
        t = metrics.time_us(r)
        if t:
            rate[r["matrix"]][r["method"]] = metrics.gflops(int(r["nnz"]), t * 1e-6)
    body = []
    for matrix in dict.fromkeys(r["matrix"] for r in rows):
        best = max(rate[matrix].values(), default=None)
        cells = []
        for m in methods:
            v = rate[matrix].get(m)
            cells.append("-" if v is None else (f"**{v:.3g}**" if v == best else f"{v:.3g}"))
        body.append([matrix, *cells])
    return ["matrix", *methods], body


def matrices_table(records) -> tuple[list[str], list[list[str]]]:
    """One row per matrix: suite, class, size, and its CSR bytes per SpMV over the L2 size per dtype."""
    csr_model = Cusparse("csr-alg1").name  # a GPU record of Bell & Garland's CSR byte model
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))
    ratio = {(r.get("suite", ""), r["matrix"], r["dtype"]): r.get("l2_ratio") for r in records
             if r["method"] == csr_model}
    rows = []
    for r in {(r.get("suite", ""), r["matrix"]): r for r in records}.values():
        key = (r.get("suite", ""), r["matrix"])
        rows.append([key[0], r["matrix"], r.get("kind", ""), str(r["rows"]), str(r["cols"]), str(r["nnz"]),
                     f"{r['nnz'] / max(r['rows'], 1):.1f}", *(_cell(ratio.get(key + (d,))) for d in dtypes)])
    return ["suite", "matrix", "class", "rows", "cols", "nnz", "nnz/row",
            *(f"CSR bytes / L2, {d}" for d in dtypes)], rows


def markdown(records: list[dict], title: str, header_lines=(), plots=()) -> str:
    """The Markdown report: header, summaries, plots, then GFLOP/s per suite and dtype."""
    lines = [f"# {title}", ""]
    for note in header_lines:
        lines += [note, ""]
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))
    header, rows = matrices_table(records)
    lines += ["## Matrices", "", *_md_table(header, rows)]
    for dtype in dtypes:
        for table_title, header, rows in summary_tables([r for r in records if r["dtype"] == dtype]):
            lines += [f"## {table_title}, {dtype}", "", *_md_table(header, rows)]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    for suite in dict.fromkeys(r["suite"] for r in records):
        for dtype in dtypes:
            header, rows = pivot(records, dtype, suite)
            if rows:
                lines += [f"## GFLOP/s: suite `{suite}`, {dtype}", "", *_md_table(header, rows)]
    notes = [r for r in records if r.get("note")]
    if notes:
        lines += ["## Methods that did not run", "",
                  *_md_table(["suite", "matrix", "dtype", "method", "note"],
                             [[r["suite"], r["matrix"], r["dtype"], r["method"], r["note"]] for r in notes])]
    return "\n".join(lines)


def main(argv=None) -> int:
    """``python -m cocktail.bench.report JSON [JSON ...] --title T [--note LINE] [--plots DIR]``."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m cocktail.bench.report")
    parser.add_argument("json", nargs="+", help="records written by cocktail bench --json (merged in order)")
    parser.add_argument("--title", default="Cocktail benchmark")
    parser.add_argument("--note", action="append", default=[], help="a line for the report's header")
    parser.add_argument("--plots", metavar="DIR", help="also draw the plots into DIR and link them from the report")
    parser.add_argument("--out", metavar="PATH", help="write the report here instead of stdout")
    args = parser.parse_args(argv)
    records = []
    for path in args.json:
        with open(path) as fh:
            records += json.load(fh)
    plots = []
    if args.plots:
        from . import plots as plotting

        base = Path(args.out).parent if args.out else Path(".")
        plots = [str(Path(p).relative_to(base)) if Path(p).is_relative_to(base) else str(p)
                 for p in plotting.write_all(records, args.plots)]
    text = markdown(records, args.title, args.note, plots)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
