"""The CPU headline's pair, cocktail-auto and SciPy, timed call for call, and the 95% interval it prints (so
that the headline's speedup over SciPy says how sure it is)."""

from __future__ import annotations

import io
import json
import math
import random

import pytest
from scipy import stats

from cocktail.bench import runner
from cocktail.bench.measuring import paired
from cocktail.bench.measuring.baselines import Scipy
from cocktail.bench.measuring.methods import CPU_AUTO, AutoMethod, HostMethod
from cocktail.bench.output import console
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.records.journal import Journal
from cocktail.bench.runner import Problem, Settings


@pytest.mark.parametrize("n, low", [(5, None), (6, 0), (10, 1), (20, 5), (50, 17), (100, 39)])
def test_the_interval_of_the_median_is_the_exact_binomial_one(n, low):
    """The order statistics ``low`` and ``n - 1 - low`` (from 0): the largest ``low`` whose binomial tail is at most
    2.5%; the normal approximation took 18 at n = 50 (93.5%) and 40 at n = 100 (94.3%)."""
    assert paired.order_index(n) == low
    if low is not None:
        assert 1 - 2 * stats.binom.cdf(low, n, 0.5) >= 0.95 > 1 - 2 * stats.binom.cdf(low + 1, n, 0.5)


def test_the_order_index_agrees_with_scipy_for_every_count():
    for n in range(1, 301):
        low = paired.order_index(n)
        if low is None:
            assert stats.binom.cdf(0, n, 0.5) > 0.025
        else:
            assert stats.binom.cdf(low, n, 0.5) <= 0.025 < stats.binom.cdf(low + 1, n, 0.5)


def test_too_few_samples_have_no_interval():
    """Three samples' whole range holds the median 75% of the time: no 95% interval under 6 samples."""
    assert paired.median_interval([0.9, 1.0, 1.2]) is None
    assert paired.median_interval([1.0] * 5) is None
    assert paired.median_interval([3, 1, 2, 6, 5, 4]) == (1, 6)
    assert paired.median_interval(list(range(50))) == (17, 32)


@pytest.mark.parametrize("n", [6, 7, 20, 50, 100])
def test_the_interval_holds_the_median_95_percent_of_the_time(n):
    """By simulation (fixed seed) on a skewed distribution: the coverage is the exact binomial one."""
    rng = random.Random(20261128 + n)
    trials = 4000
    held = 0
    for _ in range(trials):
        samples = [rng.lognormvariate(0.0, 0.5) for _ in range(n)]  # median exp(0) = 1
        low, high = paired.median_interval(samples)
        held += low <= 1.0 <= high
    exact = 1 - 2 * stats.binom.cdf(paired.order_index(n), n, 0.5)
    error = 4 * math.sqrt(exact * (1 - exact) / trials)
    assert exact >= 0.95 and abs(held / trials - exact) <= error


def test_the_combined_interval_adds_log_half_widths_in_quadrature():
    mean, low, high = paired.combined_interval([(1.0, 1 / 1.02, 1.04)] * 4)
    assert mean == pytest.approx(1.0)
    assert low == pytest.approx(1.02 ** -0.5) and high == pytest.approx(1.04 ** 0.5)  # sqrt(4 d^2) / 4 = d / 2
    assert paired.combined_interval([(1.0, 0.9, 1.1), (2.0, None, None)]) is None
    assert paired.combined_interval([]) is None


class FakeClock:
    """A clock the calls advance: each costs its method's time, 3% more when the other method ran just before
    (its caches cold), the order effect an alternating design left in its samples."""

    def __init__(self):
        self.now, self.last, self.order = 0.0, None, []

    def perf_counter(self) -> float:
        return self.now

    def calls(self, name: str, seconds: float, count: int = 2) -> list:
        def call(i):
            self.now += seconds * (1.03 if self.last not in (None, name) else 1.0)
            self.last = name
            self.order.append(f"{name}{i}")

        return [lambda i=i: call(i) for i in range(count)]


