"""The call-overhead section and the call-time targets on the CPU: stand-in callables with known
costs, fake records, the verdicts and the report."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from cocktail.bench.output import calltables, console, report, targets
from cocktail.bench.measuring import end_to_end, overhead
from cocktail.bench.measuring import overhead_ways as ways
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.measuring.methods import Prepared, Unavailable
from cocktail.bench.records.record import OVERHEAD_KEYS, REQUIRED_KEYS, Record
from cocktail.bench.runner import Problem
from cocktail.cli import main


def spin(us: float) -> None:
    """Busy-wait ``us`` microseconds (sleeping overshoots by tens of microseconds)."""
    end = time.perf_counter() + us * 1e-6
    while time.perf_counter() < end:
        pass


class FakeStream:
    """Work queued by calls and done at ``synchronize``, as on a GPU stream."""

    def __init__(self):
        self.pending_us = 0.0

    def enqueue(self, us: float) -> None:
        self.pending_us += us

    def synchronize(self) -> None:
        spin(self.pending_us)
        self.pending_us = 0.0


def test_small_matrix_is_deterministic_with_five_distinct_columns_per_row():
    S = overhead.small_matrix()
    assert S.shape == (10_000, 10_000) and S.nnz == 50_000
    assert np.all(np.diff(S.indptr) == 5) and S.has_canonical_format  # sorted, no duplicates
    T = overhead.small_matrix()
    assert np.array_equal(S.indices, T.indices) and np.array_equal(S.data, T.data)
    assert len(np.unique(S.indices)) > 9000  # spread over the columns
    assert overhead.small_problem().name == overhead.SMALL_NAME == "random10k"


def test_back_to_back_divides_a_loop_by_its_calls():
    us, n = overhead.back_to_back(lambda: spin(500), lambda: None, target_seconds=0.02, loops=3)
    assert 500 <= us < 1500  # the upper bounds leave room for a busy machine
    assert 10 <= n <= 80  # a loop of about 20 ms


def test_back_to_back_counts_work_done_at_the_synchronisation():
    stream = FakeStream()
    us, n = overhead.back_to_back(lambda: stream.enqueue(200), stream.synchronize, target_seconds=0.02, loops=3)
    assert 200 <= us < 1000 and n > 10


def test_back_to_back_bounds_the_call_count():
    calls = []
    us, n = overhead.back_to_back(lambda: calls.append(1), lambda: None, target_seconds=0.02, loops=2,
                                  max_calls=1000)
    assert n == 1000 and us > 0


def test_sync_call_is_the_median_of_call_and_sync():
    stream = FakeStream()

    def call():
        spin(100)
        stream.enqueue(300)

    us, samples = overhead.sync_call(call, stream.synchronize, least=30)
    assert samples == 30 and 400 <= us < 1500
    us, samples = overhead.sync_call(lambda: spin(2000), lambda: None, least=1000, budget_seconds=0.05)
    assert 10 <= samples < 40  # stops at the budget, not under 10 samples


class Spinning:
    """A stand-in way of calling whose call busy-waits ``us`` and whose result is the right answer."""

    def __init__(self, name, us, result=True):
        self.name, self.us, self.result = name, us, result

    def prepare(self, inputs):
        answer = inputs.want if self.result else None
        return Prepared(self.name, [lambda: spin(self.us)], lambda: answer, {"call": "spin"}, 0, on_gpu=False)


class Failing:
    def __init__(self, name, exc):
        self.name, self.exc = name, exc

    def prepare(self, inputs):
        raise self.exc


class Wrong:
    name = "wrong"

    def prepare(self, inputs):
        return Prepared(self.name, [lambda: None], lambda: 2 * inputs.want, {}, 0, on_gpu=False)


@pytest.fixture(scope="module")
def fake_run():
    chosen = [Spinning(ways.EMPTY_LAUNCH, 200, result=False), Spinning(ways.EMPTY_GRAPH, 100, result=False),
              Spinning(ways.MATVEC, 300), Spinning(ways.BOUND, 100),
              Failing("torch", Unavailable("torch is not installed")), Failing("cupyx", RuntimeError("boom")), Wrong()]
    problems = [Problem("overhead", "small", "test", laplacian(5, 10)), Problem("default", "big", "test",
                                                                              laplacian(7, 5))]
    return overhead.run(problems, ["float64", "float32"], chosen, on_gpu=False, repeat=10, target_seconds=0.005)


def test_overhead_records_and_floor_ratios(fake_run):
    assert len(fake_run) == 2 * 2 * 7
    text = json.dumps([r.as_dict() for r in fake_run])
    for r in json.loads(text):
        assert set(REQUIRED_KEYS) | set(OVERHEAD_KEYS) <= set(r)
        assert r["section"] == "overhead" and r["kernel_us"] is None and r["call_us"] is None
        if r["method"] in ("torch", "cupyx"):
            assert r["back_to_back_us"] is None and r["over_empty_launch"] is None
            continue
        assert r["back_to_back_us"] > 0 and r["sync_call_us"] > 0 and r["back_to_back_calls"] >= 1
        assert r["samples"] == 10 and r["setup_ms"] >= 0
        for key in ("over_empty_launch", "over_empty_graph", "sync_over_empty_launch", "sync_over_empty_graph"):
            if r["method"] == "wrong":  # a wrong answer's time is no call of the product: no ratio to the floors
                assert r[key] is None
            else:
                assert r[key] > 0
    by = {(r.matrix, r.dtype, r.method): r for r in fake_run}
    launch = by[("small", "float64", ways.EMPTY_LAUNCH)]
    assert launch.over_empty_launch == 1.0 and launch.sync_over_empty_launch == 1.0
    # The ratios are the measured times over the same matrix's and dtype's floors (exact arithmetic;
    # the spinning methods' times themselves vary with the machine's load).
    for (matrix, dtype, method), r in by.items():
        if r.back_to_back_us is None or method == "wrong":
            continue
        empty, graph = by[(matrix, dtype, ways.EMPTY_LAUNCH)], by[(matrix, dtype, ways.EMPTY_GRAPH)]
        assert r.over_empty_launch == pytest.approx(r.back_to_back_us / empty.back_to_back_us)
        assert r.over_empty_graph == pytest.approx(r.back_to_back_us / graph.back_to_back_us)
        assert r.sync_over_empty_launch == pytest.approx(r.sync_call_us / empty.sync_call_us)
    matvec = by[("big", "float32", ways.MATVEC)]
    assert matvec.back_to_back_us >= 300 * 0.9  # it spins 300 us per call: never faster than that
    assert by[("small", "float64", ways.MATVEC)].rel_err == 0.0 and launch.rel_err is None


def test_a_failing_method_becomes_a_record_with_its_reason(fake_run):
    notes = {(r.method, r.note) for r in fake_run if r.note}
    assert notes == {("torch", "torch is not installed"), ("cupyx", "error: RuntimeError: boom"),
                     ("wrong", "WRONG: relative error 1.00e+00")}


def test_ratios_need_the_floors_of_the_same_matrix_and_dtype():
    records = [Record("s", "a", 1, 1, 1, "float64", ways.EMPTY_LAUNCH, back_to_back_us=2.0, sync_call_us=10.0),
               Record("s", "a", 1, 1, 1, "float64", ways.MATVEC, back_to_back_us=5.0, sync_call_us=15.0),
               Record("s", "a", 1, 1, 1, "float32", ways.MATVEC, back_to_back_us=5.0, sync_call_us=15.0),
               Record("s", "a", 1, 1, 1, "float64", ways.EMPTY_GRAPH, note="error: no capture")]
    overhead.add_floor_ratios(records)
    assert records[1].over_empty_launch == 2.5 and records[1].sync_over_empty_launch == 1.5
    assert records[1].over_empty_graph is None and records[2].over_empty_launch is None


def _ov(matrix, method, dtype="float64", **values):
    return {"section": "overhead", "suite": "default", "matrix": matrix, "rows": 10, "cols": 10, "nnz": 50,
            "dtype": dtype, "method": method, "note": "", **values}


def _spmv(matrix, method, call_us, kernel_timing="graph", dtype="float64", note=""):
    return {"section": "spmv", "suite": "default", "matrix": matrix, "rows": 10, "cols": 10, "nnz": 50,
            "dtype": dtype, "method": method, "kernel_us": call_us / 2, "call_us": call_us,
            "kernel_timing": kernel_timing, "note": note}


def fake_records():
    ov = [_ov(m, ways.EMPTY_LAUNCH, back_to_back_us=2.0, sync_call_us=8.0, over_empty_launch=1.0,
              over_empty_graph=2.0) for m in ("a", "b")]
    ov += [_ov(m, ways.EMPTY_GRAPH, back_to_back_us=1.0, sync_call_us=7.0, over_empty_launch=0.5,
               over_empty_graph=1.0) for m in ("a", "b")]
    ov += [_ov("a", ways.MATVEC, back_to_back_us=3.0, sync_call_us=9.0, over_empty_launch=1.5),
           _ov("b", ways.MATVEC, back_to_back_us=4.4, sync_call_us=9.0, over_empty_launch=2.2),
           _ov("a", ways.MATMUL, back_to_back_us=4.0, over_empty_launch=2.0),
           _ov("b", ways.MATMUL, back_to_back_us=4.5, over_empty_launch=2.25),
           _ov("a", ways.BOUND, back_to_back_us=1.1, over_empty_graph=1.1),
           _ov("b", ways.BOUND, note="error: AttributeError: no bind")]
    spmv = [_spmv("a", "cocktail-auto", 10.0), _spmv("a", "cupyx", 40.0, "back-to-back"), _spmv("a", "torch", 12.0),
            _spmv("b", "cocktail-auto", 20.0), _spmv("b", "cupyx", 40.0, "back-to-back"), _spmv("b", "torch", 18.0),
            _spmv("a", "scipy", 50.0, "cpu"), _spmv("c", "cocktail-auto", 5.0, note="WRONG: relative error 1")]
    return ov + spmv


def _verdict(found, target, dtype="float64"):
    (v,) = [v for v in found if v.target == target and v.dtype == dtype]
    return v


def test_overhead_verdicts_from_fake_records():
    found = targets.overhead_verdicts(fake_records())
    matvec = _verdict(found, targets.MATVEC_TARGET)
    assert matvec.worst == ("b", 2.2) and matvec.geomean == pytest.approx((1.5 * 2.2) ** 0.5)
    assert matvec.passed is False and matvec.verdict_text() == "miss"
    matmul = _verdict(found, targets.MATMUL_TARGET)
    assert matmul.passed is True and matmul.verdict_text() == "pass"
    bound = _verdict(found, targets.BOUND_TARGET)
    assert bound.ratios == {"a": 1.1} and bound.missing == ("b",)
    assert bound.passed is False and bound.verdict_text() == "miss (1 not measured)"


def test_overhead_targets_only_on_host_bound_matrices():
    records = fake_records()
    # "b": its own graph replays in 50 us, far above one empty launch (2 us): the kernels set the pace.
    records += [_ov("a", ways.BOUND_GRAPH, back_to_back_us=1.0), _ov("b", ways.BOUND_GRAPH, back_to_back_us=50.0)]
    found = targets.overhead_verdicts(records)
    matvec = _verdict(found, targets.MATVEC_TARGET)
    assert matvec.ratios == {"a": 1.5} and matvec.passed is True
    host = _verdict(found, targets.BOUND_HOST_TARGET)
    assert host.ratios == {"a": 1.1} and host.missing == ("b",)  # b's bound product failed


def test_call_time_verdicts_from_fake_records():
    found = targets.call_time_verdicts(fake_records())
    cupyx = _verdict(found, targets.CUPYX_TARGET)
    assert cupyx.ratios == {"a": 4.0, "b": 2.0} and cupyx.geomean == pytest.approx(8 ** 0.5)
    assert cupyx.passed is True and cupyx.worst == ("b", 2.0)  # the limit applies to the geometric mean
    torch = _verdict(found, targets.TORCH_TARGET)
    assert torch.worst == ("b", 0.9) and torch.passed is False
    assert targets.cpu_verdicts(fake_records()) == []  # cocktail-auto did not run on the CPU here


def test_cpu_verdict_and_the_limit_text():
    records = [_spmv("a", "cocktail-auto", 10.0, "cpu"), _spmv("a", "scipy", 10.0, "cpu"),
               _spmv("b", "cocktail-auto", 11.0, "cpu"), _spmv("b", "scipy", 10.0, "cpu"),
               _spmv("b", "cocktail-auto", 99.0, "cpu", dtype="float32")]
    (v,) = targets.cpu_verdicts(records)  # float32 has no SciPy record: no verdict
    assert v.worst == ("b", pytest.approx(10 / 11)) and v.passed is True  # SciPy's time over ours
    assert targets.CPU_TARGET.limit_text() == "worst >= 0.833" and targets.CUPYX_TARGET.limit_text() == "geomean >= 2.5"
    nothing = targets.Verdict(targets.CPU_TARGET, "float64", {}, ("a",))
    assert nothing.passed is None and nothing.verdict_text() == "not measured" and nothing.geomean is None


def test_tables_and_report_render_the_section(tmp_path, capsys):
    records = fake_records()
    header, rows = calltables.overhead_table(records, "float64")
    assert header[:5] == ["matrix", "rows", "nnz", "empty-launch µs", "empty-graph µs"]
    assert header[-3:] == ["matvec / launch", "A @ x / launch", "bound / empty graph"]
    assert rows[1][:4] == ["b", "10", "50", "2 / 8"] and rows[1][-3:] == ["2.2", "2.25", "-"]
    text = report.markdown(records, "T")
    for title in ("## Call overhead, float64: per-call µs, back to back / one synchronous call",
                  "## Targets: call overhead and the planner", "## Call time (one synchronous call): cocktail-auto against cupyx and "
                  "torch, float64", "## Methods that did not run"):
        assert title in text
    assert "| back to back, host-bound matrices: A.matvec(x, out=y) / empty launch | float64 | 2 | 1.82 | 2.2 (b) | worst <= 2 | miss |" \
        in text
    assert "| call time: cupyx A @ x / cocktail-auto | float64 | 2 | 2.83 | 2 (b) | geomean >= 2.5 | pass |" in text
    assert "| a | 10 | 40 | 12 | 4 | 1.2 |" in text  # auto, cupyx, torch call µs and the two ratios
    assert "| overhead | default | b | float64 | cocktail-bound | error: AttributeError: no bind |" in text
    assert "## GFLOP/s: suite `default`, float64" in text and "cocktail-matvec |" not in text.split("## GFLOP/s")[1]
    console.print_call_tables(records)
    out = capsys.readouterr().out
    assert "Targets: call overhead and the planner" in out and "Call overhead, float64" in out
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    # c's cocktail-auto answered wrong: the report is written all the same, with the wrong answer first, and exits 3
    assert main(["report", str(path), "--title", "Fake", "--out", str(tmp_path / "r.md")]) == 3
    assert (tmp_path / "r.md").read_text() == report.markdown(records, "Fake")
    assert "## Wrong answers" in text and "| c | float64 | cocktail-auto | 1.00e+00 | 1e-09 |" not in text  # no rel_err
    assert "| c | float64 | cocktail-auto | - | 1e-09 |" in text and text.index("## Wrong answers") < text.index("## Matrices")


def test_records_without_a_section_are_spmv_records():
    from cocktail.bench.records import selection

    old = {"matrix": "a", "method": "csr", "dtype": "float64"}
    assert selection.section(old) == "spmv" and selection.spmv_records([old]) == [old]
    assert selection.overhead_records([old, _ov("a", "x")]) == [_ov("a", "x")]
    assert selection.summary_records([_spmv("a", "cusparse-csr-alg1", 1.0), old]) == [old]


@pytest.fixture
def fake_gpu(monkeypatch):
    """``cocktail bench`` as if on a GPU: the sections' runs record what they were given and return fakes."""
    import types

    import cocktail.arrays
    import cocktail.cli
    import cocktail.kernels.device
    from cocktail import provenance
    from cocktail.bench import runner
    from cocktail.bench.problems import suites

    calls = {}

    def fake_overhead(problems, dtypes, **kwargs):
        calls["overhead"] = [p.name for p in problems]
        return [Record(p.suite, p.name, 1, 1, 1, d, ways.EMPTY_LAUNCH, section="overhead", back_to_back_us=1.0,
                       sync_call_us=2.0, over_empty_launch=1.0) for p in problems for d in dtypes]

    def fake_spmv(problems, methods, dtypes, settings, on_gpu, progress=None, stamp=None, journal=None, ks=(1,),
                  all_kernels=False):
        calls["spmv"] = [p.name for p in problems]
        return [Record(p.suite, p.name, 1, 1, 1, d, "cocktail-auto", kernel_us=1.0, call_us=3.0) for p in problems
                for d in dtypes]

    def fake_end_to_end(problems, dtypes, on_gpu, plan=None, **kwargs):
        calls["end-to-end"] = [p.name for p in problems]
        return []

    monkeypatch.setattr(cocktail.arrays, "cuda_available", lambda: True)
    monkeypatch.setattr(overhead, "run", fake_overhead)
    monkeypatch.setattr(end_to_end, "run", fake_end_to_end)
    monkeypatch.setattr(runner, "run", fake_spmv)
    monkeypatch.setattr(suites, "load", lambda m: laplacian(5, 4))
    monkeypatch.setattr(provenance, "provenance", lambda gpu: {"gpu": "fake GPU"})
    monkeypatch.setattr(cocktail.cli, "_settings", lambda args, on_gpu: runner.Settings(copy_gbps=1.0))
    monkeypatch.setattr(cocktail.kernels.device, "current", lambda: types.SimpleNamespace(name="fake", l2_bytes=1))
    return calls


