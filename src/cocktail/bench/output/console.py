"""The terminal report of ``cocktail bench`` and ``cocktail report --terminal``: the answer first.

First the wrong answers, where a record holds one (:mod:`.wrong_answers`); then per dtype a
headline (:mod:`.headline`: cocktail-auto against the best of cuSPARSE's algorithms on the GPU,
against SciPy on the CPU) and a per-matrix table of cocktail-auto's plan and rates, sized to the
terminal; the block products and the end-to-end section (:mod:`.end_to_end`) where the records hold
them; then a footnote defining the terms shown. ``verbose`` adds every record, the suite summaries and
the call-time tables. Everything is computed from the records, so saved JSON prints the same.
"""

from __future__ import annotations

import shutil
import sys
import textwrap

from ...describe import figures
from ..records import metrics
from .calltables import call_tables
from .headline import AUTO, TIE_PERCENT, auto_speedups, baseline, headline, on_cpu  # noqa: F401 - the report's parts
from .summaries import COLUMNS, summary_tables
from ..records.selection import overhead_records, spmv_records, summary_records
from ..records.wrong import is_wrong
from . import blocks, end_to_end, workload, wrong_answers

SEP = 2  # spaces between table columns, rich's and plain
#: The compact table's columns left out, in this order, when the terminal is too narrow for them.
COMPACT_DROP = ("rows", "GFLOP/s", "nonzeros", "of copy")
#: Then these are shortened, in this order.
COMPACT_SHORTEN = ("plan", "fastest", "matrix")

#: What each printed term means; the footnote lists the ones a report used.
TERMS = {
    "block kernel": "what cocktail-auto's plan runs for a block of k vectors: a block kernel (each stored entry "
                    "read once per tile of columns) and its shape, or one SpMV per column, for each part",
    "auto µs": "cocktail-auto's block product A @ X (row-major X and Y), kernel time as µs",
    "cuSPARSE µs": "cusparse-spmm-best: the fastest of cuSPARSE's SpMM algorithms and memory orders, "
                   "descriptors, workspace and preprocessing made once",
    "gain": "k separate SpMVs of cocktail-auto's plan over its block product: what reading the matrix once buys",
    "plan": "the format (and kernel) cocktail-auto chose; FORMAT(share%) ... when it splits the matrix",
    "µs": "kernel time, median: a CUDA graph replay of the product (back to back calls where capture is "
          "refused); the host cost of a call is left out",
    "kernel µs": "as µs",
    "cpu µs": "median time of one product on this machine's CPU",
    "call µs": "one synchronous call from Python, median: kernel time plus the host cost of a call",
    "GFLOP/s": "2 flops per stored nonzero over the time",
    "of copy": "the format's bytes per product over the kernel time, as a fraction of the measured "
               "device-to-device copy bandwidth; above 1 where the L2 cache serves part of the traffic",
    "DRAM of copy": "as of copy, with the DRAM traffic model's bytes (what the L2 cache cannot hold)",
    "× cuSPARSE": "speedup over the fastest of cuSPARSE's 4 algorithms on that matrix: its kernel time over ours",
    "× SciPy": "speedup over SciPy's CSR product on that matrix: its time over ours (timed call for call: the "
               "median of the paired ratios, see timing noise)",
    "geometric mean": "of the per-matrix speedups",
    "fastest": f"within {TIE_PERCENT}% of the fastest time on a matrix (methods that run the same kernel "
               f"differ by timing noise alone); on the CPU cocktail-auto's and SciPy's times there are the medians "
               f"of their calls that follow a call of their own, as every method timed alone is timed",
    "ballpark": "neither the fastest nor the slowest of the methods measured on a matrix (Flegar & Anzt "
                "Fig. 7); ties count for every tied method",
    "rel err": "||y - y_ref|| / ||y_ref||, y_ref the product in float64 on the host",
    "bound": "the largest rel err a product may have in the dtype its values are stored in; past it the answer "
             "is wrong, whatever its time",
    "timing noise": "cocktail-auto and SciPy are timed call for call, in samples of a round A B and a round B A "
                    "(so that which runs first cancels); × SciPy is the median over the samples of SciPy's time "
                    "over cocktail-auto's, its 95% interval the order statistics that hold the median whatever the "
                    "distribution (binomial; none under 6 samples); the geometric mean's interval adds the "
                    "matrices' log half-widths in quadrature over their count; an interval holding 1 is the "
                    "same speed. It is the noise within this run: another run can land outside it",
    **end_to_end.TERMS,
    **workload.TERMS,
}