def test_a_sample_is_an_ab_round_and_a_ba_round(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(paired, "time", clock)
    timed = paired.time_pair(clock.calls("a", 1e-3), clock.calls("b", 1e-3), repeat=2, budget_seconds=10.0)
    assert clock.order[:2] == ["b0", "a0"]  # the warm-up, A last: A's first call follows one of its own
    rounds = clock.order[2:]
    assert len(rounds) == 4 * paired.PAIRS_PER_REPEAT * 2 and timed.a.samples == timed.b.samples == 6
    assert rounds[:8] == ["a0", "b0", "b1", "a1", "a0", "b0", "b1", "a1"]  # A B B A, each rotating its inputs
    # the same method twice: the order effect cancels in every sample, and the interval is a point at 1
    assert timed.ratio == pytest.approx(1.0) and timed.low == pytest.approx(1.0) and timed.high == pytest.approx(1.0)
    # each method's time is that of its calls after its own, as a method timed alone is timed
    assert timed.a.kernel_us == pytest.approx(1e3) and timed.b.kernel_us == pytest.approx(1e3)


def test_a_real_difference_survives_the_order_effect(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(paired, "time", clock)
    timed = paired.time_pair(clock.calls("a", 0.9e-3), clock.calls("b", 1e-3), repeat=10, budget_seconds=10.0)
    assert timed.ratio == pytest.approx(1 / 0.9) and timed.low == pytest.approx(1 / 0.9)
    assert timed.a.kernel_us == pytest.approx(900) and timed.a.kernel_timing == "cpu"


def test_the_least_samples_have_an_interval():
    calls = [lambda: None]
    timed = paired.time_pair(calls, calls, repeat=100, budget_seconds=0.0)
    assert timed.a.samples == paired.MIN_PAIRS == 6  # past the budget at once: the least samples
    assert timed.low is not None and timed.low <= timed.ratio <= timed.high


def test_the_runner_times_cocktail_auto_and_scipy_together_on_the_cpu():
    methods = [HostMethod("csr"), AutoMethod(device="cpu"), Scipy()]
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], methods, ["float64"], Settings(repeat=2),
                         on_gpu=False)
    assert [r.method for r in records] == ["csr", "cocktail-auto", "scipy"]
    csr, auto, scipy = records
    assert auto.paired_with == "scipy" and scipy.paired_with == "cocktail-auto" and not csr.paired_with
    assert auto.paired_low <= auto.paired_ratio <= auto.paired_high and csr.paired_ratio is None
    assert scipy.paired_ratio == pytest.approx(1 / auto.paired_ratio)
    assert (scipy.paired_low, scipy.paired_high) == pytest.approx((1 / auto.paired_high, 1 / auto.paired_low))
    assert auto.samples == scipy.samples == paired.MIN_PAIRS
    assert auto.rel_err < 1e-14 and auto.params["format"] and auto.setup_ms > 0 and not auto.note


def test_the_headline_pair_is_the_cpu_auto_method():
    """Matched by the method object: a CPU AutoMethod of another name is no headline pair."""
    keys = ["k1", "k2", "k3"]
    other = AutoMethod("cocktail-other", device="cpu")
    assert runner._headline_pair([other, Scipy()], keys[:2], {}) == []
    assert runner._headline_pair([other, CPU_AUTO, Scipy()], keys, {}) == [(CPU_AUTO, "k2"), (Scipy(), "k3")]


def test_a_pair_that_cannot_run_together_is_measured_alone(monkeypatch):
    monkeypatch.setattr(paired, "time_pair", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no")))
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], [AutoMethod(device="cpu"), Scipy()],
                         ["float64"], Settings(repeat=1), on_gpu=False)
    assert [(r.method, r.paired_with, r.note) for r in records] == [("cocktail-auto", "", ""), ("scipy", "", "")]


def test_a_half_dtype_plans_cocktail_auto_once(monkeypatch):
    """SciPy refuses float16 at once: it is prepared first, so cocktail-auto is not planned for the pair and
    then again alone."""
    prepared = []
    real = AutoMethod.prepare
    monkeypatch.setattr(AutoMethod, "prepare", lambda self, inputs: prepared.append(self) or real(self, inputs))
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], [CPU_AUTO, Scipy()], ["float16"],
                         Settings(repeat=1), on_gpu=False)
    assert len(prepared) == 1
    auto, scipy = records
    assert auto.kernel_us and not auto.note and not auto.paired_with and scipy.note.startswith("scipy: no float16")


def test_an_error_after_the_pair_is_timed_is_recorded(monkeypatch):
    """An error filling the records (or stamping them) is the records' note, not the end of the run."""
    real = runner._fill

    def failing(rec, *args, **kwargs):
        if rec.method == "scipy":
            raise RuntimeError("no byte model")
        return real(rec, *args, **kwargs)

    monkeypatch.setattr(runner, "_fill", failing)
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], [CPU_AUTO, Scipy()], ["float64"],
                         Settings(repeat=1), on_gpu=False, stamp={"gpu": ""})
    auto, scipy = records
    assert auto.paired_ratio and not auto.note
    assert scipy.note == "error: RuntimeError: no byte model" and scipy.kernel_us is None


class Interrupting:
    """A method whose preparation is a Ctrl-C."""

    name = "interrupting"
    needs_gpu = False

    def prepare(self, inputs):
        raise KeyboardInterrupt


