"""Metric arithmetic and suite summaries on hand-made records."""

from __future__ import annotations

import math

import pytest

from cocktail.bench.records import metrics


def rec(matrix, method, us, nnz=1000, dtype="float64"):
    return {"matrix": matrix, "dtype": dtype, "method": method, "kernel_us": us, "nnz": nnz}


RECORDS = [
    rec("a", "csr", 10.0), rec("a", "ell", 5.0), rec("a", "cusparse-best", 20.0),
    rec("b", "csr", 8.0), rec("b", "ell", 16.0), rec("b", "cusparse-best", 8.0),
    rec("c", "csr", 4.0), rec("c", "ell", None), rec("c", "cusparse-best", 2.0),
]


def test_rates():
    assert metrics.gflops(1000, 1e-6) == pytest.approx(2.0)  # 2000 flops in a microsecond
    assert metrics.gbps(4_000_000, 1e-3) == pytest.approx(4.0)
    assert metrics.bandwidth_fraction(2000.0, 4000.0) == 0.5


def test_geomean():
    assert metrics.geomean([1, 4, 16]) == pytest.approx(4.0)
    assert math.isnan(metrics.geomean([]))
    with pytest.raises(ValueError, match="positive"):
        metrics.geomean([1, 0])


def test_speedups_skip_refused_measurements():
    s = metrics.speedups(RECORDS, "cusparse-best")
    assert s["csr"] == {("", "a", "float64"): 2.0, ("", "b", "float64"): 1.0, ("", "c", "float64"): 0.5}
    assert s["ell"] == {("", "a", "float64"): 4.0, ("", "b", "float64"): 0.5}
    g = metrics.geomean_speedups(RECORDS, "cusparse-best")
    assert g["csr"] == pytest.approx(1.0) and g["ell"] == pytest.approx(math.sqrt(2.0))
    assert g["cusparse-best"] == pytest.approx(1.0)


def test_win_lose_counts_ties_for_every_tied_method():
    counts = metrics.win_lose(RECORDS)
    assert counts["ell"] == {"win": 1, "lose": 1, "ballpark": 0}
    assert counts["csr"] == {"win": 1, "lose": 1, "ballpark": 1}  # b: tied best with cusparse-best
    assert counts["cusparse-best"] == {"win": 2, "lose": 1, "ballpark": 0}
    per_problem = sum(c["win"] for c in counts.values())
    assert per_problem == 4  # a, c: one winner each; b: two tied
    near = metrics.win_lose([rec("d", "csr", 10.0), rec("d", "ell", 10.1), rec("d", "dia", 10.3)], tie=0.02)
    assert near == {"csr": {"win": 1, "lose": 0, "ballpark": 0}, "ell": {"win": 1, "lose": 0, "ballpark": 0},
                    "dia": {"win": 0, "lose": 1, "ballpark": 0}}  # 1% from the fastest ties, 3% does not


def test_gflops_statistics():
    stats = metrics.gflops_statistics(RECORDS)["csr"]
    rates = [2000 / 10e3, 2000 / 8e3, 2000 / 4e3]  # 2*nnz flops / (us * 1e-6) / 1e9
    assert stats["min"] == pytest.approx(min(rates)) and stats["max"] == pytest.approx(max(rates))
    assert stats["median"] == pytest.approx(0.25) and stats["count"] == 3
    assert stats["mean"] == pytest.approx(sum(rates) / 3)


def test_performance_ratios_mark_problems_a_method_did_not_run():
    ratios = metrics.performance_ratios(RECORDS + [rec("d", "csr", 3.0)])
    a, b, c, d = (("", m, "float64") for m in "abcd")
    assert ratios["csr"] == {a: 2.0, b: 1.0, c: 2.0, d: 1.0}
    assert ratios["ell"] == {a: 1.0, b: 2.0, c: math.inf, d: math.inf}  # refused on c, no record on d
    assert ratios["cusparse-best"][d] == math.inf and ratios["cusparse-best"][c] == 1.0


def test_performance_profile_is_the_fraction_of_problems_within_tau():
    prof = metrics.performance_profile(RECORDS, [1.0, 1.5, 2.0, 100.0])
    assert prof["csr"] == pytest.approx([1 / 3, 1 / 3, 1.0, 1.0])
    assert prof["cusparse-best"] == pytest.approx([2 / 3, 2 / 3, 2 / 3, 1.0])  # 4x slower on a
    # ell refused c: it never reaches 1, however large tau
    assert prof["ell"] == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3])
    assert metrics.performance_profile(RECORDS, [1e30])["ell"] == pytest.approx([2 / 3])


def test_performance_profile_counts_a_method_that_never_ran():
    records = [rec("a", "csr", 1.0), rec("a", "dia", None), rec("b", "csr", 2.0), rec("b", "ell", 1.0)]
    prof = metrics.performance_profile(records, [1.0, 4.0])
    assert prof == {"csr": [0.5, 1.0], "dia": [0.0, 0.0], "ell": [0.5, 0.5]}
    assert metrics.performance_profile([], [1.0]) == {}


def test_older_records_use_time_us():
    old = [{"matrix": "a", "dtype": "float32", "method": "csr", "time_us": 2.0, "nnz": 10}]
    assert metrics.times_by_problem(old) == {("", "a", "float32"): {"csr": 2.0}}
