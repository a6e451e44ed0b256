"""Hostile inputs: every file of tests/data/invalid is refused with one MatrixFileError naming the file and
what is wrong (the line for Matrix Market line errors), by the API and by ``cocktail bench``; the files of
tests/data/valid (CRLF, blank and comment lines, nan/inf literals) read to the right matrix."""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from cocktail import MatrixFileError, SparseMatrix, read_matrix
from cocktail.cli import main

DATA = Path(__file__).resolve().parent / "data"
INVALID, VALID = DATA / "invalid", DATA / "valid"

#: file -> (what the message must say, 1-based line for Matrix Market line errors, else None)
EXPECTED = {
    "bad_banner.mtx": ("not a Matrix Market banner", 1),
    "banner_missing_symmetry.mtx": ("not a Matrix Market banner", 1),
    "no_banner.mtx": ("not a Matrix Market banner", 1),
    "unknown_format.mtx": ("format 'coordinates'", 1),
    "unknown_field.mtx": ("field 'reel'", 1),
    "unknown_symmetry.mtx": ("symmetry 'generall'", 1),
    "vector_object.mtx": ("object 'vector'", 1),
    "pattern_skew_symmetric.mtx": ("a pattern field goes with coordinate general or symmetric", 1),
    "pattern_hermitian.mtx": ("a pattern field goes with coordinate general or symmetric", 1),
    "pattern_array.mtx": ("a pattern field goes with coordinate general or symmetric", 1),
    "real_hermitian.mtx": ("a hermitian matrix has a complex field", 1),
    "empty.mtx": ("the file is empty", 1),
    "size_line_missing.mtx": ("the file ends before the size line", 3),
    "size_line_too_few_numbers.mtx": ("size line '2 2': expected 3 non-negative integers", 3),
    "size_line_too_many_numbers.mtx": ("expected 3 non-negative integers", 2),
    "size_line_negative.mtx": ("expected 3 non-negative integers", 2),
    "size_line_not_integer.mtx": ("size line '3 three 1'", 2),
    "array_size_line_three_numbers.mtx": ("expected 2 non-negative integers", 2),
    "symmetric_not_square.mtx": ("a symmetric matrix is square", 2),
    "dimension_1e20.mtx": ("more than int64 holds", 2),
    "header_declares_1e15_entries.mtx": ("declares 1,000,000,000,000,000 entries, more than its", None),
    "dense_array_too_big.mtx": ("declares 10,000,000,000 entries, more than its", None),
    "size_line_positions_past_int64.mtx": ("rows x cols = 1.2e+19 positions overflow int64", 2),
    "more_entries_than_positions.mtx": ("size line declares 5 entries, more than the 4 positions of a 2 x 2 matrix", 2),
    "symmetric_upper_entry.mtx": ("entry (1, 3) lies above the diagonal", 7),
    "symmetric_upper_entry_gzip.mtx.gz": ("entry (1, 3) lies above the diagonal", 7),
    "symmetric_pattern_upper_entry.mtx": ("entry (2, 3) lies above the diagonal", 4),
    "hermitian_upper_entry.mtx": ("entry (1, 2) lies above the diagonal", 4),
    "hermitian_imaginary_diagonal.mtx": ("entry (3, 3) on the diagonal has an imaginary part", 5),
    "hermitian_array_imaginary_diagonal.mtx": ("entry (2, 2) on the diagonal has an imaginary part", 5),
    "skew_symmetric_upper_entry.mtx": ("entry (1, 3) lies above the diagonal", 4),
    "skew_symmetric_diagonal_entry.mtx": ("entry (2, 2) lies on the diagonal", 4),
    "skew_symmetric_array_with_diagonal.mtx": ("more entries than the 1 the size line declares", 4),
    "integer_field_real_value.mtx": ("'2.5' is not an integer literal", 4),
    "integer_sign_inside_a_number.mtx": ("'12-' is not an integer literal", 4),
    "real_two_points.mtx": ("'1.2.3' is not a number", 4),
    "real_exponent_without_digits.mtx": ("'2e' is not a number", 3),
    "real_point_after_exponent.mtx": ("'1e5.3' is not a number", 4),
    "integer_field_exponent_value.mtx": ("'1e3' is not an integer literal", 3),
    "integer_value_past_int64.mtx": ("integer out of range", 3),
    "trailing_garbage.mtx": ("'junk' is not a number", 3),
    "trailing_number_field.mtx": ("4 fields, but this coordinate real file has 3", 4),
    "garbage_inside_value.mtx": ("'0x10' is not a number", 3),
    "inline_percent_comment.mtx": ("'%' is not a number", 3),
    "binary_garbage.mtx": ("is not a number", 3),
    "missing_value_field.mtx": ("2 fields, but this coordinate real file has 3", 3),
    "complex_missing_imaginary_part.mtx": ("3 fields, but this coordinate complex file has 4", 3),
    "non_numeric_value.mtx": ("'abc' is not a number", 3),
    "misspelled_nan.mtx": ("'nanx' is not a number", 3),
    "index_not_integer.mtx": ("invalid integer value", 3),
    "too_few_entries.mtx": ("the file ends after 2 of the 3 entries", 5),
    "too_many_entries.mtx": ("more entries than the 1 the size line declares", 4),
    "array_too_many_values.mtx": ("more entries than the 2 the size line declares", 5),
    "array_two_values_on_a_line.mtx": ("2 fields, but this array real file has 1", 3),
    "index_zero.mtx": ("row index out of bounds", 4),
    "row_index_past_dimension.mtx": ("row index out of bounds", 3),
    "column_index_past_dimension.mtx": ("column index out of bounds", 3),
    "negative_index.mtx": ("row index out of bounds", 3),
    "overflow_value.mtx": ("a value overflows to infinity", 4),
    "overflow_value_bzip2.mtx.bz2": ("a value overflows to infinity", 4),
    "overflow_value_array.mtx": ("a value overflows to infinity", 4),
    "overflow_imaginary_part.mtx": ("a value overflows to infinity", 3),
    "text_named_gz.mtx.gz": ("Not a gzipped file", None),
    "truncated_gzip.mtx.gz": ("Compressed file ended", None),
    "text_named_npz.npz": ("not a zip archive", None),
    "npz_truncated_zip.npz": ("not a zip archive", None),
    "npz_pickled_object.npz": ("allow_pickle=False", None),
    "npz_missing_format_and_shape.npz": ("lacks the 'format' and 'shape' arrays", None),
    "npz_missing_indptr.npz": ("indptr missing", None),
    "npz_dia_layout.npz": ("'dia' layout", None),
    "npz_bsr_layout.npz": ("'bsr' layout", None),
    "npz_unknown_layout.npz": ("'xyz' layout", None),
    "npz_shape_not_a_pair.npz": ("shape must hold two integers", None),
    "npz_shape_float.npz": ("shape must hold two integers", None),
    "npz_shape_positions_past_int64.npz": ("has rows x cols = 1.2e+19 positions, which overflows int64", None),
    "npz_indptr_not_starting_at_0.npz": ("indptr[0] must be 0", None),
    "npz_indptr_decreasing.npz": ("indptr must be non-decreasing", None),
    "npz_indptr_last_not_nnz.npz": ("indptr[-1] must equal len(indices) and len(data)", None),
    "npz_indptr_wrong_length.npz": ("indptr must have rows+1 = 3 entries", None),
    "npz_indptr_2d.npz": ("indptr must be 1-D", None),
    "npz_indptr_float_dtype.npz": ("CSR indptr: index arrays must have an integer dtype", None),
    "npz_col_out_of_range.npz": ("indices must be < cols = 3", None),
    "npz_negative_index.npz": ("indices must be non-negative", None),
    "npz_indices_float_dtype.npz": ("CSR indices: index arrays must have an integer dtype", None),
    "npz_data_string_dtype.npz": ("CSR data: dtype str32 is not supported", None),
    "npz_data_longdouble.npz": ("CSR data: dtype float128 is not supported", None),
    "npz_data_2d.npz": ("data must be 1-D", None),
    "npz_data_wrong_length.npz": ("len(data) = 3", None),
    "npz_csc_row_out_of_range.npz": ("indices must be < cols = 3", None),
    "npz_coo_row_out_of_range.npz": ("COO row indices must lie in [0, 2)", None),
    "npz_coo_col_negative.npz": ("COO col indices must lie in [0, 2): found -1", None),
    "npz_coo_wrong_lengths.npz": ("COO row must be 1-D with len(data) = 2", None),
}
CORPUS = sorted(p.name for p in INVALID.iterdir() if p.name != "README.md")