def test_both_records_of_the_pair_are_kept_as_soon_as_they_are_measured(tmp_path):
    """SciPy's turn comes after the methods between: an interrupt there keeps its record all the same."""
    journal = Journal(tmp_path / "r.json")
    with pytest.raises(KeyboardInterrupt):
        runner.run([Problem("g", "l", "k", laplacian(5, 8))], [CPU_AUTO, Interrupting(), Scipy()], ["float64"],
                   Settings(repeat=1), on_gpu=False, journal=journal)
    journal.close(finished=False)
    kept = [json.loads(line)["record"] for line in journal.path.read_text().splitlines()]
    assert [(r["method"], r["paired_with"]) for r in kept] == [("cocktail-auto", "scipy"), ("scipy", "cocktail-auto")]
    resumed = Journal(tmp_path / "r.json", resume=True)
    records = runner.run([Problem("g", "l", "k", laplacian(5, 8))], [CPU_AUTO, HostMethod("csr"), Scipy()],
                         ["float64"], Settings(repeat=1), on_gpu=False, journal=resumed)
    resumed.close(finished=True)
    assert [r.method for r in records] == ["cocktail-auto", "csr", "scipy"] and records[2].paired_ratio


def _record(matrix, method, us, ratio=None, low=None, high=None, paired_with=None):
    return {"section": "spmv", "suite": "s", "matrix": matrix, "rows": 10, "cols": 10, "nnz": 100,
            "dtype": "float64", "method": method, "params": {}, "kernel_us": us, "call_us": us,
            "kernel_timing": "cpu", "note": "", "rel_err": 0.0,
            "paired_with": paired_with if paired_with is not None else "scipy" if method == "cocktail-auto" else "",
            "paired_ratio": ratio, "paired_low": low, "paired_high": high}


def test_the_cpu_headline_gives_the_interval_and_calls_it_the_same_speed_when_it_holds_1():
    same = []
    for matrix, ratio in (("a", 0.99), ("b", 1.01), ("c", 1.0)):
        same += [_record(matrix, "cocktail-auto", 10.0, ratio, ratio - 0.02, ratio + 0.02),
                 _record(matrix, "scipy", 10.0)]
    assert console.headline(same) == ("cocktail-auto vs SciPy, float64: 1.00x as fast (geometric mean; timing noise "
                                      "0.988-1.011x at 95%: the same speed), faster on 0 of 3 matrices, slower on 0, "
                                      "the same within timing noise on 3; fastest of all 2 methods on 3 (within 2%)")
    assert "timing noise: cocktail-auto and SciPy are timed call for call" in _printed(same)


def test_the_headline_speedup_is_the_paired_ratio_and_its_interval_need_not_be_symmetric():
    """The kernel times say 2x and 0.9x; the paired ratios, which the headline reports, 1.5x and 0.8x."""
    apart = [_record("a", "cocktail-auto", 5.0, 1.5, 1.45, 1.7), _record("a", "scipy", 10.0),
             _record("b", "cocktail-auto", 10.0, 0.8, 0.78, 0.81), _record("b", "scipy", 9.0)]
    text = console.headline(apart)
    mean = math.sqrt(1.5 * 0.8)
    below = math.sqrt(math.log(1.5 / 1.45) ** 2 + math.log(0.8 / 0.78) ** 2) / 2
    above = math.sqrt(math.log(1.7 / 1.5) ** 2 + math.log(0.81 / 0.8) ** 2) / 2
    assert text.startswith(f"cocktail-auto vs SciPy, float64: {mean:.2f}x as fast (geometric mean; timing noise "
                           f"{mean * math.exp(-below):.3f}-{mean * math.exp(above):.3f}x at 95%), faster on 1 of 2 "
                           f"matrices, slower on 1, the same within timing noise on 0;")
    header, rows = console.compact_table(apart)
    assert [r[-1] for r in rows] == ["1.5", "0.8"]  # the table's × SciPy is the headline's


def test_the_headline_says_when_the_noise_is_unknown():
    few = [_record("a", "cocktail-auto", 10.0, 1.1), _record("a", "scipy", 11.0),
           _record("b", "cocktail-auto", 10.0, 1.0, 0.98, 1.02), _record("b", "scipy", 10.0)]
    text = console.headline(few)
    assert "(geometric mean; timing noise unknown on 1 of 2 matrices: timed alone, or in fewer than 6 pairs of " \
           "rounds)" in text
    assert "faster on 0 of 2 matrices, slower on 0, the same within timing noise on 1, noise unknown on 1" in text


def test_the_fastest_count_compares_the_pair_on_the_times_of_methods_timed_alone():
    """cocktail-auto's kernel time is that of its calls after its own (module paired): within 2% of csr's, timed
    alone, it is the fastest with it."""
    records = [_record("a", "cocktail-auto", 10.1, 1.0, 0.98, 1.02), _record("a", "scipy", 10.1),
               _record("a", "csr", 10.0, paired_with="")]
    assert console.headline(records).endswith("fastest of all 3 methods on 1 (within 2%)")
    assert "calls that follow a call of their own" in _printed(records)


def _printed(records) -> str:
    buf = io.StringIO()
    console.print_report(records, file=buf, plain=True)
    return " ".join(buf.getvalue().split())
