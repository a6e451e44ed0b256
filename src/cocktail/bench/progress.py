"""Progress while a benchmark or a calibration runs: a rich progress bar when rich is installed, plain lines otherwise."""

from __future__ import annotations

import contextlib
import sys


def _rich_bar(description: str, total):
    """A transient rich progress bar on stderr and its task, or None without rich."""
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        return None
    from rich.console import Console

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    progress = Progress(*columns, console=Console(stderr=True), transient=True)
    return progress, progress.add_task(description, total=total)


@contextlib.contextmanager
def reporter(total: int, verbose: bool = False):
    """Yield a callback taking each finished record; shows a bar (rich) or, with ``verbose``, one line each."""
    bar = _rich_bar("benchmarking", total)
    if bar is None:
        yield (lambda r: print(f"  {r.matrix} {r.method}", file=sys.stderr)) if verbose else (lambda r: None)
        return
    progress, task = bar
    with progress:
        def advance(record):
            progress.update(task, advance=1, description=f"{record.matrix} {record.method}")
            if verbose:
                progress.console.print(f"  {record.matrix} {record.method}")

        yield advance


@contextlib.contextmanager
def counter(description: str):
    """Yield a callback ``(done, total, text)``: a bar (rich), else a line at every 5%."""
    bar = _rich_bar(description, None)
    if bar is None:
        shown = [-1]

        def report(done, total, text):
            pct = int(100 * done / max(total, 1))
            if pct // 5 != shown[0] // 5:
                shown[0] = pct
                print(f"  {description}: {done}/{total} ({pct}%) {text}", file=sys.stderr)

        yield report
        return
    progress, task = bar
    with progress:
        yield lambda done, total, text: progress.update(task, completed=done, total=total, description=text)
