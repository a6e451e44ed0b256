"""The end-to-end section on the CPU (the whole job a user runs, the build included): a build and N products, ours
against SciPy; the timing of the marks with a stand-in clock, the budget, wrong answers, the headline's "from which N
on" and the reports."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from cocktail.bench.measuring import end_to_end
from cocktail.bench.measuring.end_to_end_jobs import CPU_METHODS, HOST, Job, Ours, Scipy
from cocktail.bench.measuring.methods import Unavailable
from cocktail.bench.output import console, report, wrong_answers
from cocktail.bench.output import end_to_end as e2e_output
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.records import wrong
from cocktail.bench.records.record import END_TO_END_KEYS, REQUIRED_KEYS
from cocktail.bench.runner import Problem
from cocktail.cli import main

QUICK = end_to_end.Plan(end_to_end.CPU_MARKS, repeats=2, budget_s=5.0)


def _problems():
    return [Problem("generated", "laplace5_12", "test", laplacian(5, 12)),
            Problem("generated", "laplace7_6", "test", laplacian(7, 6))]


@pytest.fixture(scope="module")
def cpu_records():
    return [r.as_dict() for r in end_to_end.run(_problems(), ["float64", "float32"], on_gpu=False, plan=QUICK)]


def test_one_record_per_matrix_dtype_mark_and_method(cpu_records):
    keys = {(r["matrix"], r["dtype"], r["products"], r["build_from"], r["method"]) for r in cpu_records}
    assert len(keys) == len(cpu_records) == 2 * 2 * len(end_to_end.CPU_MARKS) * 2
    assert {r["method"] for r in cpu_records} == {"cocktail-auto", "scipy"}
    assert {r["build_from"] for r in cpu_records} == {HOST} and {r["section"] for r in cpu_records} == {"end-to-end"}
    assert sorted({r["products"] for r in cpu_records}) == list(end_to_end.CPU_MARKS)
    for r in json.loads(json.dumps(cpu_records)):  # JSON-ready
        assert set(REQUIRED_KEYS) | set(END_TO_END_KEYS) <= set(r)
        assert not r["note"] and r["kernel_us"] is None
        assert r["build_us"] > 0 and r["total_us"] > r["build_us"] and r["samples"] == QUICK.repeats
        assert r["rel_err"] < wrong.error_bound(r) and not wrong.is_wrong(r)  # every answer checked
        assert r["params"]["repeats"] == QUICK.repeats and r["params"]["call"]
    ours = [r for r in cpu_records if r["method"] == "cocktail-auto"]
    assert all(r["params"]["format"] == "csr" for r in ours)  # the CPU's fixed rule


def test_totals_grow_with_the_products_and_share_one_build(cpu_records):
    jobs = {}
    for r in cpu_records:
        jobs.setdefault((r["matrix"], r["dtype"], r["method"]), []).append(r)
    for rows in jobs.values():
        rows.sort(key=lambda r: r["products"])
        totals = [r["total_us"] for r in rows]
        assert totals == sorted(totals) and totals[0] < totals[-1]
        assert len({r["build_us"] for r in rows}) == 1  # one build per repetition, every N from it


class CountingJob:
    """A stand-in job: building costs nothing measurable, each product adds one to a count."""

    def __init__(self):
        self.count = 0
        self.job = Job(lambda: "A", self.multiply, {})

    def multiply(self, A, i):
        self.count += 1
        return i


class CountingClock(end_to_end.HostClock):
    """A clock reading the products done: a mark after the N-th product reads N seconds."""

    def __init__(self, counting: CountingJob):
        self.counting = counting

    def mark(self):
        return float(self.counting.count)


def test_a_repetition_times_every_mark_from_one_build():
    counting = CountingJob()
    rep = end_to_end.repetition(counting.job, CountingClock(counting), (1, 10, 100), budget_s=None)
    assert counting.count == 100 and rep.ran == 100 and rep.matrix == "A"
    assert {n: t - rep.build_s for n, t in rep.totals.items()} == {1: 1.0, 10: 10.0, 100: 100.0}
    counting = CountingJob()
    rep = end_to_end.repetition(counting.job, CountingClock(counting), (1, 10, 100), budget_s=None, stop_at=10)
    assert counting.count == 10 and set(rep.totals) == {1, 10}


def test_the_budget_stops_the_products_and_the_notes_say_so():
    plan = end_to_end.Plan((1, 10, 1_000_000), repeats=2, budget_s=0.0)  # every repetition past it at once
    records = end_to_end.run(_problems()[:1], ["float64"], on_gpu=False, plan=plan)
    for r in records:
        if r.products == 1:
            assert r.total_us > r.build_us > 0 and not r.note
        else:
            assert r.total_us is None and r.build_us > 0 and r.params["products_ran"] == 1  # no extrapolation
            assert r.note == ("beyond the time budget: 1 products ran in the budget of 0 s, short of "
                              f"{r.products:,}")
    rows = [r.as_dict() for r in records]
    ((_, head, header, body),) = e2e_output.sections(rows)
    assert body[0][-2:] == ["budget", "budget"] and "0." in body[0][-3]
    assert "(geometric mean of SciPy's time over ours: " in head and "at 10" not in head
    assert "Methods that did not run" not in report.markdown(rows, "t")  # the table says it


class Doubling:
    """A method whose product answers twice the right one."""

    name = "cocktail-auto"

    def job(self, inputs, source, build_from, on_gpu):
        job = Ours().job(inputs, source, build_from, on_gpu)
        right = job.multiply
        return Job(job.build, lambda A, i: 2 * right(A, i), job.params)


class Refusing:
    name = "scipy"

    def job(self, inputs, source, build_from, on_gpu):
        raise Unavailable("scipy: refused here")


def test_a_wrong_answer_is_listed_left_out_and_exits_3():
    records = end_to_end.run(_problems()[:1], ["float64"], on_gpu=False, plan=QUICK,
                             methods=(Doubling(), Scipy()))
    rows = [r.as_dict() for r in records]
    ours = [r for r in rows if r["method"] == "cocktail-auto"]
    assert all(wrong.is_wrong(r) and r["note"].startswith("WRONG") for r in ours)
    assert wrong_answers.exit_status(rows, "bench") == wrong.EXIT_WRONG
    ((_, head, header, body),) = e2e_output.sections(rows)
    assert head.startswith("cocktail-auto against SciPy: not both measured; 1 more where an answer was wrong")
    assert body[0][1] == "wrong" and body[0][3:] == ["wrong"] * len(end_to_end.CPU_MARKS)
    title, _, table_rows = wrong_answers.table(rows)
    assert len(table_rows) == len(end_to_end.CPU_MARKS)


def test_a_method_that_cannot_run_is_recorded_and_the_others_go_on():
    records = end_to_end.run(_problems()[:1], ["float64"], on_gpu=False, plan=QUICK, methods=(Ours(), Refusing()))
    refused = [r for r in records if r.method == "scipy"]
    assert refused and all(r.note == "scipy: refused here" and r.total_us is None for r in refused)
    assert all(r.total_us and not r.note for r in records if r.method == "cocktail-auto")


def test_a_half_dtype_runs_ours_and_says_why_scipy_did_not():
    records = end_to_end.run(_problems()[:1], ["float16"], on_gpu=False, plan=QUICK, methods=CPU_METHODS)
    assert all(r.note.startswith("scipy: no float16") for r in records if r.method == "scipy")


@pytest.mark.parametrize("ratios, answer", [
    ({1: 0.5, 10: 0.8, 100: 1.2, 1000: 1.5}, ("from", [100])),
    ({1: 1.5, 10: 0.8, 100: 1.2}, ("from", [100])),  # faster at the end: from the last crossing on
    ({1: 1.2, 10: 1.1}, ("always", [])),
    ({1: 0.2, 10: 0.9, 100: 1.0}, ("never", [])),  # equal is not faster
    ({1: 1.2, 10: 1.1, 100: 0.9}, ("only", [1, 10])),
])
def test_crossover(ratios, answer):
    assert e2e_output.crossover(ratios) == answer


def _rec(matrix, method, n, total_us, build_us=10.0, dtype="float64", build_from="host", **extra):
    return {"section": "end-to-end", "suite": "s", "matrix": matrix, "rows": 100, "cols": 100, "nnz": 500,
            "dtype": dtype, "method": method,
            "build_from": build_from, "products": n, "build_us": build_us, "total_us": total_us, "rel_err": 0.0,
            "note": "", "params": {}, **extra}


def _job(matrix, ours_build, ours_each, theirs_build, theirs_each, marks=(1, 10, 100, 1000, 10_000),
         base="cupyx", **extra):
    """Records of a whole job: a build then products of a fixed cost each, ours and the baseline's."""
    return ([_rec(matrix, "cocktail-auto", n, ours_build + n * ours_each, ours_build, **extra) for n in marks]
            + [_rec(matrix, base, n, theirs_build + n * theirs_each, theirs_build, **extra) for n in marks])