class Output:
    """Lines and tables for a terminal: rich when installed, plain text otherwise, both at its width."""

    def __init__(self, file=None, plain: bool = False):
        self.file = file or sys.stdout
        self.console = None if plain else _rich_console(self.file)
        self.width = self.console.width if self.console else shutil.get_terminal_size().columns

    def line(self, text: str = "", indent: str = "") -> None:
        """Print ``text`` wrapped to the width (continuation lines get ``indent``)."""
        wrapped = textwrap.wrap(text, self.width, subsequent_indent=indent) or [""]
        for part in wrapped:
            print(part, file=self.file)

    def table(self, title: str, header: list[str], rows: list[list[str]], shorten=None, drop=(),
              wrap: str | tuple[str, ...] | None = None) -> list[str]:
        """Print a table and return the header printed. With ``shorten`` (column names) the table is fitted
        to the width (:func:`fit`): the columns named in ``wrap`` (one name or several) wrap onto more rows,
        the columns named in ``drop`` go, in order, then those in ``shorten`` are cut. Without it, every
        column stays and the table keeps its natural width (a cell folded into 3-letter pieces reads worse
        than a line longer than the terminal: ``less -S``)."""
        if shorten is not None:
            header, rows = fit(header, rows, self.width, SEP, shorten, drop, wrap)
        if self.console:
            from rich.console import Console

            natural = sum(_widths(header, rows)) + SEP * (len(header) - 1)
            console = self.console if natural <= self.width else Console(file=self.file, width=natural,
                                                                         highlight=False)
            _rich_table(console, title, header, rows)
        else:
            _plain_table(self.file, title, header, rows)
        return header


def _rich_console(file):
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=file, highlight=False)


