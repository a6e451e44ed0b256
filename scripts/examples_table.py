"""The examples' targets, read from the examples' ``--json`` records: Markdown.

Usage: python scripts/examples_table.py EXAMPLE.json [EXAMPLE.json ...]

One row per way of each example: its setup (Cocktail's includes planning), median end-to-end time over the
timed runs, and the speedup of Cocktail's way over the usual way's median; the 1.5x target where one is
set (CG, PageRank, GCN).
"""

from __future__ import annotations

import sys

from cocktail.bench.records.files import load_json

#: The examples with a target, and the target (Cocktail's speedup over the usual way).
TARGETS = {"cg_fem": 1.5, "pagerank": 1.5, "gcn": 1.5}


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main(paths) -> None:
    print("| example | problem | way | setup | median | speedup | target |")
    print("|---|---|---|---:|---:|---:|---|")
    for path in paths:
        record = load_json(path)
        name = record["example"]
        problem = record["problem"]
        text = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in problem.items()
                         if k in ("matrix", "graph", "rows", "vertices", "nnz", "edges", "dtype", "iterations"))
        usual = next(iter(record["results"].values()))
        for label, way in record["results"].items():
            speedup = usual["median_s"] / way["median_s"]
            target = TARGETS.get(name)
            verdict = "" if way is usual or target is None else (
                f"{target}x: {'met' if speedup >= target else 'missed'}")
            print(f"| {name} | {text} | {way['way']} | {_time(way['setup_s'])} | {_time(way['median_s'])} | "
                  f"{speedup:.2f}x | {verdict} |")
            text = ""


if __name__ == "__main__":
    main(sys.argv[1:])
