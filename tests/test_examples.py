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
    pytest.importorskip("skfem", reason="the elasticity matrix needs scikit-fem (its refusal is tested below)")
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


#: The status an example exits with where a package it needs is not installed (examples/_common.py).
NEEDS_PACKAGE = 69


def _run_without(tmp_path, module: str, script: str, *args):
    """Run ``examples/script --small --device cpu *args`` where ``import module`` fails."""
    blocker = tmp_path / "block"
    blocker.mkdir(exist_ok=True)
    (blocker / f"{module}.py").write_text(f"raise ImportError('{module} blocked for this test')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(EXAMPLES / script), "--small", "--device", "cpu", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


def test_gcn_without_torch_names_it_and_exits_with_its_own_status(tmp_path):
    """Where torch cannot be imported, gcn.py names it on stderr and exits 69, never 0 (nothing was checked)."""
    done = _run_without(tmp_path, "torch", "gcn.py")
    assert done.returncode == NEEDS_PACKAGE, (done.returncode, done.stdout, done.stderr)
    assert "gcn.py needs PyTorch" in done.stderr and "pip install torch" in done.stderr


def test_cg_fem_elasticity_without_scikit_fem_refuses_instead_of_solving_another_matrix(tmp_path):
    """The elasticity matrix needs scikit-fem: without it cg_fem.py names the package and the way out
    (--matrix laplace27) and exits 69, rather than timing a Laplacian under the elasticity run's command."""
    done = _run_without(tmp_path, "skfem", "cg_fem.py")
    assert done.returncode == NEEDS_PACKAGE, (done.returncode, done.stdout, done.stderr)
    assert "scikit-fem" in done.stderr and "--matrix laplace27" in done.stderr


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
