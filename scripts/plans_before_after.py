"""The plans ``format="auto"`` makes on every suite, to check that a change keeps them (a before/after run).

    python scripts/plans_before_after.py record OUT.json [SUITE ...]    # on a GPU machine
    python scripts/plans_before_after.py compare BEFORE.json AFTER.json

``record`` plans each matrix of the suites (default: every suite that runs on a GPU) in float32 and float64, with
and without the vendor's kernels, with ``tune="model"`` (the profile's plan, never timed or moved) and the decision
cache off; it writes each plan's parts and kernel parameters and the block plans at k = 4 and 16.  ``compare``
lists every plan that differs and exits 1 when any does.
"""

from __future__ import annotations

import json
import os
import sys
import time

GPU_SUITES = ("structured", "williams", "cocktail", "default", "holdout")


def _plans(S, dtype: str, vendor: bool) -> dict:
    from cocktail import SparseMatrix

    A = SparseMatrix(S.astype(dtype), format="auto", tune="model", vendor=vendor)
    plan = A.auto.plan
    out = {"plan": plan.detail(), "label": plan.label(), "kernel": A.kernel,
           "params": {k: repr(v) for k, v in sorted(A.kernel_params.items())}}
    if vendor:
        out["blocks"] = {k: A.block_plan(k) for k in (4, 16)}
    return out


def record(out: str, suites) -> None:
    """Plan every matrix of ``suites`` and write the plans to ``out``."""
    os.environ["COCKTAIL_DECISIONS"] = "off"
    from cocktail.bench.problems import suites as registry

    found, seen, t0 = {}, set(), time.perf_counter()
    for suite in suites:
        for matrix in registry.get(suite):
            if matrix.name in seen:
                continue
            seen.add(matrix.name)
            S = registry.load(matrix)
            for dtype in ("float32", "float64"):
                for vendor in (True, False):
                    key = f"{matrix.name}|{dtype}|{'vendor' if vendor else 'own'}"
                    try:
                        found[key] = _plans(S, dtype, vendor)
                    except Exception as exc:  # a plan that fails is recorded, so that a change in it shows
                        found[key] = {"error": f"{type(exc).__name__}: {exc}"}
                    print(f"{time.perf_counter() - t0:7.1f} s  {key}: {found[key].get('plan', found[key].get('error'))}",
                          flush=True)
    with open(out, "w") as f:
        json.dump(found, f, indent=1, sort_keys=True)


def compare(before: str, after: str) -> int:
    """Print the plans that differ between two records; 1 when any does (or a matrix is missing)."""
    with open(before) as f:
        b = json.load(f)
    with open(after) as f:
        a = json.load(f)
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for k in differ:
        print(f"{k}\n  before {b.get(k)}\n  after  {a.get(k)}")
    print(f"{len(set(a) & set(b))} plans in both, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3:] or GPU_SUITES)
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
