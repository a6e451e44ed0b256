"""The SpMM targets over whole suites, read from ``cocktail bench --suite ... --k`` JSON runs: Markdown.

Usage: python scripts/spmm_suites.py RUN.json [RUN.json ...]

Per dtype and block width: cocktail-auto (row-major X and Y) over cusparse-spmm-best (the fastest of
cuSPARSE's SpMM algorithms in either memory order) in geometric mean over every matrix of the runs,
per suite, how many matrices reach 0.97x and the lowest; beside it the same over the vendor's fastest
in row-major order alone (the caller's layout). Then every matrix below 0.97x with both ratios and
what its plan ran.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json
from cocktail.bench.records.metrics import geomean

#: The block products' floor on every problem (cocktail-auto over cusparse-spmm-best).
FLOOR = 0.97


def ratios(records) -> list[dict]:
    """One row per (dtype, k, matrix): the speedups over the vendor's best and its best row-major algorithm."""
    by = defaultdict(dict)
    for r in records:
        if r.get("section") == "spmm" and r.get("kernel_us"):
            by[(r["dtype"], r["k"], r["suite"], r["matrix"])][r["method"]] = r
    rows = []
    for (dtype, k, suite, matrix), methods in sorted(by.items()):
        auto, best = methods.get("cocktail-auto"), methods.get("cusparse-spmm-best")
        row_major = [m["kernel_us"] for name, m in methods.items()
                     if name.startswith("cusparse-spmm-") and name.endswith("-row")]
        if not auto or not best or not row_major:
            continue
        t = auto["kernel_us"]
        rows.append({"dtype": dtype, "k": k, "suite": suite, "matrix": matrix, "auto_us": t,
                     "best_us": best["kernel_us"], "speedup": best["kernel_us"] / t, "same_order": min(row_major) / t,
                     "plan": auto["params"].get("block", ""), "commit": auto.get("commit")})
    return rows


def main(paths) -> None:
    rows = ratios([r for p in paths for r in load_json(p)])
    groups = defaultdict(list)
    for r in rows:
        groups[(r["dtype"], r["k"])].append(r)
    print("| dtype | k | matrices | geomean vs best | per suite | at least 0.97x | lowest | geomean, same order | "
          "lowest, same order |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for (dtype, k), group in sorted(groups.items()):
        suites = defaultdict(list)
        for r in group:
            suites[r["suite"]].append(r["speedup"])
        per_suite = ", ".join(f"{s} {geomean(v):.2f}x" for s, v in suites.items())
        s = [r["speedup"] for r in group]
        o = [r["same_order"] for r in group]
        print(f"| {dtype} | {k} | {len(group)} | {geomean(s):.2f}x | {per_suite} | "
              f"{sum(v >= FLOOR for v in s)} of {len(s)} | {min(s):.2f}x | {geomean(o):.2f}x | {min(o):.2f}x |")
    below = [r for r in rows if r["speedup"] < FLOOR]
    if below:
        print(f"\nBelow {FLOOR}x of cusparse-spmm-best:\n")
        print("| dtype | k | matrix | auto µs | best µs | speedup | same order | block product |")
        print("|---|---:|---|---:|---:|---:|---:|---|")
        for r in below:
            print(f"| {r['dtype']} | {r['k']} | {r['matrix']} | {r['auto_us']:.1f} | {r['best_us']:.1f} | "
                  f"{r['speedup']:.2f}x | {r['same_order']:.2f}x | {r['plan']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
