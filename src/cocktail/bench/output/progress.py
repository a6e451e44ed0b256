"""Progress while a benchmark or a calibration runs: a rich progress bar when rich is installed, plain lines otherwise."""

from __future__ import annotations

import contextlib
import sys
import time


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
def reporter(total: int, verbose: bool = False, per_problem: int | None = None):
    """Yield a callback taking each finished record: a bar on a terminal (rich); when stderr is not a
    terminal (a log file), one line per problem (``per_problem`` records) with its time and the time
    elapsed; with ``verbose``, also one line per record."""
    bar = _rich_bar("benchmarking", total) if sys.stderr.isatty() else None
    if bar is None:
        yield _lines(total, verbose, per_problem)
        return
    progress, task = bar
    with progress:
        def advance(record):
            progress.update(task, advance=1, description=f"{record.matrix} {record.method}")
            if verbose:
                progress.console.print(f"  {record.matrix} {record.method}")

        yield advance


def _lines(total: int, verbose: bool, per_problem: int | None):
    """The plain-line progress of :func:`reporter`."""
    start = time.monotonic()
    state = {"done": 0, "in_problem": 0, "since": start}

    def line(record):
        state["done"] += 1
        state["in_problem"] += 1
        if verbose:
            print(f"  {record.matrix} {record.method}", file=sys.stderr, flush=True)
        if per_problem and state["in_problem"] == per_problem:
            now = time.monotonic()
            print(f"cocktail bench: {state['done']}/{total} {record.matrix} {record.dtype}: {per_problem} methods in "
                  f"{now - state['since']:.1f} s (elapsed {_clock(now - start)})", file=sys.stderr, flush=True)
            state["in_problem"], state["since"] = 0, now

    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"


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
