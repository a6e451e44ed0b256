"""The suite summaries of benchmark records as (title, header, rows) tables, and the columns of the full
record table: shared by the terminal report (:mod:`.console`) and the Markdown report (:mod:`.report`)."""

from __future__ import annotations

from ..records import metrics
from ..measuring.baselines import CUSPARSE_BEST
from .calltables import cell
from ..records.selection import summary_records

COLUMNS = (("matrix", "matrix"), ("dtype", "dtype"), ("method", "method"), ("kernel_us", "kernel µs"),
           ("call_us", "call µs"), ("gflops", "GFLOP/s"), ("gbps", "GB/s"), ("bandwidth_fraction", "of copy"),
           ("dram_fraction", "DRAM of copy"),
           ("speedup_cusparse_best", "× cuSPARSE"), ("rel_err", "rel err"), ("note", "note"))


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
