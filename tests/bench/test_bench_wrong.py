"""A wrong answer is never quiet: ``cocktail bench`` and ``cocktail report`` list it first, leave it out of every
speedup and count, and exit 3, so that no speedup hides a wrong answer."""

from __future__ import annotations

import io
import json

import pytest

from cocktail.bench.measuring import methods
from cocktail.bench.output import console, wrong_answers
from cocktail.bench.records import wrong
from cocktail.cli import main

#: laplace7_10 has 1,000 rows; laplace5_20 400.
OFF_ROWS = 1000


def _answer_off(monkeypatch, labels, rows=OFF_ROWS, by=1e-6):
    """Make the CPU products of the methods labelled ``labels`` answer ``1 + by`` times the product on the
    matrices of ``rows`` rows (their timing is untouched)."""
    real = methods._host_prepared

    def prepared(A, inputs, label):
        prep = real(A, inputs, label)
        if label in labels and inputs.S.shape[0] == rows:
            right = prep.result
            prep.result = lambda: right() * (1 + by)
        return prep

    monkeypatch.setattr(methods, "_host_prepared", prepared)


ARGS = ["laplace5_20", "laplace7_10", "--cpu", "--formats", "csr,ell", "--repeat", "1"]


def test_bench_shows_a_wrong_answer_leaves_it_out_and_exits_3(tmp_path, monkeypatch, capsys):
    _answer_off(monkeypatch, {"csr", "cocktail-auto"})
    out = tmp_path / "r.json"
    assert main(["bench", *ARGS, "--json", str(out)]) == wrong.EXIT_WRONG == 3
    captured = capsys.readouterr()
    text = captured.out
    # shown by default, before the headline: matrix, dtype, method, relative error and its bound
    block = text.split("WRONG ANSWERS: 2 records past the error bound of their dtype")[1]
    assert block.index("laplace7_10") < block.index("cocktail-auto vs SciPy")
    rows = [line.split() for line in block.splitlines() if line.startswith("laplace7_10")][:2]
    assert rows == [["laplace7_10", "float64", "csr", "1.00e-06", "1e-09"],
                    ["laplace7_10", "float64", "cocktail-auto", "1.00e-06", "1e-09"]]
    # left out of the headline: one matrix compared, the other named as answered wrong
    headline = " ".join(text.split("cocktail-auto vs SciPy, float64:")[1].split("\nmatrix")[0].split())
    assert "faster on" in headline and "of 1 matrices" in headline
    assert "(1 more where cocktail-auto answered wrong)" in headline
    table_row = next(line for line in text.splitlines() if line.startswith("laplace7_10") and "wrong answer" in line)
    assert "- (wrong answer)" in table_row and table_row.split()[-1] == "-"  # no speedup on that matrix
    assert "exit status 3" in " ".join(captured.err.split())
    # the JSON keeps the note and the error, so that a saved run shows the same
    records = json.loads(out.read_text())
    noted = [(r["matrix"], r["method"]) for r in records if r["note"].startswith("WRONG")]
    assert noted == [("laplace7_10", "csr"), ("laplace7_10", "cocktail-auto")]
    assert all(r["speedup_cusparse_best"] is None for r in records if r["note"].startswith("WRONG"))
    assert main(["report", str(out), "--terminal"]) == 3
    assert capsys.readouterr().out == text  # the saved run prints what the run printed, and exits 3 too
    assert main(["report", str(out), "--out", str(tmp_path / "r.md")]) == 3
    md = (tmp_path / "r.md").read_text()
    assert "## Wrong answers" in md and "| laplace7_10 | float64 | csr | 1.00e-06 | 1e-09 |" in md
    refusals = md.split("## Methods that did not run")[1] if "## Methods that did not run" in md else ""
    assert "WRONG" not in refusals  # a wrong answer ran: it has its own section


def test_a_right_run_exits_0_and_shows_no_block(capsys):
    assert main(["bench", *ARGS]) == 0
    assert "WRONG" not in capsys.readouterr().out


