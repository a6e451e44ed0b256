"""cocktail-auto with a planner cut on against off: kernel time off / on per (suite, dtype), from two ``cocktail bench
--json`` runs of the same command (scripts/coded_cut_runs.sh's auto_few_off and auto_few_coded).

    python scripts/cut_on_off.py OFF.json ON.json [--all] [--names BEFORE,AFTER] [--summary | --matrices]

Prints the geometric mean of off/on per suite and dtype (above 1: the cut made the plans faster) and every matrix
whose plan differs (--all: every matrix), with both plans; --summary prints only the first table, --matrices only
the second.  ``--names`` labels the two runs otherwise (any two runs
of the same command: a change before and after).
"""

from __future__ import annotations

import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json
from cocktail.bench.records.metrics import geomean


def auto(path) -> dict:
    """``{(suite, matrix, dtype): (kernel µs, plan)}`` of the cocktail-auto SpMV records."""
    return {(r["suite"], r["matrix"], r["dtype"]): (r["kernel_us"], r["params"].get("plan", ""))
            for r in load_json(path)
            if r.get("method") == "cocktail-auto" and r.get("kernel_us") and r.get("k", 1) == 1}


def main(argv) -> None:
    """Print the per-suite means and the matrices whose plan changed."""
    files = [a for a in argv if a.endswith((".json", ".json.gz"))]
    names = argv[argv.index("--names") + 1:argv.index("--names") + 2] if "--names" in argv else ["off,on"]
    if len(files) != 2 or not names or len(names[0].split(",")) != 2:
        raise SystemExit("usage: cut_on_off.py OFF.json ON.json [--all] [--names BEFORE,AFTER] [--summary | --matrices]")
    a, b = names[0].split(",")
    off, on = auto(files[0]), auto(files[1])
    groups = defaultdict(list)
    rows = []
    for key in sorted(off.keys() & on.keys(), key=lambda k: (k[2], k[0], k[1])):
        (t0, p0), (t1, p1) = off[key], on[key]
        groups[(key[0], key[2])].append(t0 / t1)
        if "--all" in argv or p0 != p1:
            rows.append(f"| {key[2]} | {key[1]} | {t0:.1f} | {t1:.1f} | {t0 / t1:.3f} | {p0} | {p1} |")
    if "--summary" not in argv:
        print("\n".join([f"| dtype | matrix | {a} µs | {b} µs | {a} / {b} | plan {a} | plan {b} |",
                         "|---|---|---|---|---|---|---|"] + rows))
    if "--matrices" not in argv:
        print(("" if "--summary" in argv else "\n")
              + f"| suite | dtype | matrices | {a} / {b} (geomean) | lowest |\n|---|---|---|---|---|")
        for (suite, dtype), v in sorted(groups.items()):
            print(f"| {suite} | {dtype} | {len(v)} | {geomean(v):.3f} | {min(v):.3f} |")

if __name__ == "__main__":
    main(sys.argv[1:])
