"""``cocktail bench`` on the GPU: kernel labels, provenance and outputs."""

from __future__ import annotations

import json

import pytest

import cocktail
from cocktail.cli import main

pytestmark = pytest.mark.gpu


def test_bench_gpu_path(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_40", "--formats", "csr,coo,ell,hyb", "--all-kernels", "--repeat", "5",
                 "--json", str(out), "--plot", str(tmp_path / "plots")]) == 0
    records = json.loads(out.read_text())
    methods = {r["method"] for r in records}
    assert {"csr_scalar", "csr_vector", "csr_merge", "coo_segmented", "coo_atomic", "ell", "hyb"} <= methods
    for r in records:
        assert r["gpu"] and r["gpu"] != "none (CPU)" and r["cupy"] and r["cuda"]
        assert r["rel_err"] < 1e-12 and r["gflops"] > 0
    assert "GPU SpMV on" in capsys.readouterr().out
    assert cocktail._xp.cuda_available()
