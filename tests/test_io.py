"""Matrix Market and .npz reading and writing, and the errors for bad files."""

from __future__ import annotations

import gzip

import os

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


def test_hermitian_array_with_a_real_diagonal_is_expanded(tmp_path):
    p = write_text(tmp_path / "h.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n5 0\n")
    np.testing.assert_array_equal(read_matrix(p).toarray(), [[1, 2 - 3j], [2 + 3j, 5]])


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
    with pytest.raises(MatrixFileError, match=r"bad.npz' is not a SciPy .npz sparse matrix file: not a zip archive"):
        read_matrix(p)


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def test_npz_arrays_are_checked_before_use(tmp_path):
    good = dict(format=np.array(b"csr"), shape=np.array([2, 3]), data=np.array([1.0, 2.0]),
                indices=np.array([0, 2], dtype=np.int32), indptr=np.array([0, 1, 2], dtype=np.int32))
    assert read_matrix(_npz(tmp_path / "good.npz", **good)).toarray().tolist() == [[1, 0, 0], [0, 0, 2]]
    bad_col = _npz(tmp_path / "col.npz", **{**good, "indices": np.array([0, 7], dtype=np.int32)})
    with pytest.raises(MatrixFileError, match=r"col.npz': the csr arrays are not a valid matrix: CSR indices must be "
                                              r"< cols = 3: indices\[1\] = 7"):
        read_matrix(bad_col)
    bad_ptr = _npz(tmp_path / "ptr.npz", **{**good, "indptr": np.array([0, 2, 1], dtype=np.int32)})
    with pytest.raises(MatrixFileError, match="indptr must be non-decreasing"):
        read_matrix(bad_ptr)
    coo = dict(format=np.array(b"coo"), shape=np.array([2, 2]), data=np.array([1.0]), row=np.array([5]),
               col=np.array([0]))
    with pytest.raises(MatrixFileError, match=r"COO row indices must lie in \[0, 2\): found 5"):
        read_matrix(_npz(tmp_path / "coo.npz", **coo))
    csc = dict(format=np.array(b"csc"), shape=np.array([3, 2]), data=np.array([4.0]),
               indices=np.array([2], dtype=np.int32), indptr=np.array([0, 0, 1], dtype=np.int32))
    assert read_matrix(_npz(tmp_path / "csc.npz", **csc)).toarray().tolist() == [[0, 0], [0, 0], [0, 4]]


def test_npz_never_unpickles_and_names_what_is_missing(tmp_path):
    pickled = _npz(tmp_path / "obj.npz", format=np.array(b"csr"), shape=np.array([1, 1]),
                   data=np.array([{"x": 1}], dtype=object), indices=np.array([0]), indptr=np.array([0, 1]))
    with pytest.raises(MatrixFileError, match="obj.npz' is not a readable SciPy .npz sparse matrix file"):
        read_matrix(pickled)
    with pytest.raises(MatrixFileError, match=r"lacks the 'format' and 'shape' arrays \(it holds a\)"):
        read_matrix(_npz(tmp_path / "plain.npz", a=np.zeros(3)))
    with pytest.raises(MatrixFileError, match="'dia' layout; Cocktail reads .npz files in csr, csc and coo layout"):
        read_matrix(_npz(tmp_path / "dia.npz", format=np.array(b"dia"), shape=np.array([2, 2]),
                         data=np.ones((1, 2)), offsets=np.array([0])))
    with pytest.raises(MatrixFileError, match="indptr missing"):
        read_matrix(_npz(tmp_path / "part.npz", format=np.array(b"csr"), shape=np.array([1, 1]),
                         data=np.ones(1), indices=np.zeros(1, dtype=np.int32)))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_special_files_are_refused_unopened(tmp_path):
    fifo = tmp_path / "pipe.mtx"
    os.mkfifo(fifo)
    with pytest.raises(MatrixFileError, match="pipe.mtx': not a regular file"):
        read_matrix(fifo)  # opening a FIFO would block forever
    if os.path.exists("/dev/zero"):
        link = tmp_path / "zero.mtx"
        link.symlink_to("/dev/zero")
        with pytest.raises(MatrixFileError, match="zero.mtx': not a regular file"):
            read_matrix(link)


def test_sizes_are_refused_before_allocating(tmp_path):
    huge = write_text(tmp_path / "huge.mtx", f"{HEADER} real general\n3 3 1000000000000000\n1 1 1\n")
    with pytest.raises(MatrixFileError, match=r"huge.mtx' declares 1,000,000,000,000,000 entries, more than its \d+ bytes"):
        read_matrix(huge)
    dense = write_text(tmp_path / "dense.mtx", "%%MatrixMarket matrix array real general\n100000 100000\n1\n2\n")
    with pytest.raises(MatrixFileError, match=r"dense.mtx' declares 10,000,000,000 entries, more than its \d+ bytes"):
        read_matrix(dense)  # before: SciPy tried to allocate 74.5 GiB
    integer = write_text(tmp_path / "int.mtx", f"{HEADER} integer general\n2 2 1\n1 1 100000000000000000000\n")
    with pytest.raises(MatrixFileError, match="int.mtx'"):
        read_matrix(integer)
    wide = write_text(tmp_path / "wide.mtx", f"{HEADER} real general\n100000000000000000000 3 1\n1 1 1\n")
    with pytest.raises(MatrixFileError, match="wide.mtx'"):
        read_matrix(wide)


def test_unwritable_path(tmp_path):
    with pytest.raises(MatrixFileError, match="cannot write matrix file"):
        write_matrix(tmp_path / "no" / "such" / "dir.mtx", sp.eye_array(2, format="csr"))


def test_write_rejects_dense():
    with pytest.raises(TypeError, match="write_matrix takes a scipy.sparse matrix"):
        write_matrix("x.mtx", np.eye(2))
