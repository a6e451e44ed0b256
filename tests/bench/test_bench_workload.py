"""The workload section on the CPU (the whole workload's time against the baseline's, with its own target): the list of
50 held-out matrices, read from its specs and built at CPU size; a run of the section on a tiny workload, its
records, answers and failures; the headline, the reports and the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cocktail.bench.measuring import workload
from cocktail.bench.measuring.end_to_end_jobs import Job, Ours, Scipy
from cocktail.bench.measuring.methods import Unavailable
from cocktail.bench.output import console
from cocktail.bench.output import report, wrong_answers
from cocktail.bench.output import workload as workload_output
from cocktail.bench.problems import suites
from cocktail.bench.problems import workload as workload_list
from cocktail.bench.records import wrong
from cocktail.bench.records.record import REQUIRED_KEYS, WORKLOAD_KEYS, Record
from cocktail.cli import main

#: The classes of matrix the workload must span (stencils to saddle points), as the list's groups.
PROMISED = {"stencil", "banded", "block", "fem", "mesh", "graph", "knn", "rectangular", "saddle"}
#: The rows are divided by this in the tests' runs: every matrix a few hundred to a few thousand nonzeros.
TINY = 2000
QUICK = workload.Plan(products=workload.PRODUCTS, repeats=2)
SRC = Path(workload_list.__file__).parent


@pytest.fixture(scope="module", autouse=True)
def _own_cache(tmp_path_factory):
    """Generated matrices go to a cache of this module's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COCKTAIL_CACHE", str(tmp_path_factory.mktemp("matrices")))
        yield


def tiny_problems(count=None):
    return workload.workload_problems(on_gpu=False, shrink=TINY, count=count)


# --------------------------------------------------------------------------- the list


def test_fifty_distinct_matrices_of_the_promised_classes_and_sizes():
    entries = workload_list.MATRICES
    assert len(entries) == 50 and len({m.name for m in entries}) == 50
    assert PROMISED <= {m.group for m in entries}
    assert all(1_000_000 <= m.nnz <= 10_000_000 for m in entries), [(m.name, m.nnz) for m in entries]
    nnz = sorted(m.nnz for m in entries)
    assert nnz[0] < 1_500_000 and nnz[-1] > 8_000_000 and 2_000_000 < nnz[25] < 6_000_000  # spread over 1-10M
    assert {m.family for m in entries} == {"regular", "power-law"}
    assert max(sum(m.group == g for m in entries) for g in PROMISED) <= 10  # a mix, no class dominating
    groups = [m.group for m in entries]
    assert sum(a == b for a, b in zip(groups, groups[1:])) < 10  # shuffled: the classes alternate


def _suite_names() -> set[str]:
    return {m.name for name in suites.names() for m in suites.get(name)}


def _literal_seeds(path: Path) -> list[int]:
    """Every seed a generator module or the suites' definitions write as a number (defaults and arguments)."""
    return [int(s) for s in re.findall(r"\bseed(?::\s*int)?\s*=\s*(\d+)", path.read_text())]


def test_none_is_a_suite_matrix_by_its_spec():
    names = _suite_names()
    entries = workload_list.MATRICES
    assert not names & {m.name for m in entries}
    assert not names & {m.name.removeprefix("wl_") for m in entries}
    suite_laplacians = {tuple(map(int, re.match(r"laplace(\d+)_(\d+)", n).groups())) for n in names
                        if re.match(r"laplace\d+_\d+$", n)}
    assert {(7, 100), (27, 40)} <= suite_laplacians
    ours = [m for m in entries if m.seed is None]
    assert len(ours) == 10 and all(m.group == "stencil" for m in ours)
    for m in ours:
        assert tuple(map(int, re.match(r"wl_laplace(\d+)_(\d+)$", m.name).groups())) not in suite_laplacians
    seeds = [m.seed for m in entries if m.seed is not None]
    assert len(set(seeds)) == len(seeds) == 40 and all(4001 <= s <= 4099 for s in seeds)
    suite_seeds = [s for f in ("suites.py", "holdout.py", "williams.py", "clspmv.py", "generators.py")
                   for s in _literal_seeds(SRC / f)]
    assert len(suite_seeds) > 20 and max(suite_seeds) < 1000


