"""The workload section on the GPU: the 50 matrices shrunk to 1/200 of their rows, each built from the host and
multiplied 20 times, ours against cupyx and torch (where importable); the records, the answers, the headline and
``cocktail bench --workload``."""

from __future__ import annotations

import importlib.util
import json

import pytest

from cocktail.bench.measuring import workload
from cocktail.bench.output import workload as workload_output
from cocktail.bench.records import wrong
from cocktail.bench.records.record import REQUIRED_KEYS, WORKLOAD_KEYS
from cocktail.cli import main

pytestmark = pytest.mark.gpu

HAS_TORCH = importlib.util.find_spec("torch") is not None
PLAN = workload.Plan(products=workload.PRODUCTS, repeats=2)
#: The rows are divided by this: every matrix some thousands to tens of thousands of nonzeros.
SHRINK = 200


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COCKTAIL_CACHE", str(tmp_path_factory.mktemp("matrices")))
        return workload.workload_problems(on_gpu=True, shrink=SHRINK)


@pytest.fixture(scope="module")
def gpu_records(problems):
    return [r.as_dict() for r in workload.run(problems, ["float64", "float32"], on_gpu=True, plan=PLAN)]


def test_one_record_per_dtype_and_method(gpu_records, problems):
    assert [(r["dtype"], r["method"]) for r in gpu_records] == [
        (d, m) for d in ("float64", "float32") for m in ("cocktail-auto", "cupyx", "torch")]
    for r in json.loads(json.dumps(gpu_records)):
        assert set(REQUIRED_KEYS) | set(WORKLOAD_KEYS) <= set(r)
        assert r["section"] == "workload" and r["matrix"] == "workload50" and r["products"] == 20
        assert r["nnz"] == sum(p.S.nnz for p in problems) and r["params"]["matrices"] == 50


def test_ours_and_cupyx_ran_the_whole_workload_and_answered_right(gpu_records):
    for r in gpu_records:
        if r["method"] == "torch" and r["note"]:  # torch absent, or without CUDA support
            assert not HAS_TORCH or "CUDA" in r["note"], r["note"]
            continue
        assert not r["note"], (r["method"], r["note"])
        assert 0 < r["build_us"] < r["total_us"] and r["samples"] == PLAN.repeats
        assert r["rel_err"] < wrong.error_bound(r) and not wrong.is_wrong(r)
        rows = r["params"]["per_matrix"]
        assert len(rows) == 50 and all(m["rel_err"] < wrong.error_bound(r) for m in rows)
        assert all(0 < m["build_us"] < m["total_us"] for m in rows)
        if r["method"] == "cocktail-auto":
            assert all("plan" in m for m in rows)  # the GPU planner's plan of each matrix
    if HAS_TORCH:
        import torch

        if torch.cuda.is_available():
            assert all(not r["note"] for r in gpu_records if r["method"] == "torch")
            assert torch.cuda.current_stream() == torch.cuda.default_stream()  # torch's stream given back


def test_the_headline_is_ours_against_cupyx(gpu_records):
    for title, head, header, rows in workload_output.sections(gpu_records):
        assert title.startswith("workload of 50 matrices")
        assert "cupyx's speed" in head and "target at least 1.0x: " in head
        assert [row[0] for row in rows][:2] == ["cocktail-auto", "cupyx"]


def test_the_command_runs_the_section_on_the_gpu(problems, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(workload, "workload_problems", lambda on_gpu: problems[:5])
    out = tmp_path / "r.json"
    assert main(["bench", "--workload", "--repeat", "1", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {r["section"] for r in records} == {"workload"}
    assert {"cocktail-auto", "cupyx"} <= {r["method"] for r in records if not r["note"]}
    assert all(r["gpu"] and r["gpu"] != "none (CPU)" for r in records)
    assert "workload of 5 matrices, float64: cocktail-auto's whole workload" in " ".join(
        capsys.readouterr().out.split())
