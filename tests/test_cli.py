"""The ``cocktail`` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import scipy.sparse as sp

from cocktail import write_matrix
from cocktail.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "cocktail.cli", *args], capture_output=True, text=True, timeout=300)


def test_bench_default_runs_and_prints_table(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("bench", "--cpu", "--repeat", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "laplace2d_64" in proc.stdout and "powerlaw_4k" in proc.stdout
    records = json.loads(out.read_text())
    methods = {r["method"] for r in records}
    assert {"csr", "ell", "hyb", "pkt", "sbell"} <= methods
    measured = [r for r in records if r["gflops"] is not None]
    assert measured and all(r["rel_err"] < 1e-12 for r in measured)
    refused = [r for r in records if r["gflops"] is None]
    assert all(r["note"].startswith("refused:") for r in refused)


def test_bench_matrix_file(tmp_path, capsys):
    path = write_matrix(tmp_path / "m.mtx", sp.random_array((50, 50), density=0.1, random_state=1))
    assert main(["bench", str(path), "--formats", "csr,ell", "--repeat", "1"]) == 0
    assert "m.mtx" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["bench", "missing.mtx"], "cannot read matrix file 'missing.mtx': no such file"),
    (["bench", "--formats", "csr,nope"], "unknown format 'nope'"),
])
def test_bench_errors_are_one_line(args, message):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("cocktail: error:")


def test_malformed_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n")
    proc = run_cli("bench", str(bad))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "is not a readable Matrix Market file" in proc.stderr


def test_help_documents_options():
    proc = run_cli("bench", "--help")
    assert proc.returncode == 0
    for option in ("--formats", "--dtype", "--repeat", "--json"):
        assert option in proc.stdout


def test_formats_command(capsys):
    assert main(["formats"]) == 0
    text = capsys.readouterr().out
    assert "sell" in text and "slice_height" in text


def test_bench_generated_laplacian(capsys):
    assert main(["bench", "laplace7_6", "--formats", "dia", "--repeat", "1", "--cpu"]) == 0
    out = capsys.readouterr().out
    assert "laplace7_6" in out and "dia" in out


def test_markdown_report(tmp_path, capsys):
    from cocktail.bench import report

    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_6", "--formats", "csr,ell", "--repeat", "1", "--cpu", "--json", str(out)]) == 0
    capsys.readouterr()
    assert report.main([str(out), "--title", "T", "--note", "on a CPU"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# T\n\non a CPU\n")
    assert "| laplace5_6 | 36 |" in text and text.count("\n| laplace5_6") == 2
    records = json.loads(out.read_text())
    assert {"gpu", "cuda", "cupy", "commit", "date"} <= set(records[0])


def test_bench_unknown_suite_is_one_line():
    proc = run_cli("bench", "--suite", "nope")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown suite 'nope'" in proc.stderr


def test_csv_and_plots(tmp_path, capsys):
    import csv

    out_csv, plot_dir = tmp_path / "r.csv", tmp_path / "plots"
    assert main(["bench", "laplace5_8", "laplace7_4", "--formats", "csr,ell,dia", "--repeat", "1", "--cpu",
                 "--csv", str(out_csv), "--plot", str(plot_dir)]) == 0
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 6 and {"matrix", "method", "gflops", "commit"} <= set(rows[0])
    for name in ("gflops.png", "profile.png", "bandwidth.png"):
        png = (plot_dir / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