def test_overhead_runs_after_the_default_suite_and_alone(fake_gpu, tmp_path, capsys):
    from cocktail.bench.problems import suites

    default = [m.name for m in suites.DEFAULT]
    out = tmp_path / "r.json"
    assert main(["bench", "--json", str(out)]) == 0
    assert fake_gpu == {"spmv": default, "end-to-end": default, "overhead": [overhead.SMALL_NAME, *default]}
    assert {r["section"] for r in json.loads(out.read_text())} == {"spmv", "overhead"}
    text = capsys.readouterr().out
    assert "Call overhead, float64" not in text and "more tables: add -v" in " ".join(text.split())
    assert main(["report", str(out), "--terminal", "-v"]) == 0  # the section, as bench -v prints it
    assert "Call overhead, float64" in capsys.readouterr().out
    fake_gpu.clear()
    assert main(["bench", "--suite", "default", "--no-overhead"]) == 0
    assert fake_gpu == {"spmv": default, "end-to-end": default} and "Call overhead" not in capsys.readouterr().out
    fake_gpu.clear()
    assert main(["bench", "--overhead", "--dtype", "float32"]) == 0
    assert fake_gpu == {"overhead": [overhead.SMALL_NAME, *default]}
    assert "GPU SpMV on" not in capsys.readouterr().out
    fake_gpu.clear()
    assert main(["bench", "--overhead", "laplace5_6", "random10k"]) == 0
    assert fake_gpu == {"overhead": ["laplace5_6", "random10k"]}
    fake_gpu.clear()
    assert main(["bench", "laplace5_6"]) == 0  # not the default suite: no overhead section
    assert fake_gpu == {"spmv": ["laplace5_6"]}


