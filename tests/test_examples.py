"""The scripts in examples/ run end to end on the CPU (``--small --device cpu``) and write the JSON record they
promise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
COMMON_KEYS = {"example", "command", "machine", "settings", "problem", "results", "checks", "speedup"}
MACHINE_KEYS = {"device", "device_name", "commit", "date", "numpy", "scipy", "cocktail"}
TIMING_KEYS = {"setup_s", "warmup_s", "times_s", "best_s", "median_s", "way"}


def run_example(name: str, tmp_path, *extra) -> dict:
    out = tmp_path / f"{name}.json"
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), "--small", "--device", "cpu",
                           "--repeat", "2", "--json", str(out), *extra],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, f"{name}.py exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "checks:" in done.stdout and "FAILED" not in done.stdout
    record = json.loads(out.read_text())
    assert COMMON_KEYS <= set(record), set(record)
    assert record["example"] == name
    assert MACHINE_KEYS <= set(record["machine"])
    assert record["machine"]["device"] == "cpu"
    assert isinstance(record["speedup"], float) and record["speedup"] > 0
    assert record["checks"] and all(c["ok"] for c in record["checks"].values())
    for way in record["results"].values():
        assert TIMING_KEYS <= set(way), set(way)
        assert len(way["times_s"]) == 2 and all(t > 0 for t in way["times_s"])
        assert way["best_s"] <= way["median_s"]
    return record


def test_cg_fem(tmp_path):
    record = run_example("cg_fem", tmp_path, "--rows", "4000")
    assert set(record["results"]) == {"usual", "cocktail"}
    for way in record["results"].values():
        assert way["iterations"] > 0 and way["relative_residual"] <= 2e-8


def test_cg_fem_laplacian(tmp_path):
    record = run_example("cg_fem", tmp_path, "--matrix", "laplace27")
    assert record["problem"]["matrix"] == "laplace27"


def test_pagerank(tmp_path):
    record = run_example("pagerank", tmp_path, "--scale", "12", "--iters", "20")
    assert set(record["results"]) == {"usual", "cocktail matvec", "cocktail bind"}
    assert record["speedup_bind"] > 0
    assert abs(record["rank"]["sum"] - 1) < 1e-8


def test_lsqr(tmp_path):
    record = run_example("lsqr", tmp_path, "--iters", "40")
    usual, ours = record["results"]["usual"], record["results"]["cocktail"]
    assert usual["iterations"] == ours["iterations"] == 40
    assert ours["residual_norm"] == pytest.approx(usual["residual_norm"], rel=1e-8)


def test_gcn(tmp_path):
    pytest.importorskip("torch")
    record = run_example("gcn", tmp_path, "--scale", "11")
    assert set(record["results"]) == {"torch.sparse", "cocktail"}
    assert record["loss"]["cocktail"] == pytest.approx(record["loss"]["torch.sparse"], rel=1e-5)


def test_gcn_without_torch_exits_0(tmp_path):
    """Where torch cannot be imported, gcn.py says so and exits 0."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "torch.py").write_text("raise ImportError('torch blocked for this test')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(EXAMPLES / "gcn.py"), "--small", "--device", "cpu"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "needs PyTorch" in done.stdout


def test_a_failed_check_raises_after_writing_the_record(tmp_path, monkeypatch, capsys):
    """A disagreement between the two ways ends the script with an exception (exit non-zero), the JSON written first."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import _common

    args = _common.parser("doc").parse_args(["--device", "cpu", "--json", str(tmp_path / "r.json")])
    report = _common.Report("demo", _common.Device(args.device), args)
    report.data["speedup"] = 1.0
    report.check("answers", False, difference=1.0)
    with pytest.raises(_common.Disagreement, match="answers"):
        report.finish("demo", ["way"], [["usual"]])
    assert json.loads((tmp_path / "r.json").read_text())["checks"]["answers"]["ok"] is False
    assert "answers FAILED" in capsys.readouterr().out
