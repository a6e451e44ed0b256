"""The performance targets of the GPU SpMV records (``targets.performance_verdicts``: cuSPARSE's best kernel time
against cocktail-auto's, the DRAM fraction, DIA against its floor) from small hand-built records."""

from __future__ import annotations

import json

import pytest

from cocktail.bench.output import calltables, report, targets
from cocktail.cli import main



def _rec(matrix, method, kernel_us, suite="williams", dtype="float64", **extra):
    return {"section": "spmv", "suite": suite, "matrix": matrix, "rows": 1000, "cols": 1000, "nnz": 5000,
            "dtype": dtype, "method": method, "kernel_us": kernel_us, "call_us": kernel_us and 2 * kernel_us,
            "kernel_timing": "graph", "copy_gbps": 1000.0, "note": "", **extra}


def _found(records, target, dtype="float64"):
    (v,) = [v for v in targets.performance_verdicts(records) if v.target == target and v.dtype == dtype]
    return v


def test_cocktail_auto_against_cusparse_best():
    records = [_rec("a", "cusparse-best", 30.0), _rec("a", "cocktail-auto", 10.0),
               _rec("b", "cusparse-best", 9.0), _rec("b", "cocktail-auto", 10.0),
               _rec("c", "cusparse-best", 5.0)]  # auto did not run on c: not a pair, left out
    geo = _found(records, targets.CUSPARSE_GEOMEAN_TARGET)
    assert geo.ratios == {"a": 3.0, "b": 0.9}
    assert geo.geomean == pytest.approx((3.0 * 0.9) ** 0.5) and geo.passed  # 1.64 >= 1.5
    worst = _found(records, targets.CUSPARSE_WORST_TARGET)
    assert worst.worst == ("b", 0.9) and worst.passed is False  # 0.9 < 0.95
    assert targets.CUSPARSE_WORST_TARGET.limit_text() == "worst >= 0.95"
    assert targets.CUSPARSE_GEOMEAN_TARGET.limit_text() == "geomean >= 1.5"


def test_cupyx_call_time_is_issue_8s_target_listed_again():
    records = [_rec("a", "cocktail-auto", 10.0), _rec("a", "cupyx", 40.0),  # call 20 vs 80: 4x
               _rec("b", "cocktail-auto", 10.0), _rec("b", "cupyx", 15.0)]  # call 20 vs 30: 1.5x
    v = _found(records, targets.CUPYX_TARGET)
    assert targets.CUPYX_TARGET in targets.ISSUE_10_TARGETS
    assert v.ratios == {"a": 4.0, "b": 1.5} and v.geomean == pytest.approx(6.0 ** 0.5) and not v.passed


def test_csr_dram_bytes_is_the_matrix_size_whatever_ran():
    r = _rec("a", "dia", 1.0)  # 1000 x 1000, 5000 entries, float64
    assert targets.csr_dram_bytes(r) == 5000 * (8 + 4) + 1001 * 4 + 1000 * 8 + 1000 * 8
    assert targets.csr_dram_bytes({**r, "dtype": "float32"}) == 5000 * 8 + 1001 * 4 + 1000 * 4 + 1000 * 4


