"""The progress lines of ``cocktail bench`` on stderr: they count the methods as the headline counts them
(cuSPARSE's algorithms as one method, a wrong answer in its problem's line) and fit the terminal's width."""

from __future__ import annotations

import re

from cocktail.bench.output import progress
from cocktail.bench.records.record import Record
from cocktail.cli import main


def _rec(matrix, method, us, note=""):
    r = Record("s", matrix, 10, 10, 50, "float64", method, kernel_us=us, note=note)
    r.kernel_timing = "cpu" if us is not None else ""
    return r


def test_the_progress_line_and_the_headline_count_the_same_methods(capsys):
    # csr_pattern refuses a matrix of more than one value: tried, did not run
    assert main(["bench", "laplace5_6", "laplace7_4", "--cpu", "--formats", "csr,csr_pattern", "--repeat", "1"]) == 0
    captured = capsys.readouterr()
    err, out = " ".join(captured.err.split()), " ".join(captured.out.split())
    assert re.search(r"laplace5_6 float64: 3 of 4 methods ran, \d+\.\d s", err)
    assert "fastest of the 3 methods that ran (4 tried) on" in out


def test_cusparse_algorithms_count_as_one_method_as_in_the_headline(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    records = [_rec("m", "cusparse-csr-alg1", 1.0), _rec("m", "cusparse-coo-alg1", None, note="error: x"),
               _rec("m", "csr_vector", 2.0), _rec("m", "dia", None, note="refused: fill 30 > max_fill 20")]
    line = progress.problem_line(records, 4, 8, 1.25, 61.0)
    assert line == "cocktail bench: 4/8 m float64: 2 of 3 methods ran, 1.2 s (elapsed 1:01)"


def test_a_wrong_answer_is_counted_in_its_problems_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # narrower than 100: without "cocktail bench: "
    records = [_rec("m", "csr", 1.0), _rec("m", "ell", 1.0, note="WRONG: relative error 1.00e-06")]
    assert progress.problem_line(records, 2, 2, 0.5, 0.5) == "2/2 m float64: 2 of 2 methods ran, 1 answered WRONG, " \
                                                             "0.5 s (elapsed 0:00)"


def test_progress_lines_fit_the_terminal(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "60")
    name = "a_matrix_with_a_name_long_enough_to_need_two_lines"
    with progress.reporter(2, verbose=True, per_problem=2) as advance:
        advance(_rec(name, "csr", 1.0))
        advance(_rec(name, "cocktail-auto", 1.0))
    lines = capsys.readouterr().err.splitlines()
    assert max(map(len, lines)) <= 60 and len(lines) > 3
    assert " ".join(" ".join(lines).split()).endswith("2 of 2 methods ran, 0.0 s (elapsed 0:00)")
    monkeypatch.setenv("COLUMNS", "300")
    assert progress.message_width() == progress.MESSAGE_COLUMNS  # never wider than 100


def test_the_cli_messages_fit_80_columns(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["bench", "laplace5_6", "--cpu", "--formats", "csr", "--repeat", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and max(map(len, err)) <= 80


def test_a_problem_where_every_cusparse_algorithm_was_refused_counts_alike(monkeypatch):
    """No cusparse-best record is derived there; cuSPARSE was tried all the same, in the headline as in the progress
    line (it said "3 of 4 methods ran" and the headline "all 3 methods")."""
    from cocktail.bench.output import console

    monkeypatch.setenv("COLUMNS", "100")
    records = [_rec("m", "cocktail-auto", 1.0), _rec("m", "csr", 2.0),
               _rec("m", "cusparse-csr-alg1", None, note="refused: no float16 here"),
               _rec("m", "cusparse-coo-alg1", None, note="refused: no float16 here")]
    for r in records[:2]:
        r.kernel_timing = "graph"
    assert "2 of 3 methods ran" in progress.problem_line(records, 4, 4, 1.0, 1.0)
    text = console.headline([r.as_dict() for r in records])
    assert "fastest of the 2 methods that ran (3 tried) on 1 of 1 matrices" in text
