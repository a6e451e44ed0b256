"""The console report of ``cocktail bench`` and ``cocktail report --terminal``, from hand-made records."""

from __future__ import annotations

import io
import json
import sys

import pytest

from cocktail.bench.output import console
from cocktail.cli import main

GPU = {"gpu": "Fake GPU 80GB", "copy_gbps": 3000.0, "l2_bytes": 50 * 2**20, "kernel_timing": "graph"}
PLANS = {"a_matrix_with_a_long_name": "DIA(49%) CSR(51%) COO(0%)", "b": "csr_stream(k=8)", "c": "ell"}
#: kernel µs per matrix: cocktail-auto, cusparse-best, csr_vector. Against cuSPARSE: 2, 0.5 and 4
#: (geometric mean 4 ** (1/3) = 1.59), faster on a and c, the fastest of the three on a only.
TIMES = {"a_matrix_with_a_long_name": (10.0, 20.0, 15.0), "b": (30.0, 15.0, 20.0), "c": (10.0, 40.0, 5.0)}


def record(matrix, method, us, dtype="float64", **extra):
    base = {"section": "spmv", "suite": "s", "matrix": matrix, "rows": 1_234_567, "cols": 1_234_567,
            "nnz": 12_345_678, "dtype": dtype, "method": method, "params": {}, "kernel_us": us, "call_us": None if us is None else us + 10,
            "bandwidth_fraction": 0.9, "speedup_cusparse_best": None, "note": ""}
    return {**base, **extra}


def gpu_records(dtype="float64"):
    out = []
    for matrix, (auto, best, csr) in TIMES.items():
        out += [record(matrix, "cocktail-auto", auto, dtype, params={"plan": PLANS[matrix]}, **GPU),
                record(matrix, "cusparse-best", best, dtype, **GPU), record(matrix, "csr_vector", csr, dtype, **GPU),
                record(matrix, "cusparse-csr-alg1", best, dtype, **GPU)]  # stands in cusparse-best: not counted
    return out


def cpu_records():
    out = []
    for matrix, (auto, scipy, csr) in TIMES.items():
        out += [record(matrix, m, t, kernel_timing="cpu", call_us=t, bandwidth_fraction=None, gpu="none (CPU)")
                for m, t in (("cocktail-auto", auto), ("scipy", scipy), ("csr", csr))]
    out.append(record("c", "dia", None, kernel_timing="", bandwidth_fraction=None, note="refused: fill 30 > max_fill 20"))
    return out


def printed(records, **kwargs) -> str:
    buf = io.StringIO()
    console.print_report(records, file=buf, **kwargs)
    return buf.getvalue()


def no_rich(monkeypatch):
    monkeypatch.setitem(sys.modules, "rich.console", None)  # import rich.console raises ImportError


def test_headline_is_computed_from_the_records():
    assert console.headline(gpu_records()) == ("cocktail-auto vs cuSPARSE (best of 4 algorithms), float64: 1.59x "
                                               "as fast (geometric mean), faster on 2 of 3 matrices; fastest of "
                                               "all 3 methods on 1 (within 2%)")
    assert console.headline(cpu_records()) == ("cocktail-auto vs SciPy, float64: 1.59x as fast (geometric mean), "
                                               "faster on 2 of 3 matrices; fastest of the 3 methods that ran (4 "
                                               "tried) on 1 (within 2%)")  # dia refused: tried, did not run
    without_auto = [r for r in gpu_records() if r["method"] != "cocktail-auto"]
    assert console.headline(without_auto).startswith("float64: csr_vector is the fastest of all 2 methods on 2 of 3")


def test_the_fastest_count_allows_timing_noise():
    """cocktail-auto's plan is often a method timed on its own too: 1% apart is a tie, 3% is not."""
    def run(auto_us):
        return [record("m", "cocktail-auto", auto_us, **GPU), record("m", "cusparse-best", 20.0, **GPU),
                record("m", "dia_vi", 10.0, **GPU)]
    assert console.headline(run(10.1)).endswith("fastest of all 3 methods on 1 (within 2%)")
    assert console.headline(run(10.3)).endswith("fastest of all 3 methods on 0 (within 2%)")
    without_auto = [r for r in run(10.1) if r["method"] != "cocktail-auto"]
    without_auto.append(record("m", "csr_vector", 10.1, **GPU))
    assert console.headline(without_auto).startswith("float64: dia_vi is the fastest of all 3 methods on 1 of 1")