def test_the_headline_says_from_which_n_on_and_names_the_matrices_never_faster():
    # a: our build 1,000 µs against 10, products 5 µs against 10: faster once N > 198, so from 1,000 on.
    # b: faster per product by little: from 1,000 on (barely).  c: slower products: never.  Their geometric
    # mean is below 1 at 100 (0.56x) and above it from 1,000 on (1.12x).
    records = (_job("a", 1000, 5, 10, 10) + _job("b", 1000, 9, 10, 10) + _job("c", 1000, 11, 10, 10))
    head = e2e_output.headline(records)
    assert head.startswith("cocktail-auto's whole job (build, then N products A @ x) is faster than cupyx's from "
                           "N = 1,000 products on (geometric mean of cupyx's time over ours: ")
    assert head.endswith("; 3 matrices); never faster up to N = 10,000 on 1 of 3 matrices: c")
    only_a = e2e_output.headline(_job("a", 1000, 5, 10, 10))
    assert "from N = 1,000 products on" in only_a and "0.02x at 1, " in only_a and "never" not in only_a


def test_the_headline_always_and_never():
    always = e2e_output.headline(_job("a", 10, 5, 100, 10))
    assert "is faster than cupyx's at every N from 1 on" in always and "never" not in always
    never = e2e_output.headline(_job("a", 1000, 20, 10, 10) + _job("b", 1000, 30, 10, 10))
    assert "is not faster than cupyx's at any N up to 10,000" in never and "matrices: " not in never
    assert e2e_output.headline(_job("a", 10, 5, 100, 10, base="scipy", marks=(1, 10, 100))).startswith(
        "cocktail-auto's whole job (build, then N products A @ x) is faster than SciPy's at every N from 1 on")


