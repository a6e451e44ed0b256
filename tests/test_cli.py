"""The ``cocktail`` command line."""

from __future__ import annotations

import importlib.util

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import write_matrix
from cocktail.arrays import cuda_available
from cocktail.bench.problems import suites
from cocktail.cli import main


def run_cli(*args, columns=None):
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "cocktail.cli", *args], capture_output=True, text=True, timeout=300,
                          env=env)


def test_bench_default_runs_and_prints_table(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("bench", "--cpu", "--repeat", "2", "--json", str(out), columns=80)
    assert proc.returncode == 0, proc.stderr
    assert "on the default suite shrunk to CPU size" in " ".join(proc.stderr.split())
    assert max(map(len, proc.stderr.splitlines())) <= 80  # messages and progress lines wrapped to COLUMNS
    names = [m.name for m in suites.get("default-cpu")]
    assert all(name in proc.stdout for name in names)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("CPU run: each format's host CPU executor, cocktail-auto and SciPy")
    headline = " ".join(proc.stdout.split("cocktail-auto vs SciPy, float64: ")[1].split("\nmatrix")[0].split())
    assert re.match(r"\d+\.\d\dx as fast \(geometric mean; timing noise \d\.\d{3}-\d\.\d{3}x at 95%(: the same "
                    r"speed)?\), faster on \d of 8 matrices, slower on \d, the same within timing noise on \d; "
                    r"fastest of (all \d+ methods|the \d+ methods that ran \(\d+ tried\)) on \d \(within 2%\)$",
                    headline), headline
    assert "Terms:" in proc.stdout and max(map(len, lines)) <= 80
    header = next(line for line in lines if line.startswith("matrix"))
    assert header.split("  ")[-1] == "× SciPy" and "of copy" not in header and "cuSPARSE" not in header
    assert "cpu µs" in header and "kernel µs" not in proc.stdout
    assert "GFLOP/s statistics" not in proc.stdout  # the answer only; -v for the rest
    saved = run_cli("report", str(out), "--terminal", columns=80)
    assert saved.returncode == 0 and saved.stdout == proc.stdout
    proc = run_cli("report", str(out), "--terminal", "-v", columns=80)
    every = json.loads(out.read_text())
    assert {r["section"] for r in every} == {"spmv", "end-to-end"}  # the default run ends with the whole job
    assert {r["matrix"] for r in every if r["section"] == "end-to-end"} == set(names)
    records = [r for r in every if r["section"] == "spmv"]
    assert {r["matrix"] for r in records} == set(names) and {r["suite"] for r in records} == {"default-cpu"}
    methods = {r["method"] for r in records}
    assert {"csr", "coo", "ell", "hyb", "pkt", "sbell", "cocktail-auto", "scipy"} <= methods
    assert not any(m.startswith("reference:") for m in methods)  # the reference executors run when named
    measured = [r for r in records if r["gflops"] is not None]
    assert measured and all(r["rel_err"] < 1e-12 for r in measured)
    assert all(r["params"]["executor"] == "cpu" for r in measured if r["method"] != "scipy")
    refused = [r for r in records if r["gflops"] is None]
    assert all(r["note"].startswith("refused:") for r in refused)
    assert "GFLOP/s statistics" in proc.stdout
    assert "CPU time: cocktail-auto against SciPy" in proc.stdout and "Targets: call overhead and the planner" in proc.stdout


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
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cocktail: error:"), "nothing before the error line"


def test_npz_with_a_column_out_of_range_is_one_line(tmp_path):
    bad = tmp_path / "bad.npz"  # SciPy's unchecked product read out of bounds on it (SIGSEGV) before
    np.savez(bad, format=np.array(b"csr"), shape=np.array([2, 2]), data=np.ones(2),
             indices=np.array([0, 99999999], dtype=np.int32), indptr=np.array([0, 1, 2], dtype=np.int32))
    proc = run_cli("bench", str(bad))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "CSR indices must be < cols = 2: indices[1] = 99999999" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("cocktail: error:")


def test_help_documents_options():
    proc = run_cli("bench", "--help")
    assert proc.returncode == 0
    for option in ("--formats", "--dtype", "--repeat", "--json", "--csv", "--plot", "--methods", "--suite",
                   "--all-kernels", "--cpu", "--overhead", "--no-overhead"):
        assert option in proc.stdout


def run_module(*args):
    """``python -m cocktail ARGS`` in a fresh interpreter that imports cocktail from this checkout's src/."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "cocktail", *args], capture_output=True, text=True, timeout=300,
                          env=env)


def test_python_dash_m_cocktail():
    proc = run_module("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: cocktail ") and "bench" in proc.stdout and "formats" in proc.stdout
    proc = run_module("bench", "--formats", "csr,nope")  # main() returns 2: the exit status carries it
    assert proc.returncode == 2 and "unknown format 'nope'" in proc.stderr
    proc = run_module()  # no command: argparse's usage error
    assert proc.returncode == 2 and "usage: cocktail" in proc.stderr


def test_formats_command(capsys):
    assert main(["formats"]) == 0
    text = capsys.readouterr().out
    assert "sell" in text and "slice_height=32" in text and "width=longest row" in text
    assert "ell_width=auto (rule)" in text and "packet_rows=auto (rule)" in text
    assert "None" not in text  # resolved values or a plain word, never placeholders


def test_bench_generated_laplacian(capsys):
    assert main(["bench", "laplace7_6", "--formats", "dia", "--repeat", "1", "--cpu", "-v"]) == 0
    out = capsys.readouterr().out
    assert "laplace7_6" in out and "cocktail-auto" in out and "reference:dia" not in out
    assert re.search(r"[│ ]dia\s", out)  # the dia row, in a rich table or in plain text (rich is optional)


def test_reference_executors_run_when_named(tmp_path):
    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr,ell", "--methods", "reference,reference:dia",
                 "--repeat", "1", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert [r["method"] for r in records] == ["reference:csr", "reference:ell", "reference:dia"]
    assert all(r["params"]["executor"] == "reference" and r["rel_err"] < 1e-14 for r in records)


def test_markdown_report(tmp_path, capsys):
    from cocktail.bench.output import report

    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_6", "--formats", "csr,ell", "--repeat", "1", "--cpu", "--json", str(out)]) == 0
    capsys.readouterr()
    assert report.main([str(out), "--title", "T", "--note", "on a CPU"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# T\n\non a CPU\n")
    assert "## GFLOP/s: suite `generated`, float64" in text
    # the generated Laplacian is regular; no L2 on a CPU
    assert "| generated | laplace5_6 | generated Laplacian | regular | 36 | 36 | 156 | 4.3 | - |" in text
    assert "| matrix | csr | ell | cocktail-auto | scipy |" in text and text.count("\n| laplace5_6 |") == 2
    assert "## GFLOP/s statistics (Flegar & Anzt Table 1), float64" in text
    assert "## CPU time: cocktail-auto against SciPy, float64" in text
    assert "| CPU time: SciPy / cocktail-auto | float64 | 1 |" in text
    records = json.loads(out.read_text())
    assert {"gpu", "cuda", "cupy", "commit", "date", "section"} <= set(records[0])
    assert all(r["family"] == "regular" and r["dram_bytes"] > 0 and r["dram_fraction"] is None for r in records)
    plots = tmp_path / "plots"
    if importlib.util.find_spec("matplotlib") is None:  # the report names the package it needs for plots
        assert main(["report", str(out), "--title", "T", "--plots", str(plots), "--out", str(tmp_path / "r.md")]) == 2
        assert "plots need matplotlib" in capsys.readouterr().err
        return
    assert main(["report", str(out), "--title", "T", "--plots", str(plots), "--out", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "![plots/profile_float64.png](plots/profile_float64.png)" in md and (plots / "profile_float64.png").exists()


def test_bench_unknown_suite_is_one_line():
    proc = run_cli("bench", "--suite", "nope")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown suite 'nope'" in proc.stderr


def test_csv_and_plots(tmp_path, capsys):
    import csv

    out_csv, plot_dir = tmp_path / "r.csv", tmp_path / "plots"
    if importlib.util.find_spec("matplotlib") is None:  # refused before the run, naming the package
        assert main(["bench", "laplace5_8", "--formats", "csr", "--repeat", "1", "--cpu", "--plot", str(plot_dir)]) == 2
        err = capsys.readouterr()
        assert "--plot needs matplotlib" in err.err and "laplace5_8" not in err.out
        return
    assert main(["bench", "laplace5_8", "laplace7_4", "--formats", "csr,ell,dia", "--repeat", "1", "--cpu",
                 "--csv", str(out_csv), "--plot", str(plot_dir)]) == 0
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 10 and {"matrix", "method", "gflops", "commit", "section"} <= set(rows[0])
    assert json.loads(rows[0]["params"]) == {"format": "csr", "executor": "cpu"}
    for name in ("speedup_generated_float64.png", "profile_float64.png", "bandwidth_float64.png"):
        png = (plot_dir / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


@pytest.mark.parametrize("args, message", [
    (["bench", "laplace5_6", "--cpu", "--methods", "cupyx"], "cupyx: GPU only"),
    (["bench", "laplace5_6", "--cpu", "--methods", ",,"], "no method to run"),
    (["bench", "laplace5_6", "--cpu", "--dtype", ","], "--dtype names no dtype"),
    (["bench", "laplace5_6", "--cpu", "--json", "/nonexistent/dir/r.json"], "--json /nonexistent/dir/r.json: not"),
    (["bench", "laplace5_6", "--cpu", "--methods", "nope"], "unknown baseline 'nope'"),
    (["bench", "laplace5_6", "--cpu", "--dtype", "int8"], "unknown dtype 'int8'"),
    (["bench", "laplace5_6", "--cpu", "--repeat", "0"], "--repeat must be at least 1"),
    (["bench", "--cpu", "--overhead"], "--overhead times calls on the GPU: it does not run with --cpu"),
    (["bench", "laplace5_6", "--cpu", "--methods", "reference:nope"], "unknown format 'nope'"),
    (["report", "/nonexistent/r.json"], "No such file or directory"),
    (["bench", "laplace5_6", "--cpu", "--value-dtype", "float16"], "value_dtype=float16 for a float64 matrix"),
    (["bench", "laplace5_6", "--cpu", "--dtype", "float32", "--value-dtype", "float32"], "is the matrix dtype float32"),
])
def test_bench_option_errors(args, message, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_bench_both_dtypes_and_method_selection(tmp_path):
    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr", "--methods", "ours,scipy",
                 "--dtype", "float32,float64", "--repeat", "1", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert sorted((r["dtype"], r["method"]) for r in records) == [
        ("float32", "csr"), ("float32", "scipy"), ("float64", "csr"), ("float64", "scipy")]
    assert all(r["rel_err"] < (1e-6 if r["dtype"] == "float32" else 1e-14) for r in records)


def test_bench_half_complex_and_narrower_values(tmp_path):
    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr", "--methods", "ours,scipy",
                 "--dtype", "float16,complex64", "--repeat", "1", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    got = {(r["dtype"], r["method"]): r for r in records}
    assert got[("float16", "csr")]["rel_err"] < 2e-3 and not got[("float16", "csr")]["note"]
    assert "float16" in got[("float16", "scipy")]["note"]  # SciPy has no half product: named, not run
    assert got[("complex64", "csr")]["rel_err"] < 1e-6 and got[("complex64", "scipy")]["rel_err"] < 1e-6
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr", "--methods", "ours,scipy",
                 "--value-dtype", "float32", "--repeat", "1", "--json", str(out)]) == 0
    records = {r["method"]: r for r in json.loads(out.read_text())}
    assert records["csr"]["params"]["value_dtype"] == "float32" and "value_dtype" not in records["scipy"]["params"]
    assert records["csr"]["rel_err"] < 1e-6 and not records["csr"]["note"]  # flagged at float32's error, not float64's


def test_plot_path_that_is_a_file_fails_before_the_run(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["bench", "laplace5_6", "--cpu", "--plot", str(blocker)]) == 2
    captured = capsys.readouterr()
    assert "exists and is not a directory" in captured.err and "laplace5_6" not in captured.out


@pytest.mark.skipif(cuda_available(), reason="checks the refusal without a GPU")
def test_overhead_without_a_gpu_is_one_line():
    proc = run_cli("bench", "--overhead")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["cocktail: error: --overhead times calls on the GPU: no GPU found (it needs CuPy and a CUDA "
                     "device)"]


def test_overhead_and_no_overhead_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--overhead", "--no-overhead"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_report_and_plots_do_not_import_each_other():
    import ast
    from pathlib import Path

    import cocktail.bench.output

    folder = Path(cocktail.bench.output.__file__).parent
    for name, other in (("report", "plots"), ("plots", "report")):
        tree = ast.parse((folder / f"{name}.py").read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(other == m.rpartition(".")[2] for m in imported), (name, other)


def test_auto_group_on_the_gpu_holds_the_own_kernels_planner():
    import argparse

    from cocktail import cli

    args = argparse.Namespace(formats="csr", all_kernels=True, methods="auto")
    assert [m.name for m in cli._methods(args, on_gpu=True)] == ["cocktail-auto", "cocktail-auto-own",
                                                                  "cocktail-measured"]
    assert [m.name for m in cli._methods(argparse.Namespace(formats="csr", all_kernels=True,
                                                            methods="cocktail-auto-own"), on_gpu=True)] == [
        "cocktail-auto-own"]
    ours = [m.name for m in cli._methods(argparse.Namespace(formats="csr,coo", all_kernels=True, methods="ours"),
                                         on_gpu=True)]
    assert "csr_stream" in ours and not any("cusparse" in name for name in ours)  # the vendor's are baselines


def _interrupt_on(monkeypatch, matrix):
    """Make the benchmark's measurement raise KeyboardInterrupt (Ctrl-C) on ``matrix``; count the others."""
    from cocktail.bench import runner

    measured, real = [], runner._measure

    def measure(method, inputs, rec, settings):
        if rec.matrix == matrix:
            raise KeyboardInterrupt
        measured.append((rec.matrix, method.name))
        real(method, inputs, rec, settings)

    monkeypatch.setattr(runner, "_measure", measure)
    return measured


def test_an_interrupted_bench_keeps_its_records_and_resume_finishes_it(tmp_path, monkeypatch, capsys):
    from cocktail.bench.records import journal

    out = tmp_path / "r.json"
    argv = ["bench", "laplace5_6", "laplace7_4", "--cpu", "--formats", "csr,ell", "--methods", "ours,scipy",
            "--repeat", "1", "--json", str(out)]
    measured = _interrupt_on(monkeypatch, "laplace7_4")
    assert main(argv) == 130
    kept = journal.companion(out)
    assert not out.exists() and "run the same command with --resume" in " ".join(capsys.readouterr().err.split())
    first = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [(e["key"][1], e["key"][3]) for e in first] == measured == [("laplace5_6", "csr"), ("laplace5_6", "ell"),
                                                                       ("laplace5_6", "scipy")]
    assert all(e["record"]["kernel_us"] > 0 and e["record"]["commit"] and e["record"]["date"] for e in first)

    monkeypatch.undo()
    measured = _interrupt_on(monkeypatch, "none")
    assert main(argv + ["--resume"]) == 0
    assert "resuming" in capsys.readouterr().err and not kept.exists()
    assert measured == [("laplace7_4", "csr"), ("laplace7_4", "ell"), ("laplace7_4", "scipy")]  # only what it lacked
    records = json.loads(out.read_text())
    again = {(r["matrix"], r["method"]): r for r in records}
    for e in first:  # the kept records, not measured again
        assert again[("laplace5_6", e["record"]["method"])]["kernel_us"] == e["record"]["kernel_us"]
    assert sorted(again) == sorted((m, f) for m in ("laplace5_6", "laplace7_4") for f in ("csr", "ell", "scipy"))


def test_a_fresh_run_keeps_an_interrupted_runs_records_aside(tmp_path, monkeypatch, capsys):
    from cocktail.bench.records import journal

    out = tmp_path / "r.json"
    argv = ["bench", "laplace5_6", "--cpu", "--formats", "csr", "--methods", "ours", "--repeat", "1", "--json",
            str(out)]
    _interrupt_on(monkeypatch, "laplace5_6")
    assert main(argv) == 130
    monkeypatch.undo()
    assert main(argv) == 0
    aside = journal.companion(out).with_name(journal.companion(out).name + ".old")
    assert aside.exists() and "kept aside" in capsys.readouterr().err and out.exists()
    assert main(["bench", "laplace5_6", "--cpu", "--resume"]) == 2
    assert "--resume continues the run that writes --json PATH" in capsys.readouterr().err


def test_bench_killed_after_its_first_matrix_keeps_it_and_resumes(tmp_path):
    import signal

    from cocktail.bench.records import journal

    out = tmp_path / "r.json"
    args = ["bench", "laplace5_6", "laplace5_400", "--cpu", "--formats", "csr,ell", "--methods", "ours",
            "--repeat", "1", "--json", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "cocktail.cli", *args], stderr=subprocess.PIPE, text=True,
                            stdout=subprocess.DEVNULL)
    try:
        for line in proc.stderr:  # not a terminal: one line per finished matrix
            if re.match(r"(cocktail bench: )?2/4 laplace5_6 float64: 2 of 2 methods ran", line):
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=300)
    assert proc.returncode == -signal.SIGKILL and not out.exists()
    kept = [json.loads(line) for line in journal.companion(out).read_text().splitlines()]
    assert [(e["key"][1], e["key"][3]) for e in kept[:2]] == [("laplace5_6", "csr"), ("laplace5_6", "ell")]
    done = run_cli(*args, "--resume")
    assert done.returncode == 0, done.stderr
    assert f"resuming {out}" in " ".join(done.stderr.split()) and not journal.companion(out).exists()
    assert {(r["matrix"], r["method"]) for r in json.loads(out.read_text())} >= {
        ("laplace5_6", "csr"), ("laplace5_6", "ell"), ("laplace5_400", "csr"), ("laplace5_400", "ell")}


