"""Benchmark records for people: the terminal tables and summaries, and the Markdown report.

``cocktail report RESULTS.json [...] --title T --plots DIR`` writes the Markdown report
(``docs/benchmarks.md`` is made this way, never by hand); ``python -m cocktail.bench.report``
takes the same arguments but ``--plots``: this module never imports :mod:`.plots`.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from . import metrics
from .baselines import CUSPARSE_BEST, Cusparse
from .calltables import call_tables, cell
from .selection import section, spmv_records, summary_records

COLUMNS = (("matrix", "matrix"), ("dtype", "dtype"), ("method", "method"), ("kernel_us", "kernel µs"),
           ("call_us", "call µs"), ("gflops", "GFLOP/s"), ("gbps", "GB/s"), ("bandwidth_fraction", "of copy"),
           ("dram_fraction", "DRAM of copy"),
           ("speedup_cusparse_best", "× cuSPARSE"), ("rel_err", "rel err"), ("note", "note"))


def _value(record, key):
    return record.get(key) if isinstance(record, dict) else getattr(record, key)


def _print_rows(title: str, header, rows, file) -> None:
    from .console import Output  # it imports this module

    Output(file).table(title, header, rows)


def print_table(records, title: str, file=None) -> None:
    """Write one row per record to ``file`` (default stdout)."""
    rows = [[cell(_value(r, key)) for key, _ in COLUMNS] for r in records]
    _print_rows(title, [h for _, h in COLUMNS], rows, file or sys.stdout)


def summary_tables(records) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of the suite summaries: speedups, win/lose counts, GFLOP/s statistics."""
    records = summary_records(records)
    tables = []
    methods = list(dict.fromkeys(r["method"] for r in records if metrics.time_us(r)))
    vs_best = metrics.geomean_speedups(records, CUSPARSE_BEST)
    vs_cupyx = metrics.geomean_speedups(records, "cupyx")
    if vs_best or vs_cupyx:
        rows = [[m, cell(vs_best.get(m)), cell(vs_cupyx.get(m))] for m in methods]
        tables.append(("Geometric-mean speedup (kernel time) over the problems both ran",
                       ["method", f"over {CUSPARSE_BEST}", "over cupyx"], rows))
    counts = metrics.win_lose(records)
    if counts:
        rows = [[m, str(counts[m]["win"]), str(counts[m]["ballpark"]), str(counts[m]["lose"])]
                for m in methods if m in counts]
        tables.append(("Fastest / in between / slowest per problem (Flegar & Anzt Fig. 7)",
                       ["method", "win", "ballpark", "lose"], rows))
    stats = metrics.gflops_statistics(records)
    rows = [[m, *(cell(stats[m][k]) for k in ("min", "max", "mean", "median", "stddev")), str(stats[m]["count"])]
            for m in methods if m in stats]
    tables.append(("GFLOP/s statistics (Flegar & Anzt Table 1)",
                   ["method", "min", "max", "mean", "median", "stddev", "problems"], rows))
    return tables


def print_summary(records, file=None) -> None:
    """The suite summaries after the table, when there is more than one measured method."""
    if len({r["method"] for r in spmv_records(records) if metrics.time_us(r)}) < 2:
        return
    for title, header, rows in summary_tables(records):
        _print_rows(title, header, rows, file or sys.stdout)


def print_call_tables(records, file=None) -> None:
    """The call-time comparisons, call-overhead tables and target verdicts, where the records have them."""
    for title, header, rows in call_tables(records):
        _print_rows(title, header, rows, file or sys.stdout)


