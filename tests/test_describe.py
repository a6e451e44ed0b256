"""What a user reads: ``cocktail formats [NAME]``, ``cocktail explain FILE`` and ``SparseMatrix.explain()``."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, describe, formats, write_matrix
from cocktail.cli import main
from cocktail.formats import about
from cocktail.formats.csr import CSR
from cocktail.auto.planning import AutoReport
from cocktail.auto import features, planner, profile

MARKUP = (":class:", ":func:", ":mod:", "``")


def few_values(m=48, n=48, seed=0):
    """A small matrix with three distinct values (dia_vi stores it) and rows of uneven length."""
    rng = np.random.default_rng(seed)
    S = sp.random_array((m, n), density=0.1, format="csr", random_state=seed)
    S.data = rng.choice([1.0, 2.0, -1.0], S.nnz)
    return (S + sp.eye_array(m, n)).tocsr()


def _table(capsys) -> str:
    assert main(["formats"]) == 0
    return capsys.readouterr().out


def test_formats_table_fits_80_columns_one_row_per_format(capsys):
    text = _table(capsys)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    starts = [line.split()[0] for line in lines if line and not line[0].isspace()]
    for name in formats.names():
        assert starts.count(name) == 1, name  # one row per format, its name in the first column
    assert "None" not in text and not [m for m in MARKUP if m in text]
    assert "ell_width=auto (rule)" in text and "threads_per_packet=auto (rule)" in text


def test_every_format_has_its_words_on_its_class():
    for name in formats.names():
        sentence = about.summary(name)
        assert sentence.endswith(".") and 20 < len(sentence) <= 90, name
        assert not [m for m in MARKUP if m in sentence]
        for key in formats.get(name).defaults:
            assert about.meaning(name, key), (name, key)
        assert about.traffic(name), name


def test_format_details(capsys):
    assert main(["formats", "ell"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("ell\n") and about.summary("ell")[:30] in text.replace("\n  ", " ")
    assert "width=longest row: slots per row" in text and "max_fill=20:" in text
    assert "GPU kernels:\n  ell: one thread per row" in text
    assert "Bytes moved by one product" in text and "Layout:" in text and "column-major" in text
    assert "None" not in text and not [m for m in MARKUP if m in text]
    assert "see the module docstring" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("name", formats.names())
def test_every_format_details_are_clean(name, capsys):
    assert main(["formats", name]) == 0
    text = capsys.readouterr().out
    assert "None" not in text and not [m for m in MARKUP if m in text]
    assert max(len(line) for line in text.splitlines()) <= 80


def test_unknown_format_is_one_error_line(capsys):
    assert main(["formats", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cocktail: error: unknown format 'nope'")
    assert all(name in err[0] for name in formats.names())


def test_clean_doc_strips_roles_and_literals():
    doc = "Uses :class:`~cocktail.errors.FormatFillError` and :mod:`cocktail.tuning` on ``x[i]``.\n\n- one\n  two"
    assert describe.clean_doc(doc) == "Uses FormatFillError and cocktail.tuning on x[i].\n\n- one two"


# --- SparseMatrix.explain() ----------------------------------------------------------------------
def _params_line(A) -> str:
    return next(line for line in A.explain().splitlines() if line.startswith("  parameters: "))


@pytest.mark.parametrize("name", formats.names())
def test_explain_shows_resolved_defaults(name):
    extra = {"parts": [("dia", {}, ("diagonals", [0])), ("ell", {}, ("row_prefix", 2)), ("csr", {}, ("rest",))]}
    S = few_values()
    if formats.get(name).max_values == 1:
        S.data[:] = 2.0
    A = SparseMatrix(S, format=name, device="cpu", **(extra if name == "cocktail" else {}))
    line = _params_line(A)
    assert "None" not in A.explain() and "=auto" not in line
    for key in formats.get(name).defaults:
        assert f"{key}=" in line, (name, key)
    if name == "ell":
        assert re.search(r"width=\d+ \(longest row\)", line)
    if name == "hyb":
        assert re.search(r"ell_width=\d+ \(rule\)", line) and "width_rule=bell_garland_ell_width" in line
    if name == "pkt":
        assert "packet_rows=3072" in line and re.search(r"partitioner=(metis|rcm)", line)
    if name == "cocktail":
        assert "parts=dia(align=32, max_fill=20) + ell(align=32, width=2, max_fill=20) + csr" in line


def test_explain_of_given_parameters():
    A = SparseMatrix(few_values(), format="hyb", device="cpu", ell_width=2)
    assert "ell_width=2, width_rule=unused" in _params_line(A)
    B = SparseMatrix(few_values(), format="dia", device="cpu", max_fill=None)
    assert "max_fill=off" in _params_line(B)


def test_explain_of_auto_on_the_cpu():
    A = SparseMatrix(few_values(), device="cpu")
    text = A.explain()
    assert A.format == "csr" and A.auto is None
    assert "format='auto': auto on the CPU is csr: SciPy's compiled CSR product" in text
    B = SparseMatrix(few_values(), format="csr", device="cpu")
    assert "format='auto'" not in B.explain()


def _host_planning(S):
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    feats = features.compute(csr, block_fill_limit=planner.block_fill_limit(csr.dtype, csr.index_dtype))
    return csr, planner.plan(csr, feats, profile.shipped()[0], csr.dtype)


def test_auto_lines_say_why_from_the_report():
    csr, planning = _host_planning(few_values(2000, 2000))
    report = AutoReport(planning.chosen, "model", planning, analysis_s=0.001, convert_s=0.002)
    text = "\n".join(describe.auto_lines(report, csr.nnz))
    label = planning.chosen.label(csr.nnz)
    assert f"plan {label}" in text and f"why: fastest predicted of {len(planning.candidates)} candidate" in text
    assert "candidates (predicted GFLOP/s, measured GFLOP/s):" in text and "   * " in text
    assert "features: 2,000 x 2,000" in text and "None" not in text
    rule = "\n".join(describe.auto_lines(AutoReport(planning.chosen, "model", notice="no device profile"), csr.nnz))
    assert "notice: no device profile" in rule and "fixed rule" in rule


# --- cocktail explain FILE -----------------------------------------------------------------------
def test_explain_command_on_the_cpu(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("cocktail.arrays.cuda_available", lambda: False)
    path = tmp_path / "m.mtx"
    write_matrix(path, few_values(300, 300))
    assert main(["explain", str(path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("csr matrix 300 x 300") and "on cpu" in text
    assert "format='auto': auto on the CPU is csr" in text
    assert "On a GPU (not run here), format='auto' would plan" in text and "shipped:" in text
    assert "features: 300 x 300" in text and "why: fastest predicted" in text and "candidates" in text
    assert "None" not in text


def test_explain_command_previews_with_the_profile_named(capsys):
    assert main(["explain", "laplace5_8", "--device", "cpu", "--gpu", "h200"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "with the NVIDIA H200 profile (shipped:h200.json;" in text


def test_explain_command_with_a_format_and_a_generated_name(capsys):
    assert main(["explain", "laplace5_8", "--device", "cpu", "--format", "ell", "--dtype", "float32"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("ell matrix 64 x 64") and "float32 values" in text and "width=5 (longest row)" in text
    assert "On a GPU" not in text  # a named format: nothing to plan


@pytest.mark.parametrize("args, message", [
    (["explain", "missing.mtx"], "no such file"),
    (["explain", "bad.mtx", "--device", "cpu"], "not a readable Matrix Market file"),
    (["explain", "laplace5_8", "--device", "cpu", "--format", "nope"], "unknown format 'nope'"),
    (["explain", "laplace5_8", "--device", "cpu", "--dtype", "int8"], "dtype"),
    (["explain", "laplace5_8", "--device", "cpu", "--gpu", "a100"], "no shipped device profile 'a100'; shipped: h100, h200"),
])
def test_explain_command_errors(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.mtx").write_text("not a matrix\n")
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cocktail: error: ") and message in err[0]


def test_explain_command_cuda_without_a_gpu(capsys, monkeypatch):
    monkeypatch.setattr("cocktail.arrays.cuda_available", lambda: False)
    assert main(["explain", "laplace5_8", "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cocktail: error: ")


def test_explain_command_plans_complex_values(capsys, monkeypatch):
    monkeypatch.setattr("cocktail.arrays.cuda_available", lambda: False)
    assert main(["explain", "laplace5_8", "--dtype", "complex128"]) == 0
    text = capsys.readouterr().out
    # complex kernels exist, and the planner costs a complex matrix from the float64 samples scaled by its bytes
    assert "complex128 values" in text and "format='auto' would plan" in text and "candidates" in text
    assert max(len(line) for line in text.split("On a GPU")[1].splitlines()) <= 80
