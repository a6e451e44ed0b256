"""The CPU headline's pair, cocktail-auto and SciPy, timed call for call, and the noise band it prints
(issue 42, item 6)."""

from __future__ import annotations

import math

import pytest

from cocktail.bench import runner
from cocktail.bench.measuring import paired
from cocktail.bench.measuring.baselines import Scipy
from cocktail.bench.measuring.methods import AutoMethod, HostMethod
from cocktail.bench.output import console
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.runner import Problem, Settings


def test_the_noise_band_is_the_spread_of_the_ratios_around_their_median():
    assert paired.noise_band([1.5] * 20) == pytest.approx(0.0, abs=1e-12)
    assert paired.noise_band([1.0]) == math.inf  # nothing to tell noise from
    ratios = [1.0, 1.1] * 50  # half the rounds 10% apart: the median is either
    assert paired.noise_band(ratios) == pytest.approx(math.sqrt(1.1) - 1)
    few = [0.9, 1.0, 1.2]  # too few for the order statistics: the whole range
    assert paired.noise_band(few) == pytest.approx(math.expm1(math.log(1.2 / 0.9) / 2))
    assert paired.combined_band([0.02] * 4) == pytest.approx(math.expm1(math.log1p(0.02) / 2))


def test_the_pair_is_timed_in_alternating_rounds():
    order = []
    a = [lambda i=i: order.append(f"a{i}") for i in range(2)]
    b = [lambda i=i: order.append(f"b{i}") for i in range(2)]
    t_a, t_b, band = paired.time_pair(a, b, repeat=2, budget_seconds=10.0)
    assert order[:2] == ["a0", "b0"]  # the warm-up
    rounds = order[2:]
    assert len(rounds) == 2 * paired.ROUNDS_PER_REPEAT * 2 and t_a.samples == t_b.samples == 10
    assert rounds[:6] == ["a0", "b0", "b1", "a1", "a0", "b0"]  # A B, B A, ..., each rotating its inputs
    assert t_a.kernel_timing == t_b.kernel_timing == "cpu" and band >= 0
    order.clear()
    t_a, _, _ = paired.time_pair(a, b, repeat=100, budget_seconds=0.0)
    assert t_a.samples == paired.MIN_ROUNDS  # past the budget at once: the least rounds


def test_the_runner_times_cocktail_auto_and_scipy_together_on_the_cpu():
    methods = [HostMethod("csr"), AutoMethod(device="cpu"), Scipy()]
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], methods, ["float64"], Settings(repeat=2),
                         on_gpu=False)
    assert [r.method for r in records] == ["csr", "cocktail-auto", "scipy"]
    csr, auto, scipy = records
    assert auto.paired_with == "scipy" and scipy.paired_with == "cocktail-auto" and not csr.paired_with
    assert auto.noise_band == scipy.noise_band >= 0 and csr.noise_band is None
    assert auto.samples == scipy.samples == paired.ROUNDS_PER_REPEAT * 2
    assert auto.rel_err < 1e-14 and auto.params["format"] and auto.setup_ms > 0 and not auto.note


def test_a_pair_that_cannot_run_together_is_measured_alone(monkeypatch):
    monkeypatch.setattr(paired, "time_pair", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no")))
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], [AutoMethod(device="cpu"), Scipy()],
                         ["float64"], Settings(repeat=1), on_gpu=False)
    assert [(r.method, r.paired_with, r.note) for r in records] == [("cocktail-auto", "", ""), ("scipy", "", "")]


def _record(matrix, method, us, band):
    return {"section": "spmv", "suite": "s", "matrix": matrix, "rows": 10, "cols": 10, "nnz": 100,
            "dtype": "float64", "method": method, "params": {}, "kernel_us": us, "call_us": us,
            "kernel_timing": "cpu", "note": "", "paired_with": "scipy" if method == "cocktail-auto" else "",
            "noise_band": band}


def test_the_cpu_headline_calls_a_speedup_within_its_band_the_same_speed():
    same = []
    for matrix, auto in (("a", 10.1), ("b", 9.9), ("c", 10.0)):
        same += [_record(matrix, "cocktail-auto", auto, 0.02), _record(matrix, "scipy", 10.0, None)]
    assert console.headline(same) == ("cocktail-auto vs SciPy, float64: 1.00x as fast (geometric mean, ±1.1% timing "
                                      "noise: the same speed), faster on 0 of 3 matrices, slower on 0, the same "
                                      "within timing noise on 3; fastest of all 2 methods on 3 (within 2%)")
    apart = [_record("a", "cocktail-auto", 5.0, 0.02), _record("a", "scipy", 10.0, None),
             _record("b", "cocktail-auto", 10.0, 0.02), _record("b", "scipy", 9.0, None)]
    text = console.headline(apart)
    assert "1.34x as fast (geometric mean, ±1.4% timing noise), faster on 1 of 2 matrices, slower on 1," in text
    assert "timing noise: cocktail-auto and SciPy are timed call for call" in _printed(same)


def _printed(records) -> str:
    import io

    buf = io.StringIO()
    console.print_report(records, file=buf, plain=True)
    return " ".join(buf.getvalue().split())
