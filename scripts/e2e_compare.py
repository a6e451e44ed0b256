"""Compare end-to-end runs of `cocktail bench --end-to-end` (their JSON files): per run and build source, the
geometric mean over the matrices of cupyx's whole job over cocktail-auto's at each N, and per matrix our build
against cupyx's (ms).

Usage: python scripts/e2e_compare.py LABEL=FILE.json [LABEL=FILE.json ...]
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json


def ratios(records, source: str) -> dict:
    """N -> [cupyx's total over ours, per matrix] for records built from ``source``."""
    totals = defaultdict(dict)
    for r in records:
        if r.get("section") == "end-to-end" and r["build_from"] == source and r["method"] in ("cocktail-auto", "cupyx"):
            totals[(r["matrix"], r["products"])][r["method"]] = r["total_us"]
    out = defaultdict(list)
    for (_, n), pair in totals.items():
        if len(pair) == 2 and all(pair.values()):
            out[n].append(pair["cupyx"] / pair["cocktail-auto"])
    return out


def builds(records, source: str) -> dict:
    """matrix -> (our build ms, cupyx's build ms), built from ``source``."""
    found = defaultdict(dict)
    for r in records:
        if r.get("section") == "end-to-end" and r["build_from"] == source and r["products"] == 1 and r["build_us"]:
            found[r["matrix"]][r["method"]] = r["build_us"] / 1e3
    return {m: (v.get("cocktail-auto"), v.get("cupyx")) for m, v in found.items()}


def main(argv) -> None:
    runs = [(a.split("=", 1)[0], load_json(a.split("=", 1)[1])) for a in argv]
    for source in ("host", "device"):
        print(f"\nbuilt from the {source}: geometric mean of cupyx's whole job over ours")
        marks = sorted({n for _, recs in runs for n in ratios(recs, source)})
        print("| run | " + " | ".join(f"N = {n:,}" for n in marks) + " |")
        print("|---|" + "---|" * len(marks))
        for label, recs in runs:
            got = ratios(recs, source)
            cells = [f"{math.exp(sum(map(math.log, got[n])) / len(got[n])):.2f}" if got.get(n) else "-" for n in marks]
            print(f"| {label} | " + " | ".join(cells) + " |")
        print(f"\nbuilt from the {source}: our build and cupyx's, ms")
        names = list(builds(runs[0][1], source))
        print("| matrix | " + " | ".join(f"{label} ours | {label} cupyx" for label, _ in runs) + " |")
        print("|---|" + "---|---|" * len(runs))
        for m in names:
            cells = []
            for _, recs in runs:
                ours, theirs = builds(recs, source).get(m, (None, None))
                cells += [f"{ours:.1f}" if ours else "-", f"{theirs:.1f}" if theirs else "-"]
            print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
