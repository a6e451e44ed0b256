"""Progress while a benchmark runs: a rich progress bar when rich is installed, plain lines otherwise."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def reporter(total: int, verbose: bool = False):
    """Yield a callback taking each finished record; shows a bar (rich) or, with ``verbose``, one line each."""
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield (lambda r: print(f"  {r.matrix} {r.method}", file=sys.stderr)) if verbose else (lambda r: None)
        return
    from rich.console import Console

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("benchmarking", total=total)

        def advance(record):
            progress.update(task, advance=1, description=f"{record.matrix} {record.method}")
            if verbose:
                progress.console.print(f"  {record.matrix} {record.method}")

        yield advance
