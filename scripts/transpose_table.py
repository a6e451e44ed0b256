"""The transposed-product target, read from ``cocktail bench --methods cocktail-auto,cocktail-auto-T``
JSON runs: Markdown.

Usage: python scripts/transpose_table.py [--summary] RUN.json [RUN.json ...]   (--summary: the first table only)

Per dtype: ``A.T @ u`` (cocktail-auto-T: the transpose ``A.T`` builds on first use, planned as a matrix of its
own) over ``A @ x`` (cocktail-auto) in kernel time, geometric mean, how many matrices are within 1.1x, the
slowest; then every matrix with both plans.  A ratio above 1 means the transpose is slower.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json
from cocktail.bench.records.metrics import geomean

#: The transposed-product target: A.T @ x within this factor of A @ x.
BOUND = 1.1


def rows(records) -> list[dict]:
    """One row per (dtype, suite, matrix) that both methods timed."""
    by = defaultdict(dict)
    for r in records:
        if r.get("kernel_us") and r.get("k", 1) == 1:
            by[(r["dtype"], r["suite"], r["matrix"])][r["method"]] = r
    out = []
    for (dtype, suite, matrix), methods in sorted(by.items()):
        a, t = methods.get("cocktail-auto"), methods.get("cocktail-auto-T")
        if not a or not t:
            continue
        out.append({"dtype": dtype, "suite": suite, "matrix": matrix, "a_us": a["kernel_us"], "t_us": t["kernel_us"],
                    "ratio": t["kernel_us"] / a["kernel_us"], "a_plan": a["params"].get("plan", a["params"].get("format")),
                    "t_plan": t["params"].get("plan", t["params"].get("format")), "shape": (a.get("rows"), a.get("cols"))})
    return out


def main(paths, summary: bool = False) -> None:
    table = rows([r for p in paths for r in load_json(p)])
    groups = defaultdict(list)
    for r in table:
        groups[r["dtype"]].append(r)
    print("| dtype | matrices | geomean A.T / A | within 1.1x | slowest |")
    print("|---|---:|---:|---:|---|")
    for dtype, group in sorted(groups.items()):
        worst = max(group, key=lambda r: r["ratio"])
        print(f"| {dtype} | {len(group)} | {geomean([r['ratio'] for r in group]):.2f} | "
              f"{sum(r['ratio'] <= BOUND for r in group)} of {len(group)} | {worst['ratio']:.2f} ({worst['matrix']}) |")
    for dtype, group in sorted(groups.items()) if not summary else ():
        print(f"\n{dtype}:\n")
        print("| suite | matrix | A µs | A.T µs | A.T / A | A's plan | A.T's plan |")
        print("|---|---|---:|---:|---:|---|---|")
        for r in group:
            print(f"| {r['suite']} | {r['matrix']} | {r['a_us']:.1f} | {r['t_us']:.1f} | {r['ratio']:.2f} | "
                  f"{r['a_plan']} | {r['t_plan']} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    main([a for a in args if a != "--summary"], "--summary" in args)