@pytest.mark.exhaustive  # a second whole bench run (-v, 25 s); the first: test_bench_default_runs_and_prints_table
def test_verbose_bench_stays_within_100_columns(monkeypatch, capsys):
    """Wrong answers on most matrices, as a float64 run had when float64 was rounded to float32 without ml_dtypes:
    the CPU target then reads ``miss (6 not measured)``, which made its table 103 columns wide."""
    from cocktail.bench.measuring import methods

    real = methods._host_prepared

    def prepared(A, inputs, label):  # cocktail-auto answers 1e-6 off on the 4 matrices of under 60k rows
        prep = real(A, inputs, label)
        if label == "cocktail-auto" and inputs.S.shape[0] < 60_000:
            right = prep.result
            prep.result = lambda: right() * (1 + 1e-6)
        return prep

    monkeypatch.setattr(methods, "_host_prepared", prepared)
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["bench", "--cpu", "--repeat", "1", "-v"]) == 3
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert max(len(line.rstrip()) for line in stream.splitlines()) <= 100
    text = " ".join(captured.out.split())
    assert "Every SpMV record" in text and "refused: fill" in text  # a wrapped note keeps its words
    assert re.search(r"worst >= 0.833 miss \(4 wrong\)", text)  # wrong, not "not measured" (the verdict was wider)


