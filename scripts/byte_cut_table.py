"""The byte cuts (the pattern and the coded values), read from ``cocktail bench`` JSON runs: Markdown.

Usage: python scripts/byte_cut_table.py [--summary] RUN.json [RUN.json ...]   (--summary: the first table only)

Per dtype (with ``--value-dtype``, the dtype our values were stored in: ``float64 (float32 values)``) and family:
``cocktail-auto`` over ``cusparse-best`` in kernel time, geometric mean, the slowest, and how many plans store a part
pattern-only (``@csr_pattern`` or ``CSR_PATTERN``, on ``--values pattern`` runs) or coded (``@csr_vi`` or ``CSR_VI``,
on ``--values few`` runs) or delegate to cuSPARSE; then every matrix.  A speedup above 1 means Cocktail is faster.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json
from cocktail.bench.records.metrics import geomean

#: The byte cuts' target on the power-law family where a lossless cut applies.
TARGET = 1.3


def rows(records) -> list[dict]:
    """One row per (dtype, suite, matrix) with both cocktail-auto and cusparse-best timed."""
    by = defaultdict(dict)
    for r in records:
        if r.get("kernel_us") and r.get("k", 1) == 1 and not r.get("note"):
            by[(r["dtype"], r["suite"], r["matrix"])][r["method"]] = r
    out = []
    for (dtype, suite, matrix), methods in sorted(by.items()):
        a, c = methods.get("cocktail-auto"), methods.get("cusparse-best")
        if not a or not c:
            continue
        plan = a["params"].get("plan", a["params"].get("format", ""))
        stored = a["params"].get("value_dtype")
        out.append({"dtype": f"{dtype} ({stored} values)" if stored else dtype, "suite": suite, "matrix": matrix, "family": a.get("family") or "",
                    "auto_us": a["kernel_us"], "vendor_us": c["kernel_us"], "speedup": c["kernel_us"] / a["kernel_us"],
                    "plan": plan, "cut": "pattern" in plan.lower() or "csr_vi" in plan.lower(), "delegates": "cusparse" in plan.lower()})
    return out


def summary(table) -> list[str]:
    """Per dtype and family: geometric mean, slowest, plans cut and delegated."""
    lines = ["| dtype | family | matrices | auto / cusparse-best (geomean) | slowest | plans cut | plans delegating |",
             "|---|---|---|---|---|---|---|"]
    groups = defaultdict(list)
    for r in table:
        groups[(r["dtype"], r["family"])].append(r)
        groups[(r["dtype"], "all")].append(r)
    for (dtype, family), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] == "all", kv[0][1])):
        low = min(rs, key=lambda r: r["speedup"])
        lines.append(f"| {dtype} | {family} | {len(rs)} | {geomean([r['speedup'] for r in rs]):.3f} | "
                     f"{low['speedup']:.3f} ({low['matrix']}) | {sum(r['cut'] for r in rs)} | "
                     f"{sum(r['delegates'] for r in rs)} |")
    return lines


def detail(table) -> list[str]:
    """Every matrix: plan, times and speedup."""
    lines = ["| dtype | matrix | family | cocktail-auto plan | auto µs | cusparse-best µs | speedup |",
             "|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['dtype']} | {r['matrix']} | {r['family']} | {r['plan']} | {r['auto_us']:.1f} | "
                     f"{r['vendor_us']:.1f} | {r['speedup']:.2f} |")
    return lines


def main(paths, only_summary: bool = False) -> None:
    records = [r for p in paths for r in load_json(p)]
    table = rows(records)
    print("\n".join(summary(table)))
    if not only_summary:
        print()
        print("\n".join(detail(table)))


if __name__ == "__main__":
    args = sys.argv[1:]
    main([a for a in args if a != "--summary"], "--summary" in args)
