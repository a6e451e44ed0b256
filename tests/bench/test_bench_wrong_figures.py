"""A wrong answer reaches no number: every figure of its record is blanked where the reports read it, every place that
judges a record asks :func:`cocktail.bench.records.wrong.is_wrong` (a saved record past its bound without the WRONG
note too), and the headline names the matrices it leaves out (a wrong answer is reported, never averaged in)."""

from __future__ import annotations

from dataclasses import fields

from cocktail.bench import runner
from cocktail.bench.measuring import overhead
from cocktail.bench.measuring import overhead_ways as ways
from cocktail.bench.output import blocks, calltables, console, report, targets
from cocktail.bench.records import wrong
from cocktail.bench.records.record import OVERHEAD, SPMM, Record

#: Past float64's bound (1e-9), with no note: a record saved before the rule, or by another tool.
PAST = 1e-6
NOTE = "WRONG: relative error 1.00e-06"

#: The fields a wrong record keeps: what was timed, where and how, and the format's byte models.
KEPT = {"suite", "matrix", "rows", "cols", "nnz", "dtype", "method", "params", "section", "k", "kernel_timing",
        "copy_gbps", "spmv_bytes", "l2_ratio", "l2_bytes", "dram_bytes", "padding_ratio", "rel_err", "paired_with",
        "kind", "family", "note", "gpu", "cuda", "cupy", "commit", "date", "build_from", "products"}


def test_untimed_blanks_every_measured_or_derived_field():
    numbers = {f.name: 1.0 for f in fields(Record) if f.name not in KEPT}
    record = Record("s", "m", 10, 10, 100, "float64", "csr", note=NOTE, rel_err=PAST, **numbers).as_dict()
    blanked = wrong.untimed(record)
    assert {k for k, v in blanked.items() if v is not None} <= KEPT  # a new figure must be blanked or named here
    assert all(blanked[k] == record[k] for k in KEPT)


def _gpu(matrix, method, us, rel_err=0.0, note="", **extra):
    return {"section": "spmv", "suite": "s", "matrix": matrix, "rows": 100, "cols": 100, "nnz": 1000,
            "dtype": "float64", "method": method, "params": {"plan": "csr"}, "kernel_us": us, "call_us": us,
            "kernel_timing": "graph", "rel_err": rel_err, "note": note, "copy_gbps": 1000.0, "gbps": 900.0,
            "bandwidth_fraction": 0.9, "dram_fraction": 0.8, "speedup_cusparse_best": 2.0, **extra}


def test_the_compact_table_shows_no_rate_of_a_wrong_answer():
    records = [_gpu("a", "cocktail-auto", 1.0, rel_err=PAST), _gpu("a", "cusparse-best", 2.0),
               _gpu("b", "cocktail-auto", 1.0), _gpu("b", "cusparse-best", 2.0)]
    header, rows = console.compact_table(records)
    a = dict(zip(header, rows[0]))
    assert a["plan"] == "- (wrong answer)" and a["of copy"] == "-" and a["× cuSPARSE"] == "-"
    assert dict(zip(header, rows[1]))["of copy"] == "0.9"


def _spmm(matrix, method, us, rel_err=0.0, plan="csr"):
    return {**_gpu(matrix, method, us, rel_err), "section": SPMM, "k": 4, "params": {"plan": plan, "block": "b"}}


def test_the_block_section_says_wrong_and_gives_no_figure_of_it():
    records = [_spmm("a", "cocktail-auto", 1.0, rel_err=PAST), _spmm("a", "cusparse-spmm-best", 2.0),
               _spmm("a", "cocktail-auto-spmvs", 3.0)]
    ((head, header, rows),) = blocks.sections(records)
    row = dict(zip(header, rows[0]))
    assert row["auto µs"] == "wrong" and row["DRAM of copy"] == "-" and row["speedup"] == "-" and row["gain"] == "-"
    assert row["cuSPARSE µs"] == "2.0"
    assert head == "float64, k = 4: cocktail-auto answered wrong on 1 matrix: no speedup to give"  # not "has no ..."
    records += [_spmm("b", "cocktail-auto", 1.0), _spmm("b", "cusparse-spmm-best", 2.0)]
    head = blocks.sections(records)[0][0]
    assert head.startswith("float64, k = 4: cocktail-auto 2.00x cusparse-spmm-best in geometric mean over 1 matrices "
                           "(lowest 2.00x) (1 more where cocktail-auto answered wrong)")


def _ov(method, b2b, rel_err=None, note=""):
    return Record("s", "m", 10, 10, 50, "float64", method, section=OVERHEAD, back_to_back_us=b2b, sync_call_us=2 * b2b,
                  rel_err=rel_err, note=note)