def _md_table(header, rows) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def pivot(records, dtype: str, suite: str) -> tuple[list[str], list[list[str]]]:
    """GFLOP/s of one suite and dtype: a row per matrix, a column per method, the fastest in bold."""
    rows = [r for r in spmv_records(records) if r["dtype"] == dtype and r["suite"] == suite]
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
    """One row per matrix: suite, class, family, size, and its CSR bytes per SpMV over the L2 size per dtype."""
    csr_model = Cusparse("csr-alg1").name  # a GPU record of Bell & Garland's CSR byte model
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))
    ratio = {(r.get("suite", ""), r["matrix"], r["dtype"]): r.get("l2_ratio") for r in spmv_records(records)
             if r["method"] == csr_model}
    rows = []
    for r in {(r.get("suite", ""), r["matrix"]): r for r in records}.values():
        key = (r.get("suite", ""), r["matrix"])
        rows.append([key[0], r["matrix"], r.get("kind", ""), r.get("family", ""), str(r["rows"]), str(r["cols"]),
                     str(r["nnz"]),
                     f"{r['nnz'] / max(r['rows'], 1):.1f}", *(cell(ratio.get(key + (d,))) for d in dtypes)])
    return ["suite", "matrix", "class", "family", "rows", "cols", "nnz", "nnz/row",
            *(f"CSR bytes / L2, {d}" for d in dtypes)], rows


def markdown(records: list[dict], title: str, header_lines=(), plots=()) -> str:
    """The Markdown report: header, matrices, call time, call overhead and targets, summaries, plots,
    then GFLOP/s per suite and dtype."""
    lines = [f"# {title}", ""]
    for note in header_lines:
        lines += [note, ""]
    header, rows = matrices_table(records)
    lines += ["## Matrices", "", *_md_table(header, rows)]
    for table_title, header, rows in call_tables(records):
        lines += [f"## {table_title}", "", *_md_table(header, rows)]
    spmv = spmv_records(records)
    dtypes = list(dict.fromkeys(r["dtype"] for r in spmv))
    for dtype in dtypes:
        for table_title, header, rows in summary_tables([r for r in spmv if r["dtype"] == dtype]):
            lines += [f"## {table_title}, {dtype}", "", *_md_table(header, rows)]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    for suite in dict.fromkeys(r["suite"] for r in spmv):
        for dtype in dtypes:
            header, rows = pivot(spmv, dtype, suite)
            if rows:
                lines += [f"## GFLOP/s: suite `{suite}`, {dtype}", "", *_md_table(header, rows)]
    notes = [r for r in records if r.get("note")]
    if notes:
        lines += ["## Methods that did not run", "",
                  *_md_table(["section", "suite", "matrix", "dtype", "method", "note"],
                             [[section(r), r["suite"], r["matrix"], r["dtype"], r["method"], r["note"]]
                              for r in notes])]
    return "\n".join(lines)


def add_arguments(parser) -> None:
    """The report command's arguments: JSON files, ``--title``, ``--note`` (repeatable), ``--out``, and
    ``--terminal`` with ``-v`` for the console report instead."""
    parser.add_argument("json", nargs="+", help="records written by cocktail bench --json (merged in order)")
    parser.add_argument("--title", default="Cocktail benchmark")
    parser.add_argument("--note", action="append", default=[], help="a line for the report's header")
    parser.add_argument("--out", metavar="PATH", help="write the report here instead of stdout")
    parser.add_argument("--terminal", action="store_true",
                        help="print what cocktail bench printed for these records instead of Markdown "
                             "(the answer first; -v for every record and table)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="with --terminal: every record, the suite summaries and the call-time tables")


def load(paths) -> list[dict]:
    """The records of the JSON files written by ``cocktail bench --json``, merged in order."""
    import json

    records = []
    for path in paths:
        with open(path) as fh:
            records += json.load(fh)
    return records


def write(args, records, plots=()) -> int:
    """Render ``records`` as Markdown (linking ``plots``) to ``args.out`` or stdout."""
    from pathlib import Path

    text = markdown(records, args.title, args.note, plots)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None) -> int:
    """``python -m cocktail.bench.report JSON [JSON ...] --title T [--note LINE] [--out PATH]`` (no plots;
    ``cocktail report`` takes the same arguments and ``--plots DIR``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m cocktail.bench.report",
                                     epilog="cocktail report takes the same arguments and also draws the plots")
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.terminal:
        from .console import print_report

        print_report(load(args.json), verbose=args.verbose)
        return 0
    return write(args, load(args.json))


if __name__ == "__main__":
    sys.exit(main())