def test_each_seeded_matrix_is_made_from_its_own_seed():
    for m in workload_list.MATRICES:
        if m.seed is None:
            continue
        A, B, C = m.build(TINY), m.make(TINY, m.seed), m.make(TINY, m.seed + 1000)
        assert A.shape == B.shape and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data)
        assert A.shape != C.shape or A.nnz != C.nnz or not np.array_equal(A.data, C.data), m.name


@pytest.fixture(scope="module")
def cpu_size():
    return {m.name: m.build() for m in workload_list.matrices(suites.CPU_SHRINK)}


def test_the_stated_nonzeros_hold_at_cpu_size(cpu_size):
    """The full-size counts are read from the specs; the CPU-size matrices (1/15 of the rows) have about 1/15 of
    them, so that a spec that no longer matches its generator shows here without building the big ones."""
    for m, (name, A) in zip(workload_list.MATRICES, cpu_size.items()):
        assert name == m.name + "_small"
        assert 0.3 <= A.nnz * suites.CPU_SHRINK / m.nnz <= 3, (name, A.nnz, m.nnz)
        assert A.dtype == np.float64 and A.nnz > 0
    assert len({(A.shape, A.nnz) for A in cpu_size.values()}) == 50  # 50 different matrices


def test_none_equals_a_cpu_suite_matrix(cpu_size):
    suite = {(A.shape, A.nnz) for name in ("default-cpu", "holdout-cpu") for A in (m.build() for m in suites.get(name))}
    assert not suite & {(A.shape, A.nnz) for A in cpu_size.values()}


def test_names_and_kinds_at_each_size():
    full, cpu, tiny = (workload_list.matrices(s) for s in (1, suites.CPU_SHRINK, TINY))
    assert [m.name for m in full] == [m.name for m in workload_list.MATRICES]
    assert all(m.name.endswith("_small") and m.kind.endswith("(CPU size)") for m in cpu)
    assert all(m.name.endswith(f"_s{TINY}") for m in tiny)
    assert len(workload_list.matrices(TINY, count=5)) == 5
    assert workload_list.group_of(cpu[0].name) == workload_list.MATRICES[0].group
    assert workload_list.group_of("laplace7_100") is None


def test_load_caches_under_a_name_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    m = workload_list.matrices(TINY, count=1)[0]
    A = workload_list.load(m)
    assert [p.name for p in tmp_path.iterdir()] == [f"workload_{m.name}.v{workload_list.GENERATOR_VERSION}.npz"]
    B = workload_list.load(m)
    assert A.shape == B.shape and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data)


# --------------------------------------------------------------------------- a run on the CPU


@pytest.fixture(scope="module")
def problems():
    return tiny_problems()


@pytest.fixture(scope="module")
def cpu_records(problems):
    return [r.as_dict() for r in workload.run(problems, ["float64", "float32"], on_gpu=False, plan=QUICK)]


def test_one_record_per_method_and_dtype_with_the_promised_fields(cpu_records, problems):
    assert [(r["dtype"], r["method"]) for r in cpu_records] == [
        ("float64", "cocktail-auto"), ("float64", "scipy"), ("float32", "cocktail-auto"), ("float32", "scipy")]
    nnz = [p.S.nnz for p in problems]
    for r in json.loads(json.dumps(cpu_records)):  # JSON-ready
        assert set(REQUIRED_KEYS) | set(WORKLOAD_KEYS) <= set(r)
        assert r["section"] == "workload" and r["suite"] == "workload" and r["matrix"] == "workload50"
        assert r["products"] == 20 and r["build_from"] == "host" and r["nnz"] == sum(nnz)
        assert not r["note"] and r["samples"] == QUICK.repeats and r["kernel_us"] is None
        assert 0 < r["build_us"] < r["total_us"]
        p = r["params"]
        assert p["matrices"] == 50 and (p["nnz_min"], p["nnz_max"]) == (min(nnz), max(nnz))
        assert PROMISED <= set(p["classes"]) and p["products"] == 20 and p["repeats"] == QUICK.repeats
        rows = p["per_matrix"]
        assert [m["matrix"] for m in rows] == [q.name for q in problems] and [m["nnz"] for m in rows] == nnz
        assert all(0 < m["build_us"] < m["total_us"] for m in rows)
        assert sum(m["total_us"] for m in rows) == pytest.approx(r["total_us"], rel=0.5)