def test_a_matrix_without_a_cocktail_auto_time_is_counted_and_shown():
    refused = [r for r in gpu_records() if not (r["matrix"] == "b" and r["method"] == "cocktail-auto")]
    refused.append(record("b", "cocktail-auto", None, note="refused: out of memory", **GPU))
    text = console.headline(refused)
    assert "2.83x as fast (geometric mean), faster on 2 of 2 matrices (1 more without a cocktail-auto time)" in text
    header, rows = console.compact_table(refused)
    assert [row[0] for row in rows] == ["a_matrix_with_a_long_name", "b", "c"]
    assert rows[1][header.index("plan")] == "- (refused: out of memory)"
    merged = [r for r in gpu_records() if not (r["matrix"] == "b" and r["method"] == "cocktail-auto")]
    header, rows = console.compact_table(merged)  # no record at all of cocktail-auto on b
    assert rows[1][:4] == ["b", "1.23M", "12.3M", "- (no record)"]


def test_records_without_sizes_or_summaries_do_not_break_the_report():
    assert console.headline([record("a", "cusparse-csr-alg1", 5.0, **GPU)]) == "nothing measured"
    old = [{k: v for k, v in r.items() if k != "rows"} for r in gpu_records()]
    header, rows = console.compact_table(old)
    assert rows[0][header.index("nonzeros")] == "12.3M" and "-" in rows[0]


def test_machine_line_names_the_gpu_copy_bandwidth_and_l2():
    assert console.machine_line(gpu_records()) == "Fake GPU 80GB; copy bandwidth 3000 GB/s; L2 50 MiB"
    other = [{**r, "gpu": "Other GPU", "copy_gbps": 4000.0, "l2_bytes": None} for r in gpu_records()]
    no_copy = [{**r, "copy_gbps": None} for r in gpu_records()]
    assert console.machine_line(no_copy + gpu_records() + other) == (
        "Fake GPU 80GB; copy bandwidth 3000 GB/s; L2 50 MiB | Other GPU; copy bandwidth 4000 GB/s")
    assert console.machine_line(cpu_records()).startswith("CPU run: each format's host CPU executor")


