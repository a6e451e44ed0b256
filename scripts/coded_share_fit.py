"""The coded cut's time share, measured: csr_vi's kernel time over csr's, per dtype, from a ``cocktail bench
--values few --all-kernels --formats csr,csr_vi`` run (planner.CODED_TIME_SHARE).

    python scripts/coded_share_fit.py RUN.json [--suites williams,cocktail]

Geometric mean over every (matrix, kernel) both formats timed, on the named suites only (default the training
suites: the holdout suite judges the planner and sets nothing).  Prints one line per dtype and suite too.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json
from cocktail.bench.records.metrics import geomean

KERNELS = ("csr_scalar", "csr_vector", "csr_stream")


def ratios(records, suites, kernels=KERNELS) -> dict:
    """``{(dtype, suite): [csr_vi time / csr time, ...]}`` over the matrices and ``kernels`` both formats timed."""
    times = defaultdict(dict)
    for r in records:
        if r.get("kernel_us") and r.get("k", 1) == 1 and r.get("suite") in suites:
            times[(r["dtype"], r["suite"], r["matrix"])][r["method"]] = r["kernel_us"]
    out = defaultdict(list)
    for (dtype, suite, _), t in times.items():
        out[(dtype, suite)] += [t[f"{k}@csr_vi"] / t[k] for k in kernels if k in t and f"{k}@csr_vi" in t]
    return out


def main(argv) -> None:
    """Print the share per dtype and per suite."""
    path = argv[0]
    suites = argv[argv.index("--suites") + 1].split(",") if "--suites" in argv else ["williams", "cocktail"]
    records = load_json(path)
    for kernels in [KERNELS] + [(k,) for k in KERNELS]:
        got = ratios(records, suites, kernels)
        for dtype in sorted({d for d, _ in got}):
            both = [v for (d, _), vs in got.items() if d == dtype for v in vs]
            per = ", ".join(f"{s} {geomean(got[(dtype, s)]):.3f}" for s in suites if got.get((dtype, s)))
            what = "every kernel" if len(kernels) > 1 else kernels[0]
            print(f"{dtype}, {what}: {geomean(both):.3f} over {len(both)} (matrix, kernel) pairs, "
                  f"lowest {min(both):.2f}, highest {max(both):.2f} ({per})")


if __name__ == "__main__":
    main(sys.argv[1:])