def test_the_overhead_section_gives_no_ratio_of_a_wrong_answer():
    records = [_ov(ways.EMPTY_LAUNCH, 2.0), _ov(ways.EMPTY_GRAPH, 1.0), _ov(ways.MATVEC, 3.0, rel_err=PAST),
               _ov(ways.MATMUL, 4.0, rel_err=0.0)]
    overhead.add_floor_ratios(records)
    matvec, matmul = records[2], records[3]
    assert matvec.over_empty_launch is None and matvec.sync_over_empty_graph is None
    assert matmul.over_empty_launch == 2.0
    rows = [r.as_dict() for r in records]
    header, body = calltables.overhead_table(rows, "float64")
    line = dict(zip(header, body[0]))
    assert line["cocktail-matvec µs"] == "wrong" and line["matvec / launch"] == "wrong"
    assert line["A @ x / launch"] == "2"
    (verdict,) = [v for v in targets.overhead_verdicts(rows) if v.target == targets.MATVEC_TARGET]
    assert verdict.wrong == ("m",) and verdict.verdict_text() == "miss (1 wrong)"
    assert "| m | 10 | 50 | 2 / 4 | 1 / 2 | wrong | 4 / 8 | wrong | 2 | - |" in report.markdown(rows, "T")


def _cpu(matrix, method, us, rel_err=0.0, note=""):
    return {**_gpu(matrix, method, us, rel_err, note), "kernel_timing": "cpu", "copy_gbps": None,
            "bandwidth_fraction": None, "dram_fraction": None, "speedup_cusparse_best": None}


def test_targets_count_a_wrong_answer_without_its_note_as_wrong():
    records = [_cpu("a", "cocktail-auto", 10.0), _cpu("a", "scipy", 10.0),
               _cpu("b", "cocktail-auto", 5.0, rel_err=PAST), _cpu("b", "scipy", 10.0)]
    (verdict,) = targets.cpu_verdicts(records)
    assert verdict.ratios == {"a": 1.0} and verdict.wrong == ("b",) and verdict.missing == ()
    assert verdict.passed is False and verdict.verdict_text() == "miss (1 wrong)"
    header, rows = calltables.comparison_table(records, "float64", cpu=True)
    assert rows[1] == ["b", "wrong", "10", "-"]
    assert calltables.verdict_table([verdict])[1][0][2] == "2"  # both matrices counted


def test_best_single_and_the_speedups_leave_out_a_wrong_answer_without_its_note():
    def rec(method, us, rel_err=0.0):
        return Record("s", "m", 10, 10, 50, "float64", method, kernel_us=us, rel_err=rel_err)

    singles = [rec("csr", 3.0), rec("ell", 1.0, rel_err=PAST)]
    (best,) = runner.best_single(singles)
    assert best.params["best_of"] == "csr" and best.kernel_us == 3.0
    records = [rec("cusparse-best", 1.0, rel_err=PAST), rec("cupyx", 4.0), rec("csr", 2.0)]
    runner.add_speedups(records)
    assert records[2].speedup_cusparse_best is None and records[2].speedup_cupyx == 2.0


def test_the_planner_table_and_targets_leave_out_a_wrong_answer_without_its_note():
    records = [_gpu("a", "best-single", 1.0, params={"best_of": "csr"}), _gpu("a", "cocktail-auto", 1.0, rel_err=PAST,
                                                                              analysis_spmvs=3.0)]
    assert calltables.planner_table(records, "float64")[1] == []
    found = {v.target: v for v in targets.planner_verdicts(records)}
    assert found[targets.AUTO_GEOMEAN_TARGET].verdict_text() == "miss (1 wrong)"
    assert found[targets.ANALYSIS_TARGET].wrong == ("a",) and found[targets.ANALYSIS_TARGET].ratios == {}


def test_the_headline_names_matrices_where_scipy_answered_wrong():
    records = [_cpu("a", "cocktail-auto", 10.0), _cpu("a", "scipy", 20.0),
               _cpu("b", "cocktail-auto", 10.0), _cpu("b", "scipy", 20.0, rel_err=PAST),
               _cpu("c", "cocktail-auto", 10.0, rel_err=PAST), _cpu("c", "scipy", 20.0)]
    text = console.headline(records)
    assert ("2.00x as fast (geometric mean), faster on 1 of 1 matrices (1 more where cocktail-auto answered wrong; "
            "1 more where SciPy answered wrong);") in text


def test_the_headline_names_matrices_where_every_cusparse_algorithm_answered_wrong():
    records = [_gpu("a", "cocktail-auto", 1.0), _gpu("a", "cusparse-csr-alg1", 2.0), _gpu("a", "cusparse-best", 2.0),
               _gpu("b", "cocktail-auto", 1.0), _gpu("b", "cusparse-csr-alg1", 2.0, rel_err=PAST),
               _gpu("b", "cusparse-coo-alg1", None, note="refused: no COO here")]
    text = console.headline(records)
    assert "faster on 1 of 1 matrices (1 more where every cuSPARSE algorithm that ran answered wrong);" in text