def _rich_table(console, title, header, rows) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                  title_justify="left")
    for i, h in enumerate(header):
        table.add_column(h, justify="right" if _numeric(h) else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _plain_table(file, title, header, rows) -> None:
    widths = _widths(header, rows)
    if title:
        print(title, file=file)
    for i, row in enumerate([header, *rows]):
        cells = [v.rjust(w) if _numeric(header[j]) else v.ljust(w)
                 for j, (v, w) in enumerate(zip(row, widths))]
        print((" " * SEP).join(cells).rstrip(), file=file)
        if i == 0:
            print("-" * (sum(widths) + SEP * (len(widths) - 1)), file=file)


def _numeric(heading: str) -> bool:
    return heading not in ("matrix", "method", "dtype", "note", "plan", "fastest", "suite", "target", "verdict",
                           "worst (matrix)", "limit", "timed") and "plan" not in heading


def _widths(header, rows) -> list[int]:
    return [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]


def fit(header, rows, width: int, sep: int, shorten=(), drop=(), wrap=None):
    """(header, rows) no wider than ``width`` where it can be: the text of the columns named in ``wrap`` (one
    name or several) is wrapped onto continuation rows, the widest first, each no narrower than
    :data:`WRAP_MIN` or its heading (the other cells of those rows blank); then the columns named in
    ``drop`` are left out in that order, then those named in ``shorten`` are cut in turn (to no less than
    8 characters, ending in …)."""
    header, rows = list(header), [list(r) for r in rows]
    drop = [d for d in drop if d in header and d not in shorten]
    wraps = [wrap] if isinstance(wrap, str) else list(wrap or ())
    limits = {}  # column -> the width its text is wrapped within
    while True:
        shown = _wrapped(header, rows, limits)
        widths = _widths(header, shown)
        over = sum(widths) + sep * (len(widths) - 1) - width
        if over <= 0:
            return header, shown
        wrappable = [header.index(w) for w in wraps if w in header and widths[header.index(w)] > _narrowest(w)]
        if wrappable:
            i = max(wrappable, key=widths.__getitem__)
            limits[header[i]] = max(_narrowest(header[i]), widths[i] - over)
            continue
        if drop:
            header, rows = _without(header, rows, (drop.pop(0),))
            continue
        for name in (n for n in shorten if n in header):
            i = header.index(name)
            cut = max(8, len(name), widths[i] - over)
            over -= widths[i] - cut
            for r in shown:
                r[i] = r[i] if len(r[i]) <= cut else r[i][:cut - 1] + "…"
        return header, shown


#: The narrowest a wrapped column gets (:func:`fit`).
WRAP_MIN = 16


def _narrowest(heading: str) -> int:
    """The narrowest :func:`fit` wraps a column to."""
    return max(WRAP_MIN, len(heading))


def _wrapped(header, rows, limits: dict) -> list[list[str]]:
    """``rows`` with the text of each column named in ``limits`` wrapped within its limit: a row becomes itself
    and the continuation rows its longest wrapped cell needs, the cells of every wrapped column side by side."""
    out = []
    for r in rows:
        parts = [textwrap.wrap(cell, limits[h], break_on_hyphens=False) or [""] if h in limits else [cell]
                 for h, cell in zip(header, r)]
        height = max(map(len, parts))
        out += [[p[k] if k < len(p) else "" for p in parts] for k in range(height)]
    return out


def count(n) -> str:
    """A row or nonzero count in 5 characters or fewer: 950, 12.3k, 5.56M; ``-`` when unknown."""
    if n is None:
        return "-"
    n = int(n)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return str(n)


def _problems(records) -> list:
    return list(dict.fromkeys((r.get("suite", ""), r["matrix"]) for r in records))


def machine_line(records) -> str:
    """What was measured where: the GPU, its copy bandwidth and L2, or the plain CPU statement."""
    if on_cpu(records):
        return ("CPU run: each format's host CPU executor, cocktail-auto and SciPy, timed on this machine's CPU; "
                "no GPU numbers (no copy bandwidth, no cuSPARSE)")
    gpus = {}  # runs merged from several GPUs name each, with the first copy bandwidth and L2 its records give
    for r in records:
        seen = gpus.setdefault(r.get("gpu") or "GPU", [None, None])
        seen[0] = seen[0] or r.get("copy_gbps")
        seen[1] = seen[1] or r.get("l2_bytes")
    return " | ".join(_machine_text(gpu, *facts) for gpu, facts in gpus.items())


def _machine_text(gpu: str, copy_gbps, l2_bytes) -> str:
    parts = [gpu]
    if copy_gbps:
        parts.append(f"copy bandwidth {copy_gbps:.0f} GB/s")
    if l2_bytes:
        parts.append(f"L2 {l2_bytes / 2**20:.0f} MiB")
    return "; ".join(parts)


def plan(record) -> str:
    """cocktail-auto's plan as its record states it: the plan's short name, else its format and kernel."""
    params = record.get("params") or {}
    if params.get("plan"):
        return str(params["plan"])
    fmt, kernel = params.get("format", ""), params.get("kernel", "")
    return kernel if kernel and kernel.startswith(fmt) else " ".join(p for p in (fmt, kernel) if p) or "-"


def compact_table(records) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one dtype: per matrix, its size and cocktail-auto's plan and rates; the
    method fastest on it where cocktail-auto did not run. The CPU leaves out the columns it cannot fill."""
    records = summary_records(records)
    cpu = on_cpu(records)
    base, label = baseline(records)
    ratios = auto_speedups(records, base)
    times = metrics.times_by_problem(records)
    by = {(r.get("suite", ""), r["matrix"], r["method"]): r for r in records}
    has_auto = any(r["method"] == AUTO for r in records)
    rows = []
    for suite, matrix in _problems(records):
        key = (suite, matrix, records[0]["dtype"])
        fastest = min(times.get(key, {}).items(), key=lambda kv: kv[1], default=(None, None))[0]
        r = by.get((suite, matrix, AUTO if has_auto else fastest))
        if r is None:  # no record of cocktail-auto on this matrix (merged runs), or nothing ran
            size = next(x for x in records if (x.get("suite", ""), x["matrix"]) == (suite, matrix))
            rows.append([matrix, count(size.get("rows")), count(size.get("nnz")), "- (no record)", "-", "-", "-",
                         "-"])
            continue
        t = metrics.time_us(r)
        rate = None if not t else metrics.gflops(int(r["nnz"]), t * 1e-6)
        chosen = (plan(r) if has_auto else r["method"]) if t else f"- ({_why_untimed(r)})"
        rows.append([matrix, count(r.get("rows")), count(r.get("nnz")), chosen, figures(t), figures(rate),
                     figures(r.get("bandwidth_fraction")), figures(ratios.get(key))])
    header = ["matrix", "rows", "nonzeros", "plan" if has_auto else "fastest", "cpu µs" if cpu else "µs",
              "GFLOP/s", "of copy", label]
    if cpu:
        header, rows = _without(header, rows, ("of copy",))
    return header, rows


def _why_untimed(record) -> str:
    """Why a record has no time in the compact table: ``wrong answer`` (listed above it), its note, or not run."""
    return "wrong answer" if is_wrong(record) else record.get("note") or "not run"


def _without(header, rows, names):
    keep = [i for i, h in enumerate(header) if h not in names]
    return [header[i] for i in keep], [[r[i] for i in keep] for r in rows]


def _empty_columns(header, rows, records) -> list[str]:
    """Columns of the full table with nothing to show: all ``-``, or kernel µs equal to call µs throughout."""
    empty = [h for i, h in enumerate(header) if rows and all(r[i] in ("-", "") for r in rows)]
    if records and all(r.get("kernel_us") == r.get("call_us") for r in records):
        empty.append("kernel µs")
    return empty


def full_table(records) -> tuple[list[str], list[list[str]]]:
    """Every SpMV record and column (verbose), less the columns that have nothing to show."""
    from .calltables import cell

    header = [h for _, h in COLUMNS]
    rows = [[cell(r.get(key)) for key, _ in COLUMNS] for r in records]
    header, rows = _without(header, rows, _empty_columns(header, rows, records))
    if on_cpu(records):  # one host time: the footnote's "cpu µs", not a GPU call time
        header = ["cpu µs" if h == "call µs" else h for h in header]
    return header, rows


def _footnote(out: Output, terms) -> None:
    out.line("Terms:")
    for term in dict.fromkeys(terms):
        if term in TERMS:
            out.line(f"  {term}: {TERMS[term]}", indent="    ")


def _by_dtype(records) -> dict:
    out = {}
    for r in records:
        out.setdefault(r["dtype"], []).append(r)
    return out


def print_report(records, verbose: bool = False, file=None, plain: bool = False) -> None:
    """The console report of ``records``: machine line, then per dtype a headline and the compact table,
    then the footnote; ``verbose`` adds every record, the summaries and the call-time tables."""
    out = Output(file, plain)
    spmv = spmv_records(records)
    terms = []
    if spmv:
        out.line(machine_line(spmv))
    terms += _print_wrong_answers(out, records)
    if spmv:
        for dtype, rows in _by_dtype(spmv).items():
            out.line()
            line = headline(rows)
            out.line(line, indent="  ")
            header, body = compact_table(rows)
            terms += ["geometric mean", *(["timing noise"] if "timing noise" in line else []), "fastest",
                      *out.table("", header, body, shorten=COMPACT_SHORTEN, drop=COMPACT_DROP)]
    for head, header, body in blocks.sections(records):
        out.line()
        out.line(head, indent="  ")
        terms += out.table("", header, body, shorten=("matrix", "block kernel"), drop=("DRAM of copy",))
    for title, head, header, body in end_to_end.sections(records):
        out.line()
        out.line(f"{title}: {head}", indent="  ")
        terms += end_to_end.terms(out.table("", header, body, shorten=("matrix",)))
    for title, head, header, body in workload.sections(records):
        out.line()
        out.line(f"{title}: {head}", indent="  ")
        terms += workload.terms(out.table("", header, body))
    tables = call_tables(records)
    if verbose:
        terms += _print_verbose(out, spmv, records)
    elif tables and not spmv:
        for title, header, body in tables:
            out.table(title, header, body)
    elif tables or overhead_records(records):
        out.line()
        more = f" and {len(tables)} more table{'s' * (len(tables) != 1)}" if tables else ""
        out.line(f"Every method's record, the suite summaries{more}: add -v")
    if terms:
        out.line()
        _footnote(out, terms)


def _print_wrong_answers(out: Output, records) -> list[str]:
    """The block of wrong answers (:mod:`.wrong_answers`), when there is one; returns the terms it uses."""
    found = wrong_answers.table(records)
    if found is None:
        return []
    title, header, rows = found
    out.line()
    out.line(title, indent="  ")
    return out.table("", header, rows, shorten=("matrix", "method"))


def _print_verbose(out: Output, spmv, records) -> list[str]:
    """Every record, the summaries and the call tables; returns the terms they use."""
    terms = []
    if spmv:
        header, body = full_table(spmv)
        out.table("Every SpMV record", header, body, shorten=("method", "matrix"),
                  drop=("DRAM of copy", "GB/s", "of copy"), wrap="note")
        terms += header
        if len({r["method"] for r in spmv if metrics.time_us(r)}) >= 2:
            for title, header, body in summary_tables(spmv):
                out.line()
                out.table(title, header, body, shorten=(), wrap=_text_columns(header))
                terms += header
    for title, header, body in call_tables(records):
        out.line()
        out.table(title, header, body, shorten=(), wrap=_text_columns(header))
    return terms


def _text_columns(header) -> tuple[str, ...]:
    """The columns of text (not numbers) of a table: those :func:`fit` may wrap when it is too wide."""
    return tuple(h for h in header if not _numeric(h))


def print_call_tables(records, file=None) -> None:
    """The call-time comparisons, call-overhead tables and target verdicts, where the records have them."""
    out = Output(file or sys.stdout)
    for title, header, rows in call_tables(records):
        out.table(title, header, rows)