def _planner_record(matrix, method, us, suite="default", **extra):
    return {"section": "spmv", "suite": suite, "matrix": matrix, "dtype": "float64", "method": method,
            "kernel_us": us, "kernel_timing": "graph", **extra}


def test_planner_verdicts_from_fake_records():
    records = [_planner_record("a", "best-single", 10.0), _planner_record("a", "cocktail-auto", 12.5, analysis_spmvs=40.0),
               _planner_record("a", "cocktail-measured", 10.0),
               _planner_record("b", "best-single", 20.0, suite="cocktail"),
               _planner_record("b", "cocktail-auto", 16.0, suite="cocktail", analysis_spmvs=0.0)]
    found = {v.target: v for v in targets.planner_verdicts(records)}
    auto = found[targets.AUTO_GEOMEAN_TARGET]
    assert auto.ratios == {"a": 0.8, "b": 1.25} and auto.passed  # geomean 1.0 >= 0.9
    assert found[targets.AUTO_WORST_TARGET].passed  # worst 0.8 >= 0.8
    assert found[targets.MEASURED_TARGET].ratios == {"a": 1.0}
    assert found[targets.COCKTAIL_SUITE_TARGET].ratios == {"b": 1.25} and found[targets.COCKTAIL_SUITE_TARGET].passed
    analysis = found[targets.ANALYSIS_TARGET]
    assert analysis.ratios == {"a": 40.0} and not analysis.passed  # a zero (no analysis ran) is left out
