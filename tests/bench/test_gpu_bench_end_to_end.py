"""The end-to-end section on the GPU: one small matrix built from the host and from the device, ours against cupyx
and torch (where importable), every N up to 10,000."""

from __future__ import annotations

import importlib.util
import json

import pytest

from cocktail.bench.measuring import end_to_end
from cocktail.bench.output import end_to_end as e2e_output
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.records import wrong
from cocktail.bench.records.record import END_TO_END_KEYS, REQUIRED_KEYS
from cocktail.bench.runner import Problem
from cocktail.cli import main

pytestmark = pytest.mark.gpu

HAS_TORCH = importlib.util.find_spec("torch") is not None
PLAN = end_to_end.Plan(end_to_end.GPU_MARKS, repeats=2, budget_s=10.0)


@pytest.fixture(scope="module")
def gpu_records():
    problems = [Problem("generated", "laplace5_64", "test", laplacian(5, 64))]
    return [r.as_dict() for r in end_to_end.run(problems, ["float64", "float32"], on_gpu=True, plan=PLAN)]


def test_every_source_method_and_mark_has_a_record(gpu_records):
    keys = {(r["dtype"], r["build_from"], r["method"], r["products"]) for r in gpu_records}
    assert len(keys) == len(gpu_records) == 2 * 2 * 3 * len(end_to_end.GPU_MARKS)
    assert {r["build_from"] for r in gpu_records} == {"host", "device"}
    assert {r["method"] for r in gpu_records} == {"cocktail-auto", "cupyx", "torch"}
    for r in json.loads(json.dumps(gpu_records)):
        assert set(REQUIRED_KEYS) | set(END_TO_END_KEYS) <= set(r) and r["section"] == "end-to-end"


def test_ours_and_cupyx_ran_every_mark_and_answered_right(gpu_records):
    for r in gpu_records:
        if r["method"] == "torch" and r["note"]:  # torch absent, or without CUDA support
            assert not HAS_TORCH or "CUDA" in r["note"], r["note"]
            continue
        assert not r["note"], (r["method"], r["build_from"], r["note"])
        assert r["build_us"] > 0 and r["total_us"] > r["build_us"] and r["samples"] == PLAN.repeats
        assert r["rel_err"] < wrong.error_bound(r) and not wrong.is_wrong(r)
    if HAS_TORCH:
        import torch

        if torch.cuda.is_available():
            assert all(not r["note"] for r in gpu_records if r["method"] == "torch")
            assert torch.cuda.current_stream() == torch.cuda.default_stream()  # torch's stream given back


def test_totals_grow_with_the_products(gpu_records):
    jobs = {}
    for r in gpu_records:
        if r["total_us"]:
            jobs.setdefault((r["dtype"], r["build_from"], r["method"]), []).append(r)
    assert jobs
    for rows in jobs.values():
        rows.sort(key=lambda r: r["products"])
        totals = [r["total_us"] for r in rows]
        assert totals == sorted(totals) and totals[0] < totals[-1]
        assert [r["products"] for r in rows] == list(end_to_end.GPU_MARKS)


def test_our_records_name_the_plan_and_its_decision(gpu_records):
    ours = [r for r in gpu_records if r["method"] == "cocktail-auto"]
    assert all(r["params"].get("plan") and r["params"]["cached"] is False for r in ours)  # the cache is off
    assert all(r["params"]["analysis_ms"] > 0 for r in ours)


def test_the_headline_compares_with_cupyx(gpu_records):
    sections = e2e_output.sections(gpu_records)
    assert [title for title, *_ in sections] == [
        "end to end from a host matrix, float64", "end to end from a device matrix, float64",
        "end to end from a host matrix, float32", "end to end from a device matrix, float32"]
    for _, head, header, rows in sections:
        assert "than cupyx's" in head and header[:4] == ["matrix", "method", "ours ms", "their ms"]
        assert [row[1] for row in rows] == ["cupyx", "torch"]


def test_the_cli_runs_the_section_alone(tmp_path, capsys):
    out = tmp_path / "e.json"
    assert main(["bench", "--end-to-end", "laplace5_40", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {r["section"] for r in records} == {"end-to-end"} and {r["matrix"] for r in records} == {"laplace5_40"}
    assert all(r["gpu"] and r["gpu"] != "none (CPU)" for r in records)
    text = " ".join(capsys.readouterr().out.split())
    assert "end to end from a device matrix, float64: cocktail-auto's whole job" in text
