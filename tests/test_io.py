"""Matrix Market and .npz reading and writing, and the errors for bad files."""

from __future__ import annotations

import gzip

import os
import re
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import DeviceMemoryError, MatrixFileError, SparseMatrix, _memory, read_matrix, write_matrix
from cocktail.cli import main

HEADER = "%%MatrixMarket matrix coordinate"
BIG = 3_000_000_000
#: Peak bytes traced while reading a file that asks for too much: the file's size, not its declared shape's.
SMALL_PEAK = 64 << 20


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
    huge = write_text(tmp_path / "huge.mtx", f"{HEADER} real general\n100000000 100000000 1000000000000000\n1 1 1\n")
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


# --- refused before allocating, whatever the size line or shape asks for ---------------------------------------


@pytest.fixture
def free_bytes(monkeypatch):
    """Set the bytes the host-memory probe reports: ``free_bytes(n)``."""
    def setter(n):
        monkeypatch.setattr(_memory, "available", lambda device: n)
    return setter


@pytest.fixture
def no_csr_conversion(monkeypatch):
    """Fail the test, instead of allocating, if a huge COO or CSC reaches its CSR conversion."""
    def fail(self, *args, **kwargs):
        pytest.fail("the CSR conversion ran before the memory check")
    for cls in (sp.coo_array, sp.csc_array):
        monkeypatch.setattr(cls, "tocsr", fail)


def peak_while(fn):
    """``(exception raised by fn(), peak bytes traced meanwhile)``; NumPy reports its arrays to tracemalloc,
    even an allocation that fails."""
    tracemalloc.start()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the caller checks what was raised
        raised = exc
    else:
        raised = None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return raised, peak