@pytest.mark.parametrize("use_rich", [True, False])
@pytest.mark.parametrize("columns", [80, 50])
def test_the_report_fits_the_terminal(monkeypatch, use_rich, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    if use_rich:
        pytest.importorskip("rich", reason="rich comes with the bench extra; the plain case runs without it")
    else:
        no_rich(monkeypatch)
    text = printed(gpu_records() + gpu_records("float32"))
    lines = text.splitlines()
    assert max(map(len, lines)) <= columns
    assert ("─" in text) == use_rich  # rich's rule under the header, or the plain one
    headers = [line for line in lines if line.startswith("matrix")]
    assert len(headers) == 2 and all("× cuSPARSE" in h and "µs" in h and "plan" in h for h in headers)
    assert "rows" not in headers[0].split()  # dropped first, then GFLOP/s, nonzeros, of copy
    if columns == 50:
        assert headers[0].split() == ["matrix", "plan", "µs", "×", "cuSPARSE"] and "DIA(49%…" in text
    row_b = next(line for line in lines if line.startswith("b "))
    assert row_b.split()[-1] == "0.5" and ("csr_stream(k=8)" in row_b or "csr_str" in row_b)


def test_fit_drops_in_order_then_shortens():
    header, rows = console.fit(["matrix", "rows", "plan", "x"], [["m", "12", "a_long_plan_name", "1"]], 20, 2,
                               shorten=("plan",), drop=("rows",))
    assert header == ["matrix", "plan", "x"] and rows == [["m", "a_long_p…", "1"]]


def test_the_footnote_defines_the_terms_shown(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    text = printed(gpu_records())
    terms = text.split("Terms:")[1]
    for term in ("geometric mean:", "plan:", "µs: kernel time, median: a CUDA graph replay", "GFLOP/s:",
                 "of copy:", "device-to-device copy bandwidth", "× cuSPARSE: speedup over the fastest of cuSPARSE's"):
        assert term in terms
    assert "ballpark" not in text  # no win/lose summary without -v
    verbose = printed(gpu_records(), verbose=True).split("Terms:")[1]
    assert "ballpark: neither the fastest nor the slowest" in verbose and "Flegar & Anzt Fig. 7" in verbose
    assert "call µs: one synchronous call from Python" in verbose


def test_the_cpu_report_says_what_it_measures_and_drops_empty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = printed(cpu_records())
    assert text.startswith("CPU run: each format's host CPU executor, cocktail-auto and SciPy")
    header = next(line for line in text.splitlines() if line.startswith("matrix"))
    assert "cpu µs" in header and "× SciPy" in header
    assert "of copy" not in header and "cuSPARSE" not in header and "kernel µs" not in header
    full, _ = console.full_table(cpu_records())
    assert "kernel µs" not in full and "of copy" not in full and "× cuSPARSE" not in full and "cpu µs" in full
    gpu_full, _ = console.full_table(gpu_records())
    assert {"kernel µs", "call µs", "of copy"} <= set(gpu_full)


def test_verbose_shows_every_record_and_the_summaries():
    short, full = printed(gpu_records()), printed(gpu_records(), verbose=True)
    assert "csr_vector" not in short and "Every SpMV record" not in short
    assert full.startswith(short.split("\nTerms:")[0].rsplit("\nEvery method", 1)[0])  # the answer first
    assert "Every SpMV record" in full and "csr_vector" in full and "cusparse-csr-alg1" in full
    assert "GFLOP/s statistics (Flegar & Anzt Table 1)" in full and "win" in full


def test_report_terminal_prints_what_bench_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    records = gpu_records()
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    for flags in ([], ["-v"]):
        assert main(["report", str(path), "--terminal", *flags]) == 0
        got = capsys.readouterr().out
        console.print_report(records, verbose=bool(flags))
        assert got == capsys.readouterr().out and got.startswith("Fake GPU 80GB")


def test_terminal_refuses_the_markdown_outputs(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(gpu_records()))
    assert main(["report", str(path), "--terminal", "--out", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("cocktail: error:") == 1 and "--out" in err and not (tmp_path / "r.md").exists()


def test_fit_wraps_a_text_column_before_dropping_or_cutting():
    from cocktail.bench.output.console import fit

    header = ["matrix", "µs", "note"]
    rows = [["m1", "1.0", "refused: fill 12651.5 > max_fill 20"], ["m2", "2.0", ""]]
    got_header, got = fit(header, rows, 30, 2, shorten=("matrix",), drop=("µs",), wrap="note")
    assert got_header == header  # wrapping alone made it fit: nothing dropped
    assert [r[2] for r in got] == ["refused: fill", "12651.5 >", "max_fill 20", ""]
    assert got[1][:2] == got[2][:2] == ["", ""] and max(len("  ".join(r)) for r in got) <= 30


#: The matrices of the CPU suite, their names as long as the suite's.
CPU_MATRICES = ("laplace7_40", "laplace27_40", "fem_spheres_small", "circuit_small", "webbase_small", "lp_small",
                "mip1_small", "in2004_small")


def cpu_run_with_wrong_answers():
    """cocktail-auto and SciPy on the CPU matrices, cocktail-auto answering wrong on 6: what a float64 run printed
    when float64 was rounded to float32 (no ml_dtypes), the CPU target's verdict ``miss (6 not measured)``."""
    out = []
    for i, matrix in enumerate(CPU_MATRICES):
        note = "WRONG: relative error 4.40e-08" if i >= 2 else ""
        out += [record(matrix, "cocktail-auto", 10.0 + i, kernel_timing="cpu", call_us=10.0 + i, note=note,
                       rel_err=4.4e-8 if note else 0.0, bandwidth_fraction=None),
                record(matrix, "scipy", 5.5, kernel_timing="cpu", call_us=5.5, rel_err=0.0, bandwidth_fraction=None)]
    return out


@pytest.mark.parametrize("use_rich", [True, False])
def test_the_verbose_report_of_a_run_with_wrong_answers_fits_100_columns(monkeypatch, use_rich):
    """The targets table was 103 columns wide in an install without ml_dtypes: there the verdict read ``miss (6 not
    measured)``, where the tests' install read ``miss``.  Every text column may wrap now."""
    monkeypatch.setenv("COLUMNS", "100")
    if use_rich:
        pytest.importorskip("rich", reason="rich comes with the bench extra; the plain case runs without it")
    else:
        no_rich(monkeypatch)
    text = printed(cpu_run_with_wrong_answers(), verbose=True)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert "miss (6 wrong)" in text and "WRONG ANSWERS: 6 records" in text


def test_fit_wraps_several_text_columns_side_by_side():
    header = ["target", "n", "verdict"]
    rows = [["call time: cupyx A @ x / cocktail-auto", "8", "miss (6 not measured)"]]
    got_header, got = console.fit(header, rows, 36, 2, shorten=(), wrap=("target", "verdict"))
    assert got_header == header and max(len("  ".join(r)) for r in got) <= 36
    assert [r[0] for r in got] == ["call time: cupyx", "A @ x /", "cocktail-auto"]
    assert [r[2] for r in got] == ["miss (6 not", "measured)", ""]  # beside the target's lines, not after them
