"""Host time of ``cocktail.auto.planner.plan`` per matrix, on the CPU (features excluded).

    PYTHONPATH=src python3 scripts/planner_timing.py [--reps 7] [--dtype float64] [--profile h200]

The matrices are the CPU-size suites' (``default-cpu`` and ``holdout-cpu``, cached after their first
generation) and a few generated ones.  ``first``: the first plan in the process, on a freshly loaded
profile (its tables built then); ``warm``: the median of ``--reps`` plans of the matrix once the profile
has planned others, each on a fresh copy of the features (the features memoise answers a plan asks of them,
and a real plan meets its features once).  Times are the process's CPU time (``time.process_time``) and
``warm`` the fastest of the repetitions, so that other work on a shared machine inflates them little.
Prints one line per matrix and the median and total.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from cocktail.auto import features as _features, planner, profile as _profile
from cocktail.bench.problems import suites

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "data"))  # make_planner_golden


def matrices() -> list:
    """``(name, CSR)``: the CPU-size suites and a few of the golden test's generated matrices
    (tests/data/make_planner_golden.py)."""
    from make_planner_golden import _csr, _generated

    out = [(m.name, suites.load(m)) for m in suites.DEFAULT_CPU + suites.HOLDOUT_CPU]
    out += [(name, S) for name, S in _generated() if name in TIMED_GENERATED]
    return [(name, _csr(S)) for name, S in out]


#: The generated matrices timed beside the suites'.
TIMED_GENERATED = ("laplace5_300", "power_law_50000", "diagonals_and_scatter")


def fresh(f: _features.Features) -> _features.Features:
    """``f`` with new row-group objects: none of the answers an earlier plan memoised on them."""
    return replace(f, groups=MappingProxyType({k: replace(g) for k, g in f.groups.items()}))


def shipped(name: str):
    """A freshly loaded shipped profile (no tables built yet)."""
    return next(p for p in _profile.shipped() if p.source == f"shipped:{name}.json")


def time_plan(csr, f, prof, dtype) -> float:
    """Milliseconds of one plan."""
    t0 = time.process_time()
    planner.plan(csr, f, prof, dtype)
    return 1e3 * (time.process_time() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--profile", default="h200")
    args = ap.parse_args()
    dtype = np.dtype(args.dtype)
    mats = matrices()
    feats = {name: _features.compute(csr) for name, csr in mats}
    prof = shipped(args.profile)
    name, csr = mats[0]
    first = time_plan(csr, fresh(feats[name]), prof, dtype)
    print(f"first plan in the process ({name}, fresh {args.profile} profile): {first:.2f} ms")
    for name, csr in mats:  # warm the profile on every matrix once
        time_plan(csr, fresh(feats[name]), prof, dtype)
    warm = {}
    print(f"{'matrix':28s} {'rows':>8s} {'nnz':>9s} {'cands':>5s} {'warm ms':>8s}")
    for name, csr in mats:
        times = [time_plan(csr, fresh(feats[name]), prof, dtype) for _ in range(args.reps)]
        warm[name] = min(times)
        n_cands = len(planner.plan(csr, fresh(feats[name]), prof, dtype).candidates)
        print(f"{name:28s} {csr.shape[0]:8d} {csr.nnz:9d} {n_cands:5d} {warm[name]:8.3f}")
    print(f"median {statistics.median(warm.values()):.3f} ms, total {sum(warm.values()):.2f} ms "
          f"over {len(warm)} matrices ({args.dtype}, deterministic=False, vendor=True)")


if __name__ == "__main__":
    main()