def test_explain_hint_names_the_option_of_explain(tmp_path, capsys):
    path = write_matrix(tmp_path / "small.mtx", sp.random_array((10, 10), density=0.1, random_state=1))
    assert main(["explain", str(path), "--format", "pkt", "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert "(fill 51.2 > max_fill=20)" in err and err.endswith("or pass a larger max_fill: add --param max_fill=52")
    assert main(["explain", str(path), "--format", "pkt", "--device", "cpu", "--param", "max_fill=52"]) == 0
    assert "max_fill=52" in capsys.readouterr().out  # what the hint said works
    assert main(["explain", str(path), "--format", "ell", "--device", "cpu", "--param", "width=1"]) == 2
    assert "pass --param width=None (or >= 2)" in capsys.readouterr().err


@pytest.mark.parametrize("param, message", [("max_fill", "--param takes KEY=VALUE"),
                                            ("nope=1", "format 'pkt' has no parameter 'nope'")])
def test_explain_param_errors_are_one_line(param, message, capsys):
    assert main(["explain", "laplace5_8", "--device", "cpu", "--format", "pkt", "--param", param]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cocktail: error: ") and message in err[0]


# --- optional packages: named before any work, never a different number ------------------------------------

@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed here")
def test_a_baseline_named_alone_without_its_package_is_refused_before_the_run(capsys):
    assert main(["bench", "laplace5_6", "--methods", "torch", "--repeat", "1"]) == 2
    err = capsys.readouterr().err
    assert "--methods torch needs PyTorch" in err and "pip install torch" in err


def test_distributed_takes_one_dtype_checked_like_the_others(capsys):
    assert main(["bench", "--distributed", "--dtype", "float32,float64"]) == 2
    assert "one dtype per run" in capsys.readouterr().err
    assert main(["bench", "--distributed", "--dtype", "float8"]) == 2
    assert "unknown dtype 'float8'" in capsys.readouterr().err


def test_a_missing_optional_package_is_one_line_naming_it(monkeypatch, capsys):
    from cocktail import cli

    def needs_mpi(args):
        import mpi4py_not_here  # noqa: F401 - the ImportError a command without its extra raises

    monkeypatch.setattr(cli, "_bench", needs_mpi)
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cocktail: error: this needs mpi4py_not_here") and "Traceback" not in err


def test_the_targets_weigh_a_bfloat16_record_without_ml_dtypes():
    """A saved run's bfloat16 records are reported where ml_dtypes is missing (np.dtype('bfloat16') would fail)."""
    from cocktail import precision

    assert precision.itemsize("bfloat16") == 2 and precision.itemsize(np.float64) == 8
    assert all(precision.itemsize(d) == d.itemsize for d in precision.PRODUCT_DTYPES)


# --- wrong answers on every exit path ------------------------------------------------------------------------

def _csr_answers_off(monkeypatch, rows=36):
    """Make the CPU csr executor answer 1e-6 off (past float64's bound) on matrices of ``rows`` rows."""
    from cocktail.bench.measuring import methods

    real = methods._host_prepared

    def prepared(A, inputs, label):
        prep = real(A, inputs, label)
        if label == "csr" and inputs.S.shape[0] == rows:
            right = prep.result
            prep.result = lambda: right() * (1 + 1e-6)
        return prep

    monkeypatch.setattr(methods, "_host_prepared", prepared)


def test_an_interrupted_bench_names_the_wrong_answers_it_kept(tmp_path, monkeypatch, capsys):
    argv = ["bench", "laplace5_6", "laplace7_4", "--cpu", "--formats", "csr,ell", "--methods", "ours,scipy",
            "--repeat", "1", "--json", str(tmp_path / "r.json")]
    _csr_answers_off(monkeypatch)  # laplace5_6: 36 rows
    _interrupt_on(monkeypatch, "laplace7_4")
    assert main(argv) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "1 of the records kept answered wrong (past the error bound of their dtype)" in err


def test_a_report_that_fails_after_the_json_still_says_what_was_wrong(tmp_path, monkeypatch, capsys):
    from cocktail.bench.output import console

    out = tmp_path / "r.json"
    _csr_answers_off(monkeypatch)
    monkeypatch.setattr(console, "print_report", lambda *a, **k: (_ for _ in ()).throw(OSError("disk gone")))
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr", "--repeat", "1", "--json", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert out.exists()  # written before the report
    assert err.index("1 record past its error bound") < err.index("cocktail: error: disk gone")
    monkeypatch.undo()
    from cocktail.bench.output import plots, report

    monkeypatch.setattr(plots, "write_all", lambda *a, **k: (_ for _ in ()).throw(OSError("no plots")))
    assert main(["report", str(out), "--plots", str(tmp_path / "p")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.index("cocktail report: 1 record past its error bound") < err.index("cocktail: error: no plots")
    monkeypatch.setattr(report, "markdown", lambda *a, **k: (_ for _ in ()).throw(OSError("no space")))
    assert main(["report", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.index("cocktail report: 1 record past its error bound") < err.index("cocktail: error: no space")


def test_the_report_module_says_why_it_exits_3(tmp_path, capsys):
    from cocktail.bench.output import report

    records = [{"section": "spmv", "suite": "s", "matrix": "m", "rows": 1, "cols": 1, "nnz": 1, "dtype": "float64",
                "method": "csr", "params": {}, "kernel_us": 1.0, "call_us": 1.0, "kernel_timing": "cpu",
                "rel_err": 1e-6, "note": ""}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    assert report.main([str(path), "--out", str(tmp_path / "r.md")]) == 3
    assert "cocktail report: 1 record past its error bound" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("key, option", [("dtype", "--dtype"), ("format", "--format"), ("device", "--device")])
def test_explain_refuses_a_param_that_is_an_option_of_its_own(key, option, capsys):
    assert main(["explain", "laplace5_8", "--device", "cpu", "--param", f"{key}=float32"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--param {key}=...: {key} is an option of cocktail explain: give {option}" in err[0]
    assert "multiple values" not in err[0]
