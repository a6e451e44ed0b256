"""The harness's own arithmetic and schema: timing sample counts, records, cusparse-best, speedups."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cocktail import timing
from cocktail.bench.measuring import baselines, methods
from cocktail.bench import runner
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.records.record import REQUIRED_KEYS, Record
from cocktail.bench.runner import Problem, Settings


def test_sample_count_is_adaptive_and_bounded():
    assert timing.sample_count(1.0, 100, 0.05) == 100  # long samples: the minimum
    assert timing.sample_count(1e-4, 100, 0.05) == 501  # short ones until they add up to 50 ms
    assert timing.sample_count(1e-9, 100, 0.05) == 100 * timing.MAX_REPEAT_FACTOR
    assert timing.sample_count(0.0, 7, 0.05) == 7 * timing.MAX_REPEAT_FACTOR


def test_time_cpu_rotates_calls_and_takes_the_median():
    seen = []
    calls = [(lambda i=i: seen.append(i)) for i in range(3)]
    t = timing.time_cpu(calls, repeat=7, budget_seconds=10.0)
    assert seen == [0] + [0, 1, 2, 0, 1, 2, 0]  # one warm-up, then rotation
    assert t.samples == 7 and t.kernel_timing == "cpu" and t.kernel_us == t.call_us > 0


def test_inputs_reference_and_error():
    S = laplacian(5, 6)
    inputs = methods.Inputs.create(S, "float32", on_gpu=False)
    assert len(inputs.x_host) == methods.X_BUFFERS and inputs.x_host[0].dtype == np.float32
    assert not np.array_equal(inputs.x_host[0], inputs.x_host[1])
    np.testing.assert_allclose(inputs.want, S @ inputs.x_host[0].astype(np.float64))
    assert inputs.rel_err(inputs.want) == 0.0
    assert inputs.rel_err(2 * inputs.want) == pytest.approx(1.0)


def _cpu_records(dtypes=("float64",)):
    problems = [Problem("generated", "laplace5_8", "test", laplacian(5, 8))]
    chosen = [methods.HostMethod("csr"), methods.ReferenceMethod("ell"), methods.AutoMethod(device="cpu"),
              baselines.Scipy()]
    return runner.run(problems, chosen, list(dtypes), Settings(repeat=2), on_gpu=False)


def test_records_follow_the_json_schema():
    records = [r.as_dict() for r in _cpu_records(("float32", "float64"))]
    text = json.dumps(records)  # every value is JSON-serialisable
    for r in json.loads(text):
        assert set(REQUIRED_KEYS) <= set(r)
        assert r["suite"] == "generated" and r["matrix"] == "laplace5_8"
        assert (r["rows"], r["cols"], r["nnz"]) == (64, 64, 288)
        assert r["dtype"] in ("float32", "float64") and isinstance(r["params"], dict)
        assert r["kernel_us"] > 0 and r["call_us"] > 0
        assert r["gflops"] == pytest.approx(2 * 288 / (r["kernel_us"] * 1e-6) / 1e9)
        assert r["gbps"] == pytest.approx(r["spmv_bytes"] / (r["kernel_us"] * 1e-6) / 1e9)
        assert r["copy_gbps"] is None and r["note"] == "" and r["section"] == "spmv"
        assert r["rel_err"] < (1e-6 if r["dtype"] == "float32" else 1e-14)
    assert [r["method"] for r in records] == ["csr", "reference:ell", "cocktail-auto", "scipy"] * 2
    assert [r["params"].get("executor") for r in records[:3]] == ["cpu", "reference", "cpu"]
    for r in records:  # the DRAM model of CSR (int32): values, indices, pointers, then x and y once
        if r["method"] in ("csr", "scipy"):
            val = np.dtype(r["dtype"]).itemsize
            assert r["dram_bytes"] == 288 * val + 288 * 4 + 65 * 4 + 64 * val + 64 * val
        assert r["dram_bytes"] > 0 and r["dram_fraction"] is None and r["l2_bytes"] is None  # no GPU
        assert r["family"] == ""


def test_records_carry_the_problems_family():
    problem = Problem("generated", "laplace5_4", "test", laplacian(5, 4), "regular")
    (rec,) = runner.run([problem], [methods.HostMethod("csr")], ["float64"], Settings(repeat=1), on_gpu=False)
    assert rec.family == "regular" and rec.kind == "test"


def test_refused_format_is_recorded_with_its_reason():
    import scipy.sparse as sp

    S = sp.random_array((200, 200), density=0.02, random_state=3).tolil()
    S[0, :] = 1.0  # one full row: ELL would pad every row to 200
    records = runner.run([Problem("file", "m", "test", sp.csr_array(S))], [methods.ReferenceMethod("ell")],
                         ["float64"], Settings(repeat=1), on_gpu=False)
    assert records[0].kernel_us is None and records[0].note.startswith("refused: fill")


def test_a_failing_method_is_recorded_not_raised():
    class Broken:
        name = "broken"
        needs_gpu = False

        def prepare(self, inputs):
            raise RuntimeError("boom")

    records = runner.run([Problem("g", "l", "k", laplacian(5, 4))], [Broken()], ["float64"], Settings(repeat=1),
                         on_gpu=False)
    assert records[0].note == "error: RuntimeError: boom" and records[0].kernel_us is None


def _rec(matrix, method, us):
    return Record("s", matrix, 10, 10, 100, "float64", method, kernel_us=us, params={"alg": method})


def test_cusparse_best_is_the_fastest_algorithm_per_problem():
    records = [_rec("a", "cusparse-csr-alg1", 5.0), _rec("a", "cusparse-csr-alg2", 3.0),
               _rec("a", "cusparse-coo-alg1", None), _rec("b", "cusparse-coo-alg2", 7.0), _rec("a", "csr_vector", 1.0)]
    best = {r.matrix: r for r in baselines.best_of_cusparse(records)}
    assert set(best) == {"a", "b"}
    assert best["a"].method == baselines.CUSPARSE_BEST and best["a"].kernel_us == 3.0
    assert best["a"].params["alg"] == "cusparse-csr-alg2" and best["b"].kernel_us == 7.0
    assert records[1].method == "cusparse-csr-alg2"  # the per-algorithm record is left as it was


def test_speedups_against_cusparse_best_and_cupyx():
    records = [_rec("a", "cusparse-best", 6.0), _rec("a", "cupyx", 12.0), _rec("a", "ell", 3.0),
               _rec("b", "ell", 2.0), _rec("a", "csr", None)]
    runner.add_speedups(records)
    assert records[2].speedup_cusparse_best == 2.0 and records[2].speedup_cupyx == 4.0
    assert records[0].speedup_cusparse_best == 1.0
    assert records[3].speedup_cusparse_best is None and records[4].speedup_cupyx is None


def test_baseline_registry():
    assert baselines.names() == ["cusparse-coo-alg1", "cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo-alg2",
                                 "cupyx", "torch", "scipy"]
    assert baselines.get("cupyx").needs_gpu and not baselines.get("scipy").needs_gpu
    with pytest.raises(ValueError, match="unknown baseline 'nope'; baselines: cusparse-coo-alg1"):
        baselines.get("nope")


def test_baseline_byte_models_match_the_formats():
    from cocktail import SparseMatrix

    S = laplacian(7, 6)
    assert methods.csr_model(S).spmv_bytes() == SparseMatrix(S, format="csr", device="cpu").storage.spmv_bytes()
    assert methods.coo_model(S).spmv_bytes() == SparseMatrix(S, format="coo", device="cpu").storage.spmv_bytes()
    assert methods.csr_model(S, np.int64).spmv_bytes() > methods.csr_model(S).spmv_bytes()
    for l2 in (None, 0):
        assert methods.csr_model(S).dram_bytes(l2) == SparseMatrix(S, format="csr", device="cpu").storage.dram_bytes(l2)
        assert methods.coo_model(S).dram_bytes(l2) == SparseMatrix(S, format="coo", device="cpu").storage.dram_bytes(l2)
    m, nnz = S.shape[0], S.nnz
    assert methods.csr_model(S, np.int64).dram_bytes() - methods.csr_model(S).dram_bytes() == 4 * (nnz + m + 1)


def test_close_runs_when_timing_fails():
    closed = []

    class Failing:
        name = "failing"
        needs_gpu = False

        def prepare(self, inputs):
            def boom():
                raise RuntimeError("no")
            return methods.Prepared("failing", [boom], boom, {}, 1, on_gpu=False, close=lambda: closed.append(1))

    records = runner.run([Problem("g", "l", "k", laplacian(5, 4))], [Failing()], ["float64"], Settings(repeat=1),
                         on_gpu=False)
    assert closed == [1] and records[0].note == "error: RuntimeError: no"


def test_refused_and_measured_records_share_a_label(monkeypatch):
    assert methods.ReferenceMethod("ell").name == "reference:ell" and methods.HostMethod("ell").name == "ell"
    assert methods.AutoMethod().needs_gpu and not methods.AutoMethod(device="cpu").needs_gpu
    assert methods.AutoMethod(device="cpu").name == "cocktail-auto"
    assert not methods.HostMethod("csr").needs_gpu and not methods.ReferenceMethod("csr").needs_gpu
    assert methods.KernelMethod("csr", "csr_merge").name == "csr_merge"
    assert methods.KernelMethod("sell").name == "sell"
    monkeypatch.setattr("cocktail.kernels.for_format", lambda name: [])
    assert methods.KernelMethod("sell").name == "reference:sell"  # no kernel: the reference executor runs


def test_flagged_results_never_become_cusparse_best():
    records = [_rec("a", "cusparse-csr-alg1", 1.0), _rec("a", "cusparse-csr-alg2", 3.0)]
    records[0].note = "WRONG: relative error 1.00e+00"
    assert baselines.best_of_cusparse(records)[0].kernel_us == 3.0


def test_best_single_is_the_fastest_of_our_records():
    from cocktail.bench.records.record import Record
    from cocktail.bench.runner import BEST_SINGLE, best_single

    def rec(matrix, method, us, note="", dtype="float64"):
        r = Record("s", matrix, 10, 10, 50, dtype, method)
        r.kernel_us, r.note, r.params = us, note, {"format": method}
        return r

    records = [rec("a", "csr_vector", 5.0), rec("a", "dia", 3.0), rec("a", "ell", 1.0, note="WRONG: relative error 1"),
               rec("b", "coo_atomic", 7.0), rec("b", "hyb", None, note="refused: fill 30 > max_fill 20"),
               rec("a", "dia", 9.0, dtype="float32")]
    best = {(r.matrix, r.dtype): r for r in best_single(records)}
    assert set(best) == {("a", "float64"), ("b", "float64"), ("a", "float32")}
    a = best[("a", "float64")]
    assert a.method == BEST_SINGLE and a.kernel_us == 3.0 and a.params["best_of"] == "dia"
    assert best[("b", "float64")].params["best_of"] == "coo_atomic"
    assert records[1].method == "dia"  # the originals are untouched (copies)


class _FakeStream:
    """A stream whose capture the test drives: ``end_capture`` returns a graph, or raises when ``invalid``."""

    def __init__(self, invalid: bool = False):
        self.invalid, self.capturing, self.ended = invalid, False, 0

    def begin_capture(self):
        self.capturing = True

    def end_capture(self):
        self.capturing, self.ended = False, self.ended + 1
        if self.invalid:
            raise OSError("cudaErrorStreamCaptureInvalidated")
        return "graph"


def _refuses():
    raise ValueError("no capture here")


def test_capture_returns_the_graph_or_none_and_never_leaves_the_stream_capturing():
    s = _FakeStream()
    assert timing.capture([lambda: None], s) == "graph" and not s.capturing
    s = _FakeStream()
    assert timing.capture([_refuses], s) is None and not s.capturing and s.ended == 1
    s = _FakeStream(invalid=True)
    assert timing.capture([lambda: None], s) is None and not s.capturing


def test_a_strict_capture_raises_the_calls_own_error_and_names_an_invalidated_one():
    s = _FakeStream()
    with pytest.raises(ValueError, match="no capture here"):
        timing.capture([_refuses], s, strict=True)
    assert not s.capturing and s.ended == 1
    with pytest.raises(RuntimeError, match="invalidated") as info:
        timing.capture([lambda: None], _FakeStream(invalid=True), strict=True)
    assert isinstance(info.value.__cause__, OSError)  # CUDA's error is kept


def test_an_interrupt_during_capture_ends_it_and_propagates():
    def interrupted():
        raise KeyboardInterrupt

    s = _FakeStream()
    with pytest.raises(KeyboardInterrupt):
        timing.capture([interrupted], s)
    assert not s.capturing and s.ended == 1