def test_the_headline_counts_matrices_past_the_budget():
    capped = [r if r["products"] < 10_000 else {**r, "total_us": None, "note": "beyond the time budget: ..."}
              for r in _job("b", 1000, 5, 10, 10)]
    head = e2e_output.headline(_job("a", 1000, 5, 10, 10) + capped)
    assert "at 10,000 (on 1 matrix); 2 matrices)" in head and "at 1,000; " not in head


def test_the_gpu_table_has_a_row_per_baseline_and_fits_100_columns(capsys):
    records = []
    for matrix in ("laplace27_100", "fem_spheres_small_long_name", "in2004"):
        for build_from in ("host", "device"):
            records += _job(matrix, 12_345.0, 50, 3_000.0, 80, build_from=build_from, kernel_timing="")
            records += [_rec(matrix, "torch", n, 2_000 + n * 60, 2_000, build_from=build_from)
                        for n in (1, 10, 100, 1000, 10_000)]
    sections = e2e_output.sections(records)
    assert [title for title, *_ in sections] == ["end to end from a host matrix, float64",
                                                 "end to end from a device matrix, float64"]
    _, head, header, rows = sections[0]
    assert header == ["matrix", "method", "ours ms", "their ms", "× 1", "× 10", "× 100", "× 1k", "× 10k"]
    assert rows[0][:4] == ["laplace27_100", "cupyx", "12.3", "3"] and rows[1][:4] == ["", "torch", "", "2"]
    assert rows[0][-1] == f"{(3000 + 800_000) / (12_345 + 500_000):.2f}"
    for plain in (True, False):
        console.print_report(records, plain=plain)
        out = capsys.readouterr().out
        assert "end to end from a device matrix, float64: cocktail-auto's whole job" in " ".join(out.split())
        assert max(len(line) for line in out.splitlines()) <= 100
        assert "× N: end to end" in " ".join(out.split())
    md = report.markdown(records, "t")
    assert "## End to end from a host matrix, float64" in md and "| matrix | method | ours ms |" in md


