"""Progress while a benchmark or a calibration runs: a rich progress bar when rich is installed, plain lines otherwise.

Plain lines fit the terminal (``COLUMNS``; :data:`MESSAGE_COLUMNS` at most), continuation lines indented.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import textwrap
import time

from ..records.selection import compared_label
from ..records.wrong import is_wrong

#: The widest a message on stderr gets, whatever the terminal's width.
MESSAGE_COLUMNS = 100


def message_width() -> int:
    """The width messages on stderr wrap at: the terminal's (``COLUMNS``), at most :data:`MESSAGE_COLUMNS`."""
    return max(20, min(MESSAGE_COLUMNS, shutil.get_terminal_size((MESSAGE_COLUMNS, 24)).columns))


def wrapped(text: str) -> str:
    """``text`` wrapped within :func:`message_width`, continuation lines indented by two spaces (words whole)."""
    return textwrap.fill(text, message_width(), subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False)


def say(text: str) -> None:
    """Print a message on stderr, :func:`wrapped`."""
    print(wrapped(text), file=sys.stderr, flush=True)


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
    terminal (a log file), one line per problem (``per_problem`` records) with the methods that ran, its
    time and the time elapsed; with ``verbose``, also one line per record.  A wrong answer
    (:mod:`..records.wrong`) is named at once on a terminal, and counted in its problem's line."""
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
            if is_wrong(record):
                progress.console.print(f"  {record.note}: {record.matrix} {record.dtype} {record.method}")

        yield advance


#: What the progress lines start with, on a terminal as wide as MESSAGE_COLUMNS (narrower ones leave it out).
PREFIX = "cocktail bench: "


def problem_line(records, done: int, total: int, seconds: float, elapsed: float) -> str:
    """The line of one finished problem: how many of the methods tried ran (counted as the headline counts
    them, :func:`~..records.selection.compared_methods`), how many of those answered wrong, the time; it
    starts with :data:`PREFIX` where the terminal is :data:`MESSAGE_COLUMNS` wide."""
    tried = list(dict.fromkeys(compared_label(r.method) for r in records))
    ran = {compared_label(r.method) for r in records if r.kernel_us is not None or r.back_to_back_us is not None}
    wrong = {compared_label(r.method) for r in records if is_wrong(r)}
    last = records[-1]
    answered = f", {len(wrong)} answered WRONG" if wrong else ""
    prefix = PREFIX if message_width() >= MESSAGE_COLUMNS else ""
    return (f"{prefix}{done}/{total} {last.matrix} {last.dtype}: {len(ran)} of {len(tried)} methods ran"
            f"{answered}, {seconds:.1f} s (elapsed {_clock(elapsed)})")


def _lines(total: int, verbose: bool, per_problem: int | None):
    """The plain-line progress of :func:`reporter`."""
    start = time.monotonic()
    state = {"done": 0, "problem": [], "since": start}

    def line(record):
        state["done"] += 1
        state["problem"].append(record)
        if verbose:
            print(wrapped(f"  {record.matrix} {record.method}"), file=sys.stderr, flush=True)
        if per_problem and len(state["problem"]) == per_problem:
            now = time.monotonic()
            text = problem_line(state["problem"], state["done"], total, now - state["since"], now - start)
            print(wrapped(text), file=sys.stderr, flush=True)
            state["problem"], state["since"] = [], now

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
                print(wrapped(f"  {description}: {done}/{total} ({pct}%) {text}"), file=sys.stderr)

        yield report
        return
    progress, task = bar
    with progress:
        yield lambda done, total, text: progress.update(task, completed=done, total=total, description=text)