def test_every_answer_is_checked_and_right(cpu_records):
    for r in cpu_records:
        assert r["rel_err"] is not None and r["rel_err"] < wrong.error_bound(r) and not wrong.is_wrong(r)
        assert all(m["rel_err"] < wrong.error_bound(r) for m in r["params"]["per_matrix"])
        assert r["rel_err"] == max(m["rel_err"] for m in r["params"]["per_matrix"])
    ours = [r for r in cpu_records if r["method"] == "cocktail-auto"]
    assert all(m["format"] == "csr" for r in ours for m in r["params"]["per_matrix"])  # the CPU's fixed rule


def test_the_decision_cache_is_off_during_the_run(monkeypatch):
    import os

    from cocktail.auto import decisions

    seen = []
    real = workload.measure

    def spy(*args, **kwargs):
        seen.append(os.environ.get("COCKTAIL_DECISIONS"))
        return real(*args, **kwargs)

    monkeypatch.setattr(workload, "measure", spy)
    workload.run(tiny_problems(count=2), ["float64"], on_gpu=False, plan=workload.Plan(products=2, repeats=1))
    assert seen == [decisions.OFF] and os.environ.get("COCKTAIL_DECISIONS") != decisions.OFF


class Doubling(Scipy):
    """SciPy's job answering twice the product on one matrix: a wrong answer there."""

    def job(self, inputs, source, build_from, on_gpu):
        real = super().job(inputs, source, build_from, on_gpu)
        twice = inputs.S.shape[0] == self.rows
        return Job(real.build, real.multiply, real.params, answer=(lambda y: 2 * y) if twice else real.answer)

    def __init__(self, rows):
        object.__setattr__(self, "rows", rows)


def test_a_wrong_answer_on_one_matrix_makes_the_record_wrong_and_names_it():
    problems = tiny_problems(count=4)
    bad = problems[2]
    records = [r.as_dict() for r in workload.run(problems, ["float64"], on_gpu=False, plan=QUICK,
                                                 methods=(Ours(), Doubling(bad.S.shape[0])))]
    theirs = records[1]
    assert wrong.is_wrong(theirs) and theirs["note"].startswith("WRONG") and bad.name in theirs["note"]
    assert wrong_answers.exit_status(records, "bench") == wrong.EXIT_WRONG
    ((_, head, header, body),) = workload_output.sections(records)
    assert "not both measured: scipy answered wrong" in head
    assert body[1][1:4] == ["wrong", "wrong", "wrong"]


class Refusing(Scipy):
    def job(self, inputs, source, build_from, on_gpu):
        raise Unavailable("scipy: refused here")


class FailingOnThird(Scipy):
    count = [0]

    def job(self, inputs, source, build_from, on_gpu):
        self.count[0] += 1
        if self.count[0] == 3:
            raise RuntimeError("boom")
        return super().job(inputs, source, build_from, on_gpu)


def test_a_method_that_cannot_run_or_fails_is_noted_and_the_others_go_on():
    problems = tiny_problems(count=4)
    for other, note in ((Refusing(), "scipy: refused here"), (FailingOnThird(), f"error on {problems[2].name}: "
                                                                               f"RuntimeError: boom")):
        ours, theirs = workload.run(problems, ["float64"], on_gpu=False, plan=QUICK, methods=(Ours(), other))
        assert theirs.note == note and theirs.total_us is None and theirs.build_us is None
        assert ours.total_us and not ours.note
        head = workload_output.headline([ours.as_dict(), theirs.as_dict()])
        assert "not both measured" in head


def test_the_worst_error_keeps_a_nan():
    assert workload.worst([1e-16, float("nan"), 1e-3]) != workload.worst([1e-16, float("nan"), 1e-3])
    assert workload.worst([1e-16, 1e-3]) == 1e-3


# --------------------------------------------------------------------------- the headline and the reports


def _record(method, total, build=1e6, note="", rel_err=0.0):
    return Record("workload", "workload50", 1, 1, 1, "float64", method, section="workload", products=20,
                  build_from="host", total_us=total, build_us=build, note=note, rel_err=rel_err,
                  params={"matrices": 50, "nnz_min": 1_191_016, "nnz_max": 9_244_400}).as_dict()