def test_every_corpus_file_has_an_expectation_and_the_readme_lists_it():
    assert set(CORPUS) == set(EXPECTED)
    readme = (INVALID / "README.md").read_text()
    assert [n for n in CORPUS if f"`{n}`" not in readme] == []


@pytest.mark.parametrize("name", CORPUS)
def test_api_refuses_with_file_and_line(name):
    what, line = EXPECTED[name]
    with pytest.raises(MatrixFileError) as info:
        read_matrix(INVALID / name)
    message = str(info.value)
    assert name in message and what in message
    assert "\n" not in message
    if line is not None:
        assert re.search(rf"\bline {line}: ", message), message


@pytest.mark.parametrize("name", CORPUS)
def test_cli_prints_one_error_line_and_nothing_else(name, capsys):
    assert main(["bench", str(INVALID / name), "--cpu", "--formats", "csr", "--repeat", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cocktail: error:") and name in lines[0]
    assert EXPECTED[name][0] in lines[0]


def run_module(*args):
    src = str(Path(__file__).resolve().parent.parent / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "cocktail", *args], capture_output=True, text=True, timeout=300,
                          env=env)


@pytest.mark.parametrize("name", ["symmetric_upper_entry.mtx", "overflow_value_bzip2.mtx.bz2",
                                  "npz_pickled_object.npz", "text_named_npz.npz", "dense_array_too_big.mtx"])
def test_cli_subprocess(name):
    proc = run_module("bench", str(INVALID / name), "--cpu")
    assert proc.returncode == 2
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cocktail: error:") and EXPECTED[name][0] in lines[0]


# --- files that are refused without being committed -------------------------------------------------------


def special_file(kind, tmp_path):
    """A path of the given kind under ``tmp_path``, or None where this system cannot make it."""
    path = tmp_path / f"{kind}.mtx"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            return None
        os.mkfifo(path)
    elif kind == "dev_zero_link":
        if not os.path.exists("/dev/zero"):
            return None
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "unreadable":
        path.write_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n")
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads it anyway
            return None
    return path


@pytest.mark.parametrize("kind, what", [("fifo", "not a regular file"), ("dev_zero_link", "not a regular file"),
                                        ("directory", "it is a directory"), ("missing", "no such file"),
                                        ("unreadable", "Permission denied")])
def test_special_files(kind, what, tmp_path, capsys):
    path = special_file(kind, tmp_path)
    if path is None:
        pytest.skip(f"cannot make a {kind} here")
    with pytest.raises(MatrixFileError, match=re.escape(what)) as info:
        read_matrix(path)
    assert path.name in str(info.value)
    assert main(["bench", str(path), "--cpu"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and what in err


# --- files that must read correctly -------------------------------------------------------------------------


def canonical(text: str) -> str:
    """The same file with a lower-case banner, LF line endings and no blank or comment lines after the banner."""
    lines = text.replace("\r\n", "\n").split("\n")
    banner = "%%MatrixMarket " + " ".join(lines[0].split()[1:]).lower()
    body = [re.sub(r"(^|\s)\+", r"\1", ln.strip()) for ln in lines[1:] if ln.strip() and not ln.strip().startswith("%")]
    return "\n".join([banner] + body) + "\n"


@pytest.mark.parametrize("name", sorted(p.name for p in VALID.iterdir()))
def test_valid_files_read_like_their_canonical_form(name):
    raw = (VALID / name).read_bytes()
    text = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode()
    expected = scipy.io.mmread(io.StringIO(canonical(text)))
    expected = expected.toarray() if hasattr(expected, "toarray") else expected
    got = read_matrix(VALID / name).toarray()
    assert got.dtype == (np.complex128 if np.iscomplexobj(expected) else np.float64)
    np.testing.assert_array_equal(got, expected)  # NaN equals NaN here


def test_nan_and_inf_literals_are_kept_and_an_overflow_is_not():
    A = read_matrix(VALID / "nan_and_inf_literals.mtx").toarray()
    assert np.isnan(A[0, 0]) and A[0, 1] == np.inf and A[1, 1] == -np.inf
    with pytest.raises(MatrixFileError, match="line 4: a value overflows to infinity"):
        read_matrix(INVALID / "overflow_value.mtx")


def test_line_numbers_count_crlf_blank_and_comment_lines(tmp_path):
    text = "%%MatrixMarket matrix coordinate real symmetric\r\n% c\r\n\r\n3 3 2\r\n1 1 1\r\n\r\n% c\r\n2 3 1\r\n"
    (tmp_path / "s.mtx").write_bytes(text.encode())
    with pytest.raises(MatrixFileError, match=r"s.mtx' .*line 8: entry \(2, 3\) lies above the diagonal"):
        read_matrix(tmp_path / "s.mtx")


def test_decompression_is_bounded_by_the_size_line(tmp_path):
    path = tmp_path / "bomb.mtx.gz"
    path.write_bytes(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n" + b" " * 10**7))
    with pytest.raises(MatrixFileError, match=r"bomb.mtx.gz' decompresses to more than [\d,]+ bytes"):
        read_matrix(path)


# --- the (data, indices, indptr) tuple input: what test_validation.py does not cover already ----------------


def csr_parts():
    return np.array([1.0, 2.0]), np.array([0, 2], dtype=np.int32), np.array([0, 1, 2], dtype=np.int32)


@pytest.mark.parametrize("change, exc, message", [
    (lambda d, i, p: (d, i, p.reshape(1, 3)), ValueError, "CSR indptr must be 1-D"),
    (lambda d, i, p: (d, i[:1], p), ValueError, "indptr[-1] must equal len(indices) and len(data)"),
    (lambda d, i, p: (d, i, np.array([0, 3, 2], dtype=np.int32)), ValueError, "indptr must be non-decreasing"),
    (lambda d, i, p: (d.astype(object), i, p), TypeError, "CSR data: dtype object is not supported"),
    (lambda d, i, p: (d.astype(bool), i, p), TypeError, "CSR data: dtype bool is not supported"),
    (lambda d, i, p: (d, i.astype(np.uint64) + np.uint64(2**63), p), ValueError, "indices must be < cols = 3"),
    (lambda d, i, p: (1.0, i, p), ValueError, "CSR data must be 1-D, got 0-D"),
    (lambda d, i, p: (np.array(1.0), i, p), ValueError, "CSR data must be 1-D, got 0-D"),
    (lambda d, i, p: (None, i, p), ValueError, "CSR data must be 1-D, got 0-D"),
    (lambda d, i, p: (d.reshape(1, 2), i, p), ValueError, "CSR data must be 1-D, got 2-D"),
])
def test_tuple_input_names_the_broken_invariant(change, exc, message):
    with pytest.raises(exc) as info:
        SparseMatrix(change(*csr_parts()), shape=(2, 3), device="cpu")
    assert message in str(info.value) and "\n" not in str(info.value)