def test_the_cpu_table_names_scipy_in_its_build_column(cpu_records):
    rows = [r for r in cpu_records if r["dtype"] == "float32"]
    ((title, head, header, body),) = e2e_output.sections(rows)
    assert title == "end to end from a host matrix, float32"
    assert header == ["matrix", "ours ms", "SciPy ms", "× 1", "× 10", "× 100"]
    assert [row[0] for row in body] == ["laplace5_12", "laplace7_6"]


@pytest.fixture
def fast_spmv(monkeypatch):
    """``cocktail bench --cpu`` with the SpMV section replaced by one record per problem and dtype, and the end-to-end
    section's run timed."""
    from cocktail.bench import runner
    from cocktail.bench.records.record import Record

    seen = {}

    def fake_spmv(problems, methods, dtypes, settings, on_gpu, **kwargs):
        seen["spmv"] = [p.name for p in problems]
        return [Record(p.suite, p.name, 1, 1, 1, d, "scipy", kernel_us=1.0, call_us=1.0, kernel_timing="cpu")
                for p in problems for d in dtypes]

    real = end_to_end.run

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        records = real(*args, **kwargs)
        seen["end-to-end"] = (time.perf_counter() - t0, {r.matrix for r in records})
        return records

    monkeypatch.setattr(runner, "run", fake_spmv)
    monkeypatch.setattr(end_to_end, "run", timed)
    return seen


def test_the_default_cpu_run_ends_with_the_section_within_its_time(fast_spmv, tmp_path, capsys):
    from cocktail.bench.problems import suites

    out = tmp_path / "r.json"
    assert main(["bench", "--cpu", "--json", str(out)]) == 0
    seconds, matrices = fast_spmv["end-to-end"]
    assert matrices == {m.name for m in suites.get("default-cpu")}
    assert seconds < 20  # about 4 s on 2 cores; the budget is 10 s, loosened for slower CI machines
    records = json.loads(out.read_text())
    assert [r["section"] for r in records][-1] == "end-to-end"
    e2e = [r for r in records if r["section"] == "end-to-end"]
    assert len(e2e) == 8 * 2 * len(end_to_end.CPU_MARKS) and all(r["total_us"] for r in e2e)
    text = " ".join(capsys.readouterr().out.split())
    assert "end to end from a host matrix, float64: cocktail-auto's whole job" in text


def test_no_end_to_end_skips_it_and_end_to_end_runs_it_alone(fast_spmv, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "--cpu", "--no-end-to-end", "--json", str(out)]) == 0
    assert "end-to-end" not in fast_spmv and {r["section"] for r in json.loads(out.read_text())} == {"spmv"}
    assert "end to end" not in capsys.readouterr().out
    fast_spmv.clear()
    assert main(["bench", "--cpu", "--end-to-end", "laplace5_6", "--json", str(out)]) == 0
    assert "spmv" not in fast_spmv and fast_spmv["end-to-end"][1] == {"laplace5_6"}
    assert {r["section"] for r in json.loads(out.read_text())} == {"end-to-end"}
    assert "end to end from a host matrix, float64" in capsys.readouterr().out
    fast_spmv.clear()
    assert main(["bench", "--cpu", "laplace5_6"]) == 0  # not the default suite: no end-to-end section
    assert "end-to-end" not in fast_spmv


@pytest.mark.parametrize("args, message", [
    (["--end-to-end", "--no-end-to-end"], "give one"),
    (["--end-to-end", "--k", "1,4"], "--k applies to the SpMV section"),
])
def test_end_to_end_option_errors(args, message, capsys):
    assert main(["bench", "--cpu", *args]) == 2
    assert message in capsys.readouterr().err


def test_help_documents_the_options(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--end-to-end" in text and "--no-end-to-end" in text


def test_relative_error_matches_the_other_sections():
    from cocktail.bench.measuring.methods import relative_error

    want = np.array([3.0, -4.0, 1e-3])
    got = want * (1 + 1e-7)
    assert end_to_end.relative_error(got, want) == pytest.approx(relative_error(got, want), rel=1e-12)
    assert end_to_end.relative_error(want.astype(complex) * 1j, want.astype(complex)) == pytest.approx(
        relative_error(want.astype(complex) * 1j, want.astype(complex)))
    assert end_to_end.relative_error(np.zeros(2), np.zeros(2)) == 0.0
