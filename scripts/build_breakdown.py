"""Where one format='auto' build from the device goes: each stage's wall time and each fused feature kernel's GPU time.

Usage: PYTHONPATH=src python scripts/build_breakdown.py OUTDIR [matrix ...]   (default: a mix of the default suite
and the holdout; float64; the decision cache off)

For each matrix, after two warm builds: the wall time of CSR.from_arrays, features.compute, planner.plan and the
chosen plan's build (each followed by a synchronisation), the whole SparseMatrix(dev), and the GPU time of every
launch of the fused features (CUDA events around each).  Run it again with CUDA_LAUNCH_BLOCKING=1 and PROFILE=1 for a
cProfile of a build in which each launch's GPU time falls to the Python that launched it.  Writes
OUTDIR/build_breakdown[_profile].json and .txt.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import sys
import time

import numpy as np

DEFAULT = ["circuit", "webbase", "lp", "fem_spheres", "in2004", "holdout_saddle", "holdout_sparse_rows",
           "holdout_preferential", "holdout_banded", "holdout_mesh2d"]


def _wall(fn, reps=5):
    import cupy
    times, out = [], None
    for _ in range(reps):
        cupy.cuda.get_current_stream().synchronize()
        t = time.perf_counter()
        out = fn()
        cupy.cuda.get_current_stream().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times)), out


class _EventLauncher:
    """The fused features' launcher with a pair of CUDA events around each launch."""

    def __init__(self):
        from cocktail.auto.features import _CupyLauncher
        self.inner, self.marks = _CupyLauncher(), []

    def __call__(self, stem, expression, items, block, args, shared=0):
        import cupy
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        self.inner(stem, expression, items, block, args, shared)
        end.record()
        self.marks.append((expression, start, end))

    def fetch(self, buffer):
        return self.inner.fetch(buffer)

    def times(self):
        import cupy
        return [(e, round(cupy.cuda.get_elapsed_time(s, t) * 1e3, 1)) for e, s, t in self.marks]


def main():
    outdir = sys.argv[1]
    names = sys.argv[2:] or DEFAULT
    profile = os.environ.get("PROFILE") == "1"
    os.makedirs(outdir, exist_ok=True)
    os.environ["COCKTAIL_DECISIONS"] = "off"
    import cupy
    import cupyx.scipy.sparse as csp
    from cocktail import SparseMatrix
    from cocktail.auto import features, planner, profile as device_profile
    from cocktail.auto.planning import fitting_build
    from cocktail.bench.problems import suites
    from cocktail.formats.csr import CSR

    by_name = {m.name: m for s in suites.names() for m in suites.get(s)}
    rows, text = [], io.StringIO()
    for name in names:
        S = suites.load(by_name[name]).astype(np.float64)
        S.sort_indices()
        dev = csp.csr_matrix((cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr)), shape=S.shape)
        for _ in range(2):
            SparseMatrix(dev)
        row = {"matrix": name, "nnz": int(S.nnz), "rows": int(S.shape[0])}
        if profile:
            prof = cProfile.Profile()
            cupy.cuda.get_current_stream().synchronize()
            prof.enable()
            SparseMatrix(dev)
            cupy.cuda.get_current_stream().synchronize()
            prof.disable()
            for key, count in (("tottime", 40), ("cumulative", 60)):
                s = io.StringIO()
                pstats.Stats(prof, stream=s).sort_stats(key).print_stats(count)
                text.write(f"\n==== {name} nnz={S.nnz:,} by {key} ====\n{s.getvalue()}")
            print(name, "profiled", flush=True)
            continue
        row["build_ms"], A = _wall(lambda: SparseMatrix(dev))
        row["plan"] = A.auto.plan.detail()
        row["csr_ms"], csr = _wall(lambda: CSR.from_arrays(dev.data, dev.indices, dev.indptr, S.shape))
        limit = planner.block_fill_limit(csr.dtype, csr.index_dtype)
        row["features_ms"], feats = _wall(lambda: features.compute(csr, block_fill_limit=limit))
        prof = device_profile.for_device(device_profile.current_device())
        row["plan_ms"], planning = _wall(lambda: planner.plan(csr, feats, prof, csr.dtype, False, True))
        row["convert_ms"], _ = _wall(lambda: fitting_build(planning.chosen, csr))
        launcher = _EventLauncher()
        features._fused_compute(csr, limit, None, None, launcher=launcher)
        cupy.cuda.get_current_stream().synchronize()
        row["feature_kernels_us"] = launcher.times()
        row["report_ms"] = {k: round(1e3 * getattr(A.auto, k), 3) for k in ("analysis_s", "features_s", "convert_s")}
        rows.append(row)
        print(json.dumps(row), flush=True)
        text.write(json.dumps(row, indent=1) + "\n")
    tag = "_profile" if profile else ""
    if rows:
        with open(os.path.join(outdir, f"build_breakdown{tag}.json"), "w") as f:
            json.dump(rows, f, indent=1)
    with open(os.path.join(outdir, f"build_breakdown{tag}.txt"), "w") as f:
        f.write(text.getvalue())


if __name__ == "__main__":
    main()
