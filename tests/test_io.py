"""Matrix Market and .npz reading and writing, and the errors for bad files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import MatrixFileError, SparseMatrix, read_matrix, write_matrix

HEADER = "%%MatrixMarket matrix coordinate"


def write_text(path, text):
    path.write_text(text)
    return path


def test_general_real(tmp_path):
    p = write_text(tmp_path / "a.mtx", f"{HEADER} real general\n% a comment\n3 4 3\n1 1 1.5\n2 4 -2\n3 2 7e-1\n")
    A = read_matrix(p)
    assert isinstance(A, sp.csr_array) and A.shape == (3, 4) and A.dtype == np.float64
    np.testing.assert_array_equal(A.toarray(), [[1.5, 0, 0, 0], [0, 0, 0, -2], [0, 0.7, 0, 0]])


def test_symmetric_is_expanded(tmp_path):
    p = write_text(tmp_path / "s.mtx", f"{HEADER} real symmetric\n3 3 3\n1 1 4\n2 1 -1\n3 2 -2\n")
    np.testing.assert_array_equal(read_matrix(p).toarray(), [[4, -1, 0], [-1, 0, -2], [0, -2, 0]])


def test_skew_symmetric_is_expanded(tmp_path):
    p = write_text(tmp_path / "k.mtx", f"{HEADER} real skew-symmetric\n3 3 2\n2 1 5\n3 1 1\n")
    np.testing.assert_array_equal(read_matrix(p).toarray(), [[0, -5, -1], [5, 0, 0], [1, 0, 0]])


def test_hermitian_is_expanded(tmp_path):
    p = write_text(tmp_path / "h.mtx", f"{HEADER} complex hermitian\n2 2 2\n1 1 2 0\n2 1 1 3\n")
    A = read_matrix(p)
    assert A.dtype == np.complex128
    np.testing.assert_array_equal(A.toarray(), [[2, 1 - 3j], [1 + 3j, 0]])


def test_pattern_and_integer_become_float64(tmp_path):
    p = write_text(tmp_path / "p.mtx", f"{HEADER} pattern general\n2 3 2\n1 3\n2 1\n")
    A = read_matrix(p)
    assert A.dtype == np.float64
    np.testing.assert_array_equal(A.toarray(), [[0, 0, 1], [1, 0, 0]])
    q = write_text(tmp_path / "i.mtx", f"{HEADER} integer general\n1 1 1\n1 1 3\n")
    assert read_matrix(q).dtype == np.float64


def test_dense_array_file_is_accepted(tmp_path):
    p = write_text(tmp_path / "d.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n4\n")
    np.testing.assert_array_equal(read_matrix(p).toarray(), [[1, 0], [0, 4]])


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz", ".npz"])
def test_round_trip(tmp_path, suffix):
    S = sp.random_array((30, 20), density=0.2, format="csr", random_state=3)
    path = write_matrix(tmp_path / f"r{suffix}", S)
    back = read_matrix(path)
    np.testing.assert_allclose(back.toarray(), S.toarray(), rtol=1e-15)


def test_write_sparse_matrix_object(tmp_path):
    A = SparseMatrix(sp.eye_array(4, format="csr") * 3, device="cpu")
    back = read_matrix(write_matrix(tmp_path / "e.mtx", A))
    np.testing.assert_array_equal(back.toarray(), 3 * np.eye(4))


def test_gzip_file(tmp_path):
    p = tmp_path / "g.mtx.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(f"{HEADER} real general\n2 2 1\n2 2 9\n")
    assert read_matrix(p)[1, 1] == 9


def test_missing_file(tmp_path):
    with pytest.raises(MatrixFileError, match=r"cannot read matrix file '.*nothere.mtx': no such file"):
        read_matrix(tmp_path / "nothere.mtx")


def test_directory(tmp_path):
    d = tmp_path / "dir.mtx"
    d.mkdir()
    with pytest.raises(MatrixFileError, match="it is a directory"):
        read_matrix(d)


def test_unknown_suffix(tmp_path):
    with pytest.raises(MatrixFileError, match=r"cannot tell the type of matrix file '.*m.txt'"):
        read_matrix(tmp_path / "m.txt")


@pytest.mark.parametrize("text", [
    "this is not a matrix market file\n",
    f"{HEADER} real general\n3 3 2\n1 1 1\n",            # fewer entries than announced
    f"{HEADER} real general\n3 3 1\n1 1 abc\n",          # a value that is not a number
    f"{HEADER} real general\n3 three 1\n1 1 1\n",        # a malformed size line
    "",                                                  # empty file
])
def test_malformed_matrix_market(tmp_path, text):
    p = write_text(tmp_path / "bad.mtx", text)
    with pytest.raises(MatrixFileError) as info:
        read_matrix(p)
    msg = str(info.value)
    assert "bad.mtx" in msg and "is not a readable Matrix Market file" in msg


def test_malformed_npz(tmp_path):
    p = tmp_path / "bad.npz"
    p.write_bytes(b"not a zip archive")
    with pytest.raises(MatrixFileError, match=r"bad.npz' is not a readable SciPy .npz sparse matrix file"):
        read_matrix(p)


def test_unwritable_path(tmp_path):
    with pytest.raises(MatrixFileError, match="cannot write matrix file"):
        write_matrix(tmp_path / "no" / "such" / "dir.mtx", sp.eye_array(2, format="csr"))


def test_write_rejects_dense():
    with pytest.raises(TypeError, match="write_matrix takes a scipy.sparse matrix"):
        write_matrix("x.mtx", np.eye(2))
