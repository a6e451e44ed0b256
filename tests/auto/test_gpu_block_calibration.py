"""The SpMM samples of the device profile on the GPU (``cocktail calibrate --spmm`` on a tiny grid) and the block
planner costing from them (racing only the promising choices).

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def test_the_spmm_sampler_gives_finite_positive_ratios_resumes_and_merges(tmp_path, monkeypatch):
    from cocktail.auto import block_calibration, profile

    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    monkeypatch.setitem(block_calibration.SPMM_GRIDS, "quick", ((1 << 12,), (4,), (2, 8)))
    monkeypatch.setattr(block_calibration, "TRANSPOSE_SHAPE", (1 << 14, 8))
    seen = []
    section = block_calibration.run("quick", ("float32",), only=["csr", "ell"], restart=True,
                                    progress=lambda done, total, text: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == 2
    table = section["ratios"]["float32"]
    assert {"csr_scalar:csr_spmm", "csr_merge:csr_spmm_merge", "csr_vector:csr_spmm", "ell:ell_spmm"} <= set(table)
    assert any(key.endswith("cusparse_spmm(alg=1)") for key in table) or not _vendor_spmm()
    for by_layout in table.values():
        for layout, rows in by_layout.items():
            assert layout in ("row", "col")
            assert {k for _, _, k, _ in rows} <= {2, 8}
            assert all(math.isfinite(r) and r > 0 for *_, r in rows)
    assert {k for _, _, k, _ in table["ell:ell_spmm"]["row"]} == {2, 8} and "col" in table["ell:ell_spmm"]
    assert section["transpose_gbps"]["float32"] > 0
    # resumable: a second run has nothing left to sample
    monkeypatch.setattr(block_calibration, "sample_point", lambda *a, **kw: pytest.fail("sampled again"))
    assert block_calibration.run("quick", ("float32",), only=["csr", "ell"])["ratios"] == section["ratios"]
    # merged into a profile of this GPU: its SpMV samples and digest unchanged
    base = profile.Profile(profile.current_device(), {"float32": 2.0}, {"float32": {"csr_scalar": [[1024, 4, 3.0]]}})
    path = tmp_path / "base.json"
    base.save(path)
    merged = block_calibration.merge(section, path)
    back = profile.Profile.load(path)
    assert back.has_spmm("float32", "row") and back.digest == base.digest and merged.source == str(path)
    ratio = back.predict_block_ratio("ell:ell_spmm", "row", "float32", 1 << 12, 4, 4)
    assert ratio is not None and ratio > 0
    profile.forget()


def _vendor_spmm() -> bool:
    from cocktail.kernels import cusparse_spmm

    return cusparse_spmm.available()


def _ratios(scale):
    """Ratios ``scale`` everywhere: every block product ``scale`` SpMVs."""
    return {layout: [[m, p, k, scale] for m in (1000, 100_000) for p in (1, 64) for k in (2, 256)]
            for layout in ("row", "col")}


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_planner_with_spmm_samples_races_the_promising_and_gives_the_product(monkeypatch, order):
    from cocktail.auto import block_plans, profile
    from cocktail.auto.plans import PlannedProduct
    from cocktail.executors.base import block_key
    from cocktail.kernels.block_operands import BlockOperands

    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, raw = build(zm, "csr", {}, "csr_merge", {}, "float32", "int32")
    ex = A._executor
    ratios = {"csr_merge:csr_spmm_merge": _ratios(1.0), "csr_merge:cusparse_spmm(alg=1)": _ratios(1.5),
              "csr_merge:cusparse_spmm(alg=2)": _ratios(40.0), "csr_merge:cusparse_spmm(alg=3)": _ratios(40.0)}
    prof = profile.Profile(profile.current_device(), {"float32": 2.0}, {}, spmm={"ratios": {"float32": ratios}})
    monkeypatch.setattr(block_plans, "device_profile", lambda: prof)
    product = PlannedProduct(None, A.storage, ex)  # planned as a format="auto" matrix's blocks are
    A._planned = A._executor = product
    m, n = zm.shape
    X_host = np.random.default_rng(3).standard_normal((n, 12)).astype("float32")
    X = cupy.asarray(np.array(X_host, order=order))
    Y = cupy.zeros((m, 12), dtype="float32", order=order)
    A.matmat(X, out=Y)
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
    key = block_key(BlockOperands.of(X, Y))
    raced = set(ex.block_times[key])
    assert "csr_spmm_merge" in raced and raced <= {"csr_spmm_merge", "cusparse_spmm(alg=1)"}
    (choice,) = ex._block_plans.values()
    assert product._buckets == {key: True} and choice.label(ex.kernel) in raced
    predicted = ex.block_predicted[key]
    assert {"csr_merge per column", "csr_spmm_merge"} <= set(predicted) and all(us > 0 for us in predicted.values())
    assert predicted["csr_merge per column"] > 12 * predicted["csr_spmm_merge"] * 0.99  # 12 SpMVs at least
    A.matmat(X, out=Y)  # the same bucket: planned once
    assert list(ex.block_times) == [key]
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