def test_the_headline_is_ours_against_cupyx_with_the_target():
    faster = [_record("cocktail-auto", 4e6), _record("cupyx", 5e6), _record("torch", 6e6)]
    head = workload_output.headline(faster)
    assert "runs at 1.25x cupyx's speed (faster)" in head and "target at least 1.0x: met" in head
    assert "50 matrices of 1.2M-9.2M nonzeros" in head and "4 s against 5 s" in head
    slower = [_record("cocktail-auto", 8e6), _record("cupyx", 5e6)]
    assert "0.62x cupyx's speed (slower)" in workload_output.headline(slower)
    assert "target at least 1.0x: missed" in workload_output.headline(slower)
    header, rows = workload_output.table(faster)
    assert header == ["method", "builds s", "total s", "× ours"]
    assert rows == [["cocktail-auto", "1", "4", ""], ["cupyx", "1", "5", "1.25"], ["torch", "1", "6", "1.50"]]
    cpu = [_record("cocktail-auto", 2e5), _record("scipy", 1e5)]
    assert "0.50x SciPy's speed" in workload_output.headline(cpu) and "target" not in workload_output.headline(cpu)


def test_the_reports_show_the_section(cpu_records, capsys):
    text = report.markdown(cpu_records, "t")
    assert "## Workload of 50 matrices, float64" in text and "## Workload of 50 matrices, float32" in text
    console.print_report(cpu_records, plain=True)
    out = " ".join(capsys.readouterr().out.split())
    assert "workload of 50 matrices, float64: cocktail-auto's whole workload" in out
    assert "SciPy's speed" in out and "Terms: builds s:" in out


# --------------------------------------------------------------------------- the command line


@pytest.fixture
def tiny_cli(monkeypatch):
    """``cocktail bench --workload`` on the first 5 tiny matrices; the calls of the section's run recorded."""
    seen = []
    real = workload.run

    def run(problems, *args, **kwargs):
        seen.append([p.name for p in problems])
        return real(problems, *args, **kwargs)

    five = tiny_problems(count=5)
    monkeypatch.setattr(workload, "workload_problems", lambda on_gpu: five)
    monkeypatch.setattr(workload, "run", run)
    return seen


def test_workload_runs_only_its_section(tiny_cli, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "--cpu", "--workload", "--repeat", "1", "--dtype", "float32,float64", "--json",
                 str(out)]) == 0
    assert len(tiny_cli) == 1 and len(tiny_cli[0]) == 5
    records = json.loads(out.read_text())
    assert [(r["section"], r["dtype"], r["method"], r["samples"]) for r in records] == [
        ("workload", d, m, 1) for d in ("float32", "float64") for m in ("cocktail-auto", "scipy")]
    assert all(r["commit"] and r["date"] for r in records)  # stamped like every record
    captured = capsys.readouterr()
    text = " ".join(captured.out.split())
    assert "workload of 5 matrices, float64: cocktail-auto's whole workload" in text
    assert "1 timed pass, their median" in " ".join(captured.err.split())


def test_the_default_run_leaves_the_workload_out(tiny_cli, monkeypatch, tmp_path):
    from cocktail.bench import runner
    from cocktail.bench.measuring import end_to_end

    monkeypatch.setattr(runner, "run", lambda problems, methods, dtypes, *a, **k: [
        Record(p.suite, p.name, 1, 1, 1, d, "scipy", kernel_us=1.0, call_us=1.0, kernel_timing="cpu")
        for p in problems for d in dtypes])
    monkeypatch.setattr(end_to_end, "run", lambda *a, **k: [])
    assert main(["bench", "--cpu", "--json", str(tmp_path / "r.json")]) == 0
    assert tiny_cli == []


@pytest.mark.parametrize("args, message", [
    (["--end-to-end"], "--end-to-end runs another: give one"),
    (["--overhead"], "--overhead runs another: give one"),
    (["--k", "1,4"], "--k applies to the SpMV section"),
    (["laplace5_6"], "give no matrices and no --suite"),
    (["--suite", "holdout-cpu"], "give no matrices and no --suite"),
])
def test_workload_option_errors(tiny_cli, args, message, capsys):
    assert main(["bench", "--cpu", "--workload", *args]) == 2
    assert message in capsys.readouterr().err
    assert tiny_cli == []


def test_help_documents_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--workload" in text and "50 held-out matrices" in text