def _bench_error(path, capsys) -> str:
    """The one line ``cocktail bench FILE`` prints on stderr (and nothing on stdout), exit status 2."""
    assert main(["bench", str(path), "--cpu", "--formats", "csr", "--repeat", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("cocktail: error:"), err
    return err


@pytest.mark.parametrize("name, text", [
    ("wide.mtx", f"{HEADER} real general\n3 4000000000000000000 2\n1 1 1\n2 2 2\n"),
    ("square.mtx", f"{HEADER} real general\n3037000500 3037000500 2\n1 1 1\n2 2 2\n"),  # 9.2233720370e18
    ("pattern.mtx", f"{HEADER} pattern symmetric\n% c\n4000000000 4000000000 1\n1 1\n"),
    ("dense.mtx", "%%MatrixMarket matrix array real general\n4000000000 4000000000\n1\n2\n"),
])
def test_size_line_whose_rows_times_cols_overflows_int64_is_refused_with_its_line(name, text, tmp_path, capsys,
                                                                                 no_csr_conversion):
    path = write_text(tmp_path / name, text)
    line = 3 if name == "pattern.mtx" else 2
    raised, peak = peak_while(lambda: read_matrix(path))
    assert isinstance(raised, MatrixFileError), raised
    assert re.search(rf"{name}' is not a readable Matrix Market file: line {line}: size line declares [\d,]+ x "
                     r"[\d,]+: its rows x cols = [\d.e+]+ positions overflow int64", str(raised)), str(raised)
    assert "split the matrix" in str(raised) and peak < SMALL_PEAK
    assert "overflow int64" in _bench_error(path, capsys)


def test_largest_square_whose_positions_fit_int64_goes_on_to_the_memory_check(tmp_path, free_bytes,
                                                                                no_csr_conversion):
    n = 3_037_000_499  # n * n = 9.2233720309e18 <= 2**63 - 1
    free_bytes(10**9)
    path = write_text(tmp_path / "edge.mtx", f"{HEADER} real general\n{n} {n} 1\n{n} {n} 1\n")
    with pytest.raises(DeviceMemoryError, match="3,037,000,499 x 3,037,000,499 matrix with 1 entries"):
        read_matrix(path)


def test_npz_shape_whose_rows_times_cols_overflows_int64_is_refused(tmp_path, no_csr_conversion):
    coo = _npz(tmp_path / "coo.npz", format=np.array(b"coo"), shape=np.array([3, 4 * 10**18]), data=np.ones(1),
               row=np.array([0]), col=np.array([0]))
    csr = _npz(tmp_path / "csr.npz", format=np.array(b"csr"), shape=np.array([3, 2**64 - 1], dtype=np.uint64),
               data=np.ones(1), indices=np.array([0]), indptr=np.array([0, 1, 1, 1]))
    for path, shown in ((coo, "3 x 4,000,000,000,000,000,000"), (csr, "3 x 18,446,744,073,709,551,615")):
        raised, peak = peak_while(lambda: read_matrix(path))
        assert isinstance(raised, MatrixFileError) and peak < SMALL_PEAK, raised
        assert (f"{path.name}': the {path.stem} arrays are not a valid matrix: shape {shown} has rows x cols"
                in str(raised)) and "overflows int64" in str(raised)


@pytest.mark.parametrize("symmetry, text, declared, positions", [
    ("general", "1 1 1\n1 2 2\n2 1 3\n2 2 4\n1 1 5\n", 5, "4 positions of a 2 x 2 matrix"),  # every line there
    ("general", "1 1 1\n2 2 2\n", 5, "4 positions of a 2 x 2 matrix"),                           # two lines of five
    ("symmetric", "1 1 1\n2 1 2\n2 2 3\n2 1 4\n", 4,
     "3 positions of the lower triangle that a 2 x 2 symmetric file lists"),
    ("skew-symmetric", "2 1 1\n2 1 2\n", 2,
     "1 position of the strictly lower triangle that a 2 x 2 skew-symmetric file lists"),
])
def test_more_entries_than_positions_is_refused_at_the_size_line(symmetry, text, declared, positions, tmp_path, capsys):
    path = write_text(tmp_path / "many.mtx", f"{HEADER} real {symmetry}\n% a comment\n2 2 {declared}\n{text}")
    with pytest.raises(MatrixFileError) as info:
        read_matrix(path)
    assert str(info.value) == (f"'{path}' is not a readable Matrix Market file: line 3: size line declares {declared} "
                               f"entries, more than the {positions}; the entry count (its third number) cannot "
                               "exceed them")
    assert positions in _bench_error(path, capsys)


def test_repeated_entries_within_the_positions_are_summed(tmp_path):
    path = write_text(tmp_path / "dup.mtx", f"{HEADER} real general\n2 2 4\n1 1 1\n1 1 2\n2 2 3\n1 2 4\n")
    assert read_matrix(path).toarray().tolist() == [[3, 4], [0, 3]]


_HUGE_FILES = {
    # name: (writer, shape text, entries once expanded, bytes a product needs beside the CSR entries: CSR row
    # pointers where the file holds none, x and y)
    "square.mtx": (lambda p: p.write_text(f"{HEADER} real general\n{BIG} {BIG} 2\n1 1 1\n{BIG} {BIG} 2\n"),
                   "3,000,000,000 x 3,000,000,000", 2, (BIG + 1) * 8 + 2 * BIG * 8),
    "symmetric.mtx.gz": (lambda p: p.write_bytes(gzip.compress(
                             f"{HEADER} real symmetric\n{BIG} {BIG} 2\n1 1 1\n{BIG} 1 2\n".encode())),
                         "3,000,000,000 x 3,000,000,000", 3, (BIG + 1) * 8 + 2 * BIG * 8),  # (BIG, 1) mirrored
    "tall_coo.npz": (lambda p: np.savez(p, format=np.array(b"coo"), shape=np.array([BIG, 3]), data=np.ones(2),
                                        row=np.array([0, BIG - 1]), col=np.array([0, 2])),
                     "3,000,000,000 x 3", 2, (BIG + 1) * 8 + (BIG + 3) * 8),
    "tall_csc.npz": (lambda p: np.savez(p, format=np.array(b"csc"), shape=np.array([BIG, 3]), data=np.ones(2),
                                        indices=np.array([0, BIG - 1]), indptr=np.array([0, 1, 1, 2])),
                     "3,000,000,000 x 3", 2, (BIG + 1) * 8 + (BIG + 3) * 8),
    "wide_csr.npz": (lambda p: np.savez(p, format=np.array(b"csr"), shape=np.array([3, BIG]), data=np.ones(2),
                                        indices=np.array([0, BIG - 1]), indptr=np.array([0, 1, 1, 2])),
                     "3 x 3,000,000,000", 2, (BIG + 3) * 8),  # its row pointers are the file's: x and y only
}


@pytest.mark.parametrize("name", sorted(_HUGE_FILES))
def test_matrix_whose_product_cannot_fit_is_refused_before_its_row_pointers(name, tmp_path, free_bytes,
                                                                          no_csr_conversion, capsys):
    """Before this check, 3e9 rows and two entries allocated 22 GiB of row pointers (the check counted the CSR
    alone, which fit) before the product's x and y failed; a CSR .npz of 3e9 columns was not checked, and
    the bench harness allocated its 24 GB x."""
    write, shape, nnz, need = _HUGE_FILES[name]
    path = tmp_path / name
    write(path)
    free = 20_000_000_000 if name == "wide_csr.npz" else 30_000_000_000  # the 24 GB of row pointers alone would fit
    free_bytes(free)
    raised, peak = peak_while(lambda: read_matrix(path))
    assert isinstance(raised, DeviceMemoryError), raised
    assert peak < SMALL_PEAK
    text = str(raised)
    assert text.startswith(f"'{path}': a {shape} matrix with {nnz} entries needs") and "of host memory" in text
    assert "for x and y of a product with it" in text and f"{free / 1e9:.1f} GB available" in text
    assert ("for its CSR row pointers" in text) == (name != "wide_csr.npz")
    assert raised.needed == need + nnz * 16 * (name != "wide_csr.npz") and raised.available == free
    assert raised.device == "cpu"
    err = _bench_error(path, capsys)
    assert name in err and "x and y of a product with it" in err


@pytest.mark.parametrize("size_line", ["3000000000 1", "1 3000000000", "100000 100000"])
def test_dense_array_with_a_huge_size_line_is_refused_by_its_bytes(size_line, tmp_path, no_csr_conversion):
    path = write_text(tmp_path / "dense.mtx", f"%%MatrixMarket matrix array real general\n{size_line}\n1\n2\n")
    m, n = (int(v) for v in size_line.split())
    raised, peak = peak_while(lambda: read_matrix(path))
    assert isinstance(raised, MatrixFileError) and peak < SMALL_PEAK, raised
    assert f"dense.mtx' declares {m * n:,} entries, more than its" in str(raised)


def test_small_files_still_read_under_the_memory_check(tmp_path, free_bytes, monkeypatch):
    monkeypatch.setattr(_memory, "PROBE_FLOOR", 0)
    path = write_text(tmp_path / "small.mtx", f"{HEADER} real general\n3 4 2\n1 1 1.0\n3 2 2.0\n")
    need = 4 * 4 + 2 * 12 + (3 + 4) * 8  # int32 row pointers, entries, x and y
    free_bytes(need)
    assert read_matrix(path).nnz == 2
    free_bytes(need - 1)
    with pytest.raises(DeviceMemoryError) as info:
        read_matrix(path)
    assert info.value.needed == need
    dense = write_text(tmp_path / "dense.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n4\n")
    free_bytes(3 * 4 + 2 * 12 + 4 * 8)
    assert read_matrix(dense).toarray().tolist() == [[1, 0], [0, 4]]
