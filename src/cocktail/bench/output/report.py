"""The Markdown report of benchmark records (the terminal report is :mod:`.console`).

``cocktail report RESULTS.json [...] --title T --plots DIR`` writes the Markdown report
(``docs/benchmarks.md`` is made this way, never by hand); ``python -m cocktail.bench.output.report``
takes the same arguments but ``--plots``: this module never imports :mod:`.plots`.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from ..records import metrics
from ..measuring.baselines import Cusparse
from .calltables import call_tables, cell
from ..records.selection import section, spmv_records, summary_records
from .summaries import summary_tables
from . import end_to_end, workload, wrong_answers
from ..records.files import load_json
from ..records.wrong import is_wrong


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
    """The Markdown report: header, wrong answers (where a record holds one), matrices, call time, call
    overhead and targets, summaries, end to end, the workload, plots, then GFLOP/s per suite and dtype."""
    lines = [f"# {title}", ""]
    for note in header_lines:
        lines += [note, ""]
    wrong = wrong_answers.table(records)
    if wrong is not None:
        heading, header, rows = wrong
        lines += ["## Wrong answers", "", f"**{heading}.**", "", *_md_table(header, rows)]
    header, rows = matrices_table(records)
    lines += ["## Matrices", "", *_md_table(header, rows)]
    for table_title, header, rows in call_tables(records):
        lines += [f"## {table_title}", "", *_md_table(header, rows)]
    spmv = spmv_records(records)
    dtypes = list(dict.fromkeys(r["dtype"] for r in spmv))
    for dtype in dtypes:
        for table_title, header, rows in summary_tables([r for r in spmv if r["dtype"] == dtype]):
            lines += [f"## {table_title}, {dtype}", "", *_md_table(header, rows)]
    for title, headline, header, rows in end_to_end.sections(records):
        lines += [f"## {title[0].upper()}{title[1:]}", "", headline, "", *_md_table(header, rows)]
    for title, headline, header, rows in workload.sections(records):
        lines += [f"## {title[0].upper()}{title[1:]}", "", headline, "", *_md_table(header, rows)]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    for suite in dict.fromkeys(r["suite"] for r in spmv):
        for dtype in dtypes:
            header, rows = pivot(spmv, dtype, suite)
            if rows:
                lines += [f"## GFLOP/s: suite `{suite}`, {dtype}", "", *_md_table(header, rows)]
    notes = [r for r in records if r.get("note") and not is_wrong(r) and not end_to_end.beyond_budget(r)]
    if notes:
        lines += ["## Methods that did not run", "",
                  *_md_table(["section", "suite", "matrix", "dtype", "method", "note"],
                             [[section(r), r["suite"], r["matrix"], r["dtype"], r["method"], r["note"]]
                              for r in notes])]
    return "\n".join(lines)


def add_arguments(parser) -> None:
    """The report command's arguments: JSON files, ``--title``, ``--note`` (repeatable), ``--out``, and
    ``--terminal`` with ``-v`` for the console report instead."""
    parser.add_argument("json", nargs="+",
                        help="records written by cocktail bench --json, or gzipped (.json.gz) (merged in order)")
    parser.add_argument("--title", default="Cocktail benchmark")
    parser.add_argument("--note", action="append", default=[], help="a line for the report's header")
    parser.add_argument("--out", metavar="PATH", help="write the report here instead of stdout")
    parser.add_argument("--terminal", action="store_true",
                        help="print what cocktail bench printed for these records instead of Markdown "
                             "(the answer first; -v for every record and table)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="with --terminal: every record, the suite summaries and the call-time tables")


def load(paths) -> list[dict]:
    """The records of the JSON files written by ``cocktail bench --json`` (or gzipped: ``.json.gz``), merged
    in order."""
    records = []
    for path in paths:
        records += load_json(path)
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


def render(args, records, plots=()) -> int:
    """The console report (``--terminal``) or the Markdown one, of ``records``; ``--terminal`` refuses the
    Markdown report's outputs rather than drop them."""
    if not args.terminal:
        return write(args, records, plots)
    given = [o for o, v in (("--out", args.out), ("--plots", getattr(args, "plots", None))) if v]
    if given:
        raise ValueError(f"--terminal prints to the terminal; {' and '.join(given)} belong to the Markdown report")
    from .console import print_report

    print_report(records, verbose=args.verbose)
    return 0


def main(argv=None) -> int:
    """``python -m cocktail.bench.output.report JSON [JSON ...] --title T [--note LINE] [--out PATH]`` (no plots;
    ``cocktail report`` takes the same arguments and ``--plots DIR``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m cocktail.bench.output.report",
                                     epilog="cocktail report takes the same arguments and also draws the plots")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        records = load(args.json)
        with wrong_answers.told_on_error(records, "report"):
            status = render(args, records)
        return status or wrong_answers.exit_status(records, "report")
    except ValueError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