def test_dram_fraction_on_matrices_beyond_four_times_l2_by_family():
    size = 5000 * 12 + 1001 * 4 + 2000 * 8  # every record's matrix in CSR, float64: 80,004 bytes
    l2 = size // 5  # a matrix 5x the L2 size
    records = [
        _rec("lap", "cocktail-auto", 1.0, family="regular", l2_bytes=l2, dram_fraction=0.9),
        _rec("fem", "cocktail-auto", 1.0, family="regular", l2_bytes=l2, dram_fraction=0.8),
        _rec("tiny", "cocktail-auto", 1.0, family="regular", l2_bytes=size // 3, dram_fraction=0.1),  # 3x L2
        _rec("web", "cocktail-auto", 1.0, family="power-law", l2_bytes=l2, dram_fraction=0.65),
        # cocktail-auto failed on "graph": the L2 size comes from cuSPARSE's record; not measured
        _rec("graph", "cocktail-auto", None, family="power-law", note="error: boom"),
        _rec("graph", "cusparse-best", 1.0, family="power-law", l2_bytes=l2, dram_fraction=0.5),
        _rec("file", "cocktail-auto", 1.0, family="", l2_bytes=l2, dram_fraction=0.1),
    ]
    regular = _found(records, targets.DRAM_REGULAR_TARGET)
    assert regular.ratios == {"lap": 0.9, "fem": 0.8} and regular.missing == ()  # "tiny" is within 4x L2
    assert regular.worst == ("fem", 0.8) and regular.passed is False  # 0.8 < 0.85
    power = _found(records, targets.DRAM_POWER_LAW_TARGET)
    assert power.ratios == {"web": 0.65} and power.missing == ("graph",)
    assert power.verdict_text() == "miss (1 not measured)"
    records[-3].update(note="", kernel_us=1.0, l2_bytes=l2, dram_fraction=0.61)
    power = _found(records, targets.DRAM_POWER_LAW_TARGET)
    assert power.worst == ("graph", 0.61) and power.passed  # 0.61 >= 0.60


def test_dia_floor_on_the_structured_laplacians():
    # floor: (nnz + cols + rows) values = 7000 * 8 bytes at 1000 GB/s = 0.056 us
    floor_us = 7000 * 8 / 1000e9 * 1e6
    records = [_rec("laplace5_1000", "dia", 0.07, suite="structured", family="regular"),
               _rec("laplace7_100", "dia", 0.056, suite="structured", family="regular"),
               _rec("laplace7_100", "dia", 1.0, suite="default", family="regular"),  # not the structured suite
               _rec("laplace7_100", "dia", 1.0, suite="structured", dtype="float32", family="regular")]
    v = _found(records, targets.DIA_FLOOR_TARGETS["dia"])
    # laplace7_100 is in two suites here, so its label names the suite
    assert v.ratios == {"laplace5_1000": pytest.approx(floor_us / 0.07), "structured/laplace7_100": pytest.approx(1.0)}
    assert v.worst[1] == pytest.approx(0.8) and v.passed
    f32 = _found(records, targets.DIA_FLOOR_TARGETS["dia"], "float32")
    assert f32.ratios == {"laplace7_100": pytest.approx(7000 * 4 / 1000e9 * 1e6 / 1.0)} and not f32.passed
    assert not [v for v in targets.performance_verdicts(records) if v.target == targets.DIA_FLOOR_TARGETS["dia_vi"]]
    records.append(_rec("laplace5_1000", "dia_vi", 0.05, suite="structured", family="regular"))
    vi = _found(records, targets.DIA_FLOOR_TARGETS["dia_vi"])
    assert vi.ratios == {"laplace5_1000": pytest.approx(floor_us / 0.05)} and vi.passed


def test_floor_fraction_needs_a_time_and_a_copy_bandwidth():
    r = _rec("l", "dia", 0.112)
    assert targets.floor_fraction(r) == pytest.approx(0.5)
    assert targets.floor_fraction({**r, "copy_gbps": None}) is None
    assert targets.floor_fraction({**r, "kernel_us": None}) is None


def test_cpu_records_and_old_records_give_no_issue_10_verdicts():
    cpu = [_rec("a", "cocktail-auto", 1.0, kernel_timing="cpu"), _rec("a", "scipy", 1.0, kernel_timing="cpu")]
    assert targets.performance_verdicts(cpu) == []
    old = [{"matrix": "a", "method": "cocktail-auto", "dtype": "float64", "kernel_us": 1.0},
           {"matrix": "a", "method": "dia", "dtype": "float64", "kernel_us": 1.0}]  # no family, suite or bytes
    assert targets.performance_verdicts(old) == []


def test_the_issue_10_table_in_the_report(tmp_path):
    records = [_rec("a", "cusparse-best", 30.0), _rec("a", "cocktail-auto", 10.0)]
    titles = [t for t, _, _ in calltables.call_tables(records)]
    assert titles == ["Targets: kernel time, call time, DRAM bandwidth, DIA floor",
                      "Targets: never slower than cuSPARSE"]
    text = report.markdown(records, "T")
    assert "| kernel time: cusparse-best / cocktail-auto | float64 | 1 | 3 | 3 (a) | geomean >= 1.5 | pass |" in text
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    assert main(["report", str(path), "--out", str(tmp_path / "r.md")]) == 0
    assert "## Targets: kernel time, call time" in (tmp_path / "r.md").read_text()


# --- never slower than the vendor ------------------------------------------------------------------
def _vendor(records, target, dtype="float64"):
    (v,) = [v for v in targets.vendor_verdicts(records) if v.target == target and v.dtype == dtype]
    return v


def test_never_slower_than_the_vendor_targets():
    big = {"nnz": 2_000_000}
    records = [_rec("a", "cusparse-best", 30.0), _rec("a", "cocktail-auto", 10.0, analysis_spmvs=12.0,
                                                        measure_spmvs=4.0, cache_hit_spmvs=1.5, **big),
               _rec("a", "cocktail-measured", 9.0), _rec("a", "cocktail-auto-own", 15.0, family="power-law"),
               _rec("b", "cusparse-best", 9.6), _rec("b", "cocktail-auto", 10.0, analysis_spmvs=30.0),
               _rec("b", "cocktail-measured", 10.0), _rec("b", "cocktail-auto-own", 12.0, family="regular")]
    worst = _vendor(records, targets.VENDOR_WORST_TARGET)
    assert worst.worst == ("b", pytest.approx(0.96)) and worst.passed is False  # 0.96 < 0.97
    own = _vendor(records, targets.OWN_POWER_LAW_TARGET)
    assert own.ratios == {"a": 2.0} and own.passed  # the power-law matrices only
    measured = _vendor(records, targets.AUTO_OVER_MEASURED_TARGET)
    assert measured.ratios == {"a": 0.9, "b": 1.0} and measured.passed is False
    planning = _vendor(records, targets.PLANNING_TARGET)
    assert planning.ratios == {"a": 16.0} and planning.passed  # b has fewer than 1M entries: not judged
    hit = _vendor(records, targets.CACHE_HIT_TARGET)
    assert hit.ratios == {"a": 1.5} and hit.passed


def test_every_comparison_ratio_is_a_speedup_their_time_over_ours():
    cpu = [_rec("a", "cocktail-auto", 10.0, kernel_timing="cpu"), _rec("a", "scipy", 15.0, kernel_timing="cpu")]
    header, rows = calltables.comparison_table(cpu, "float64", cpu=True)
    assert header[-1] == "scipy / cocktail-auto" and rows[0][-1] == calltables.cell(1.5)  # faster: above 1
    gpu = [_rec("a", "cocktail-auto", 10.0), _rec("a", "cupyx", 30.0), _rec("a", "torch", 20.0)]
    header, rows = calltables.comparison_table(gpu, "float64")
    assert header[-2:] == ["cupyx / cocktail-auto", "torch / cocktail-auto"]
    assert rows[0][-2:] == [calltables.cell(3.0), calltables.cell(2.0)]  # call times 60 and 40 over 20
