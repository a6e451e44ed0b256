"""``cocktail bench`` on the GPU: kernel labels, provenance and outputs; ``--overhead``."""

from __future__ import annotations

import json

import pytest

import cocktail
from cocktail.bench.records.record import OVERHEAD_KEYS, REQUIRED_KEYS
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
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith(records[0]["gpu"] + "; copy bandwidth ")
    assert "cocktail-auto vs cuSPARSE (best of 4 algorithms), float64: " in text and "× cuSPARSE" in text
    assert cocktail.arrays.cuda_available()


def test_bench_overhead_on_the_small_matrix(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert main(["bench", "--overhead", "random10k", "--dtype", "float32,float64", "--repeat", "5",
                 "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {r["section"] for r in records} == {"overhead"} and {r["matrix"] for r in records} == {"random10k"}
    assert {r["dtype"] for r in records} == {"float32", "float64"}
    for r in records:
        assert set(REQUIRED_KEYS) | set(OVERHEAD_KEYS) <= set(r)
        if r["note"]:
            assert r["method"] == "torch" and r["note"] == "torch is not installed"
            continue
        for key in ("back_to_back_us", "sync_call_us", "over_empty_launch", "over_empty_graph",
                    "sync_over_empty_launch", "sync_over_empty_graph"):
            assert r[key] > 0, (r["method"], key)
    text = capsys.readouterr().out
    assert "Call overhead, float64" in text and "Targets: call overhead and the planner" in text and "GPU SpMV on" not in text
