"""Record the planner's decisions on a fixed set of matrices as tests/data/planner_golden.json.gz.

tests/auto/test_planner_golden.py compares :func:`cocktail.auto.planner.plan` against this record: every
candidate (its :meth:`~cocktail.auto.planner.Plan.detail`, label and predicted µs), the candidates before the
coded cut, and the rivals ``tune="model"`` and ``tune="measure"`` time.  A change to the planner that is meant to
change no decision leaves the record as it is; one that is meant to change decisions regenerates it, on
purpose, with

    PYTHONPATH=src python3 tests/data/make_planner_golden.py

(the suites' CPU matrices come from the cache, generated on the first run).  The matrices span the classes
the planner separates: stencils and banded matrices (diagonal parts), FEM and meshes (blocks), power-law
graphs and circuits (row-prefix Cocktails), rectangles, mostly-empty rows, the zoo's odd shapes, a matrix of
one value (the pattern cut) and of a few (the coded cut), each in float32 and float64, deterministic or not,
with and without the vendor's kernels, on the shipped profiles and a modelled one without scattered samples.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "planner_golden.json.gz"
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "auto")]  # tests/: the zoo; tests/auto: the modelled profile

#: (deterministic, vendor) flag pairs every matrix is planned with.
FLAGS = ((False, True), (True, True), (False, False), (True, False))
DTYPES = ("float32", "float64")


def _csr(S):
    from cocktail.formats.csr import CSR

    S = sp.csr_array(S)
    S.sum_duplicates()
    S.sort_indices()
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def _generated() -> list:
    """``(name, scipy matrix)`` of the generators and hand-made mixtures."""
    from cocktail.bench.problems.generators import laplacian, power_law

    rng = np.random.default_rng(5)
    n = 200_000
    band = sp.diags([1.0, 2.0, 3.0, 2.0, 1.0], [-2, -1, 0, 1, 2], shape=(n, n), format="coo")
    rows, cols = rng.integers(0, n, n // 2), rng.integers(0, n, n // 2)
    mixed = sp.csr_array((np.r_[band.data, rng.standard_normal(n // 2)],
                          (np.r_[band.row, rows], np.r_[band.col, cols])), shape=(n, n))
    lengths = np.minimum(rng.zipf(1.6, 20_000), 2_000)
    zr = np.repeat(np.arange(20_000), lengths)
    zipf = sp.csr_array((np.ones(zr.size), (zr, rng.integers(0, 20_000, zr.size))), shape=(20_000, 20_000))
    wide_rows = sp.random(3_000, 3_000, density=0.05, format="csr", random_state=4)
    pattern = laplacian(5, 300).copy()
    pattern.data[:] = 1.0
    fr, fc = rng.integers(0, 30_000, 360_000), rng.integers(0, 30_000, 360_000)
    few = sp.csr_array((rng.integers(1, 16, fr.size).astype(float), (fr, fc)), shape=(30_000, 30_000))
    tiny = sp.random(300, 300, density=0.02, format="csr", random_state=3) + sp.eye(300)
    return [("laplace5_300", laplacian(5, 300)), ("laplace3_100000", laplacian(3, 100_000)),
            ("laplace9_200", laplacian(9, 200)), ("laplace27_30", laplacian(27, 30)),
            ("power_law_50000", power_law(50_000)), ("power_law_5000_2.5", power_law(5_000, 2.5, seed=3)),
            ("diagonals_and_scatter", mixed), ("zipf_rows_one_value", zipf), ("dense_rows", wide_rows),
            ("pattern_laplace5", pattern), ("few_values", few), ("tiny", tiny)]


def matrices() -> list:
    """``(name, CSR)`` of every recorded matrix, in a fixed order."""
    from cocktail.bench.problems import suites
    from zoo import ZOO

    out = [(m.name, suites.load(m)) for m in suites.DEFAULT_CPU + suites.HOLDOUT_CPU]
    out += _generated()
    for z in ZOO:
        S = sp.csr_array((z.data, z.indices, z.indptr), shape=z.shape, copy=True)  # summed in place: not the zoo's
        S.sum_duplicates()
        if S.nnz:
            out.append((f"zoo_{z.name}", S))
    return [(name, _csr(S)) for name, S in out]


def profiles() -> list:
    """``(name, profile, matrices)``: the shipped profiles and the tests' modelled one (no scattered samples),
    with the names of the matrices planned on it (None: every one)."""
    from cocktail.auto import profile
    from test_planner import model_profile

    shipped = {p.source.removeprefix("shipped:").removesuffix(".json"): p for p in profile.shipped()}
    some = {"laplace5_300", "power_law_50000", "diagonals_and_scatter", "zipf_rows_one_value", "few_values",
            "fem_spheres_small", "circuit_small", "holdout_mesh3d_b3_small", "zoo_stencil", "zoo_long_row"}
    return [("h200", shipped["h200"], None), ("h100", shipped["h100"], some), ("model", model_profile(), some)]


def _us(t: float) -> float:
    """A prediction to 12 significant digits (the test compares to 1e-9 relative)."""
    return float(f"{t:.12g}")


def summarise(planning, names: dict) -> dict:
    """What the record keeps of one planning: the candidates and the candidates before the coded cut as
    ``[detail, µs]``, the rivals as details; a detail (:meth:`~cocktail.auto.planner.Plan.detail`) as its
    index in ``names`` (filled as details are met)."""
    def name(p) -> int:
        return names.setdefault(p.detail(), len(names))

    chosen = planning.chosen
    wider = 1.4 * chosen.predicted_us  # as if the chosen plan measured slower than predicted
    rivals = {"vendor_rivals": planning.vendor_rivals(chosen), "own_rivals": planning.own_rivals(chosen),
              "vendor_rivals_wider": planning.vendor_rivals(chosen, wider),
              "own_rivals_wider": planning.own_rivals(chosen, wider),
              "uncut_rivals": planning.uncut_rivals(chosen), "to_measure": planning.to_measure(),
              "tuning_rivals": planning.tuning_rivals(chosen, chosen.predicted_us),
              "tuning_rivals_wider": planning.tuning_rivals(chosen, wider)}
    return {"candidates": [[name(p), _us(p.predicted_us)] for p in planning.candidates],
            "uncut": [[name(p), _us(p.predicted_us)] for p in planning.uncut],
            **{k: [name(p) for p in plans] for k, plans in rivals.items()}}


def key(profile_name: str, matrix: str, dtype: str, deterministic: bool, vendor: bool) -> str:
    return f"{profile_name}/{matrix}/{dtype}/det={int(deterministic)}/vendor={int(vendor)}"


def plannings(mats=None):
    """``(key, planning)`` of every recorded case (features computed once per matrix)."""
    from cocktail.auto import features, planner

    mats = matrices() if mats is None else mats
    feats = {name: features.compute(csr) for name, csr in mats}
    for pname, prof, only in profiles():
        for name, csr in mats:
            if only is not None and name not in only:
                continue
            for dt in DTYPES:
                for det, vendor in FLAGS:
                    yield key(pname, name, dt, det, vendor), planner.plan(csr, feats[name], prof, np.dtype(dt),
                                                                          det, vendor)


def main() -> None:
    names = {}
    record = {k: summarise(p, names) for k, p in plannings()}
    doc = {"details": list(names), "plannings": record}
    GOLDEN.write_bytes(gzip.compress((json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n").encode(), mtime=0))
    print(f"{len(record)} plannings of {len({k.split('/')[1] for k in record})} matrices, {len(names)} distinct "
          f"plans -> {GOLDEN}")


if __name__ == "__main__":
    main()