def _record(matrix, method, us, note="", rel_err=0.0, **extra):
    return {"section": "spmv", "suite": "s", "matrix": matrix, "rows": 100, "cols": 100, "nnz": 1000,
            "dtype": "float64", "method": method, "params": {}, "kernel_us": us, "call_us": us,
            "kernel_timing": "cpu", "rel_err": rel_err, "note": note, **extra}


WRONG = "WRONG: relative error 4.40e-08"


def runs(auto_note=""):
    """cocktail-auto 2x SciPy on a and b; on c 8x and fastest of all, unless ``auto_note`` marks it wrong."""
    return [_record("a", "cocktail-auto", 10.0), _record("a", "scipy", 20.0), _record("a", "csr", 11.0),
            _record("b", "cocktail-auto", 10.0), _record("b", "scipy", 20.0), _record("b", "csr", 11.0),
            _record("c", "cocktail-auto", 5.0, note=auto_note, rel_err=4.4e-8 if auto_note else 0.0),
            _record("c", "scipy", 40.0), _record("c", "csr", 30.0)]


def test_the_headline_leaves_a_wrong_answer_out_of_its_numbers():
    right = console.headline(runs())
    assert right.startswith("cocktail-auto vs SciPy, float64: 3.17x as fast (geometric mean), faster on 3 of 3")
    assert right.endswith("fastest of all 3 methods on 3 (within 2%)")
    text = console.headline(runs(WRONG))
    assert text.startswith("cocktail-auto vs SciPy, float64: 2.00x as fast (geometric mean), faster on 2 of 2 "
                           "matrices (1 more where cocktail-auto answered wrong)")
    assert text.endswith("fastest of all 3 methods on 2 (within 2%)")  # c's 5 µs is no win
    header, rows = console.compact_table(runs(WRONG))
    c = rows[2]
    assert c[header.index("plan")] == "- (wrong answer)" and c[-1] == "-"


def test_a_wrong_answer_past_its_bound_counts_without_its_note():
    """A saved record whose error is past its bound is wrong even without the note (NaN too)."""
    assert wrong.is_wrong(_record("c", "csr", 1.0, rel_err=1e-6))
    assert wrong.is_wrong(_record("c", "csr", 1.0, rel_err=float("nan")))
    assert not wrong.is_wrong(_record("c", "csr", 1.0, rel_err=1e-6, params={"value_dtype": "float32"}))
    assert not wrong.is_wrong(_record("c", "csr", None, note="refused: fill 30 > max_fill 20", rel_err=None))
    assert wrong.error_bound(_record("c", "csr", 1.0, dtype="float16")) == 1e-2


def test_the_summaries_and_the_block_in_verbose_output():
    buf = io.StringIO()
    console.print_report(runs(WRONG), verbose=True, file=buf, plain=True)
    text = buf.getvalue()
    assert text.index("WRONG ANSWERS: 1 record past the error bound of its dtype") < text.index("cocktail-auto vs")
    win = next(line for line in text.split("Fastest / in between")[1].splitlines() if line.startswith("cocktail-auto"))
    assert win.split()[1] == "2"  # wins on a and b; c's wrong answer is no win
    assert "bound: the largest rel err" in text


def test_the_block_names_what_was_timed_when_not_only_spmv():
    records = runs(WRONG) + [{**_record("d", "cocktail-matvec", None, note=WRONG), "section": "overhead"},
                             {**_record("e", "cocktail-auto", 3.0, note=WRONG, rel_err=None), "section": "spmm", "k": 4}]
    title, header, rows = wrong_answers.table(records)
    assert title.startswith("WRONG ANSWERS: 3 records") and header[0] == "timed"
    assert [r[0] for r in rows] == ["SpMV", "call overhead", "SpMM k=4"] and rows[2][4] == "-"


@pytest.mark.parametrize("command, status_3", [("report", "3 the records hold a wrong answer"),
                                               ("bench", "3 a product answered wrong")])
def test_help_documents_the_exit_status(command, status_3, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 done; 2 an error" in text and status_3 in text and "WRONG ANSWERS" in text
