"""Print benchmark records as a table (rich when installed, plain text otherwise)."""

from __future__ import annotations

import sys

COLUMNS = ("matrix", "rows", "nnz", "dtype", "method", "time_us", "gflops", "gbps", "padding_ratio", "rel_err", "note")


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def print_table(records, title: str, file=None) -> None:
    """Write ``records`` as a table to ``file`` (default stdout)."""
    file = file or sys.stdout
    rows = [[_cell(getattr(r, c)) for c in COLUMNS] for r in records]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(COLUMNS)]
        print(title, file=file)
        print("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)), file=file)
        for row in rows:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)), file=file)
        return
    table = Table(title=title)
    for c in COLUMNS:
        table.add_column(c, justify="left" if c in ("matrix", "method", "dtype", "note") else "right")
    for row in rows:
        table.add_row(*row)
    Console(file=file, width=200).print(table)


MARKDOWN_COLUMNS = ("matrix", "rows", "nnz", "dtype", "method", "time_us", "gflops", "gbps", "rel_err")


def markdown(records: list[dict], title: str, header_lines=()) -> str:
    """A Markdown report of JSON records (as written by ``cocktail bench --json``)."""
    lines = [f"# {title}", ""]
    for note in header_lines:
        lines += [note, ""]
    lines.append("| " + " | ".join(MARKDOWN_COLUMNS) + " |")
    lines.append("|" + "---|" * len(MARKDOWN_COLUMNS))
    for r in records:
        lines.append("| " + " | ".join(_cell(r.get(c)) for c in MARKDOWN_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    """``python -m cocktail.bench.report RESULTS.json --title T [--note LINE ...]``: print a Markdown report."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m cocktail.bench.report")
    parser.add_argument("json", help="records written by cocktail bench --json")
    parser.add_argument("--title", default="Cocktail benchmark")
    parser.add_argument("--note", action="append", default=[], help="a line for the report's header")
    args = parser.parse_args(argv)
    with open(args.json) as fh:
        records = json.load(fh)
    sys.stdout.write(markdown(records, args.title, args.note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
