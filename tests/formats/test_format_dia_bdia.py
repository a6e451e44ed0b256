"""DIA and BDIA: exact layouts on the papers' examples, parameters, fill guard, round trips, products."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.errors import FormatFillError
from cocktail.formats import get
from cocktail.formats.bdia import BDIA, band_diagonal_offsets
from cocktail.formats.csr import CSR
from cocktail.formats.dia import DIA, diagonal_offsets
from cocktail.reference import product_for, spmv

FORMATS = (DIA, BDIA)

# Bell & Garland Fig. 5 (A) and clSpMV Eq. (1) (B): the same pattern, offsets -2, 0, 1.
A_BG = np.array([[1, 7, 0, 0], [0, 2, 8, 0], [5, 0, 3, 9], [0, 6, 0, 4]], dtype=float)
B_CL = np.array([[3, 7, 0, 0], [0, 4, 8, 0], [1, 0, 5, 9], [0, 2, 0, 6]], dtype=float)


def csr_of(dense, index_dtype=None, dtype=None):
    S = sp.csr_array(np.asarray(dense))
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype, dtype=dtype)


def random_triplets(rng, m, n, nnz, dtype, ndiag=None):
    """Entries with duplicates and explicit zeros; on ``ndiag`` random diagonals when given."""
    if m == 0 or n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype)
    rows = rng.integers(0, m, nnz)
    if ndiag is None:
        cols = rng.integers(0, n, nnz)
    else:
        offs = rng.integers(-m + 1, n, ndiag)
        cols = rows + offs[rng.integers(0, ndiag, nnz)]
    keep = (cols >= 0) & (cols < n) & (rows < m)
    rows, cols = rows[keep], cols[keep]
    vals = rng.standard_normal(rows.shape[0])
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(rows.shape[0])
    vals = vals.astype(dtype)
    vals[rng.random(rows.shape[0]) < 0.1] = 0  # explicit zeros (some summed with duplicates)
    if rows.shape[0] > 2:  # force a few duplicates
        rows = np.concatenate([rows, rows[:2]])
        cols = np.concatenate([cols, cols[:2]])
        vals = np.concatenate([vals, vals[:2]])
    return rows, cols, vals


def random_csr(rng, m, n, nnz, dtype=np.float64, index_dtype=np.int32, ndiag=None):
    rows, cols, vals = random_triplets(rng, m, n, nnz, dtype, ndiag)
    return CSR.from_triplets(rows, cols, vals, (m, n), index_dtype)


def assert_same_csr(a, b):
    assert a.shape == b.shape and a.index_dtype == b.index_dtype and a.dtype == b.dtype
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.indptr.dtype == b.indptr.dtype and a.indices.dtype == b.indices.dtype
    # bitwise: keeps -0.0 and exact values
    np.testing.assert_array_equal(a.data.view(np.uint8), b.data.view(np.uint8))


# --- the papers' examples ---------------------------------------------------------------
def test_dia_bell_garland_fig5():
    fmt = DIA.from_csr(csr_of(A_BG), align=1)
    np.testing.assert_array_equal(fmt.offsets, [-2, 0, 1])
    assert fmt.offsets.dtype == np.int32
    # the paper's data array, transposed (its rows are our columns); '*' slots hold 0
    np.testing.assert_array_equal(fmt.data, [[0, 0, 5, 6], [1, 2, 3, 4], [7, 8, 9, 0]])
    assert fmt.data.flags.c_contiguous and fmt.stride == 4 and fmt.stored_slots == 12
    assert fmt.describe() == {"diagonals": 3, "stride": 4, "offsets": "-2..1"}


def test_dia_default_align_pads_stride():
    fmt = DIA.from_csr(csr_of(A_BG))
    assert fmt.data.shape == (3, 32) and fmt.stride == 32 and fmt.stored_slots == 96
    np.testing.assert_array_equal(fmt.data[:, :4], [[0, 0, 5, 6], [1, 2, 3, 4], [7, 8, 9, 0]])
    assert not fmt.data[:, 4:].any()
    assert fmt.padding_ratio == 96 / 9
    assert DIA.from_csr(csr_of(np.eye(33)), align=8).data.shape == (1, 40)


def test_dia_clspmv_fig1():
    fmt = DIA.from_csr(csr_of(B_CL), align=4)
    np.testing.assert_array_equal(fmt.offsets, [-2, 0, 1])
    np.testing.assert_array_equal(fmt.data.ravel(), [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0])


def test_bdia_clspmv_fig2():
    fmt = BDIA.from_csr(csr_of(B_CL), align=4)
    np.testing.assert_array_equal(fmt.offsets, [-2, 0])
    np.testing.assert_array_equal(fmt.band_ptr, [0, 1, 3])
    np.testing.assert_array_equal(fmt.data.ravel(), [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0])
    assert fmt.offsets.dtype == np.int32 and fmt.band_ptr.dtype == np.int32
    assert fmt.describe() == {"bands": 2, "diagonals": 3, "stride": 4, "widest band": 2, "offsets": "-2..1"}


def test_bdia_bell_garland_fig5():
    fmt = BDIA.from_csr(csr_of(A_BG), align=1)
    np.testing.assert_array_equal(fmt.offsets, [-2, 0])
    np.testing.assert_array_equal(fmt.band_ptr, [0, 1, 3])
    np.testing.assert_array_equal(fmt.data, DIA.from_csr(csr_of(A_BG), align=1).data)


@pytest.mark.parametrize("cls", FORMATS)
@pytest.mark.parametrize("dense", [A_BG, B_CL])
def test_examples_product_and_round_trip(cls, dense):
    csr = csr_of(dense)
    fmt = cls.from_csr(csr)
    x = np.array([1.0, -2.0, 3.0, 0.5])
    np.testing.assert_array_equal(spmv(fmt, x), dense @ x)
    assert_same_csr(fmt.to_csr(), csr)


def test_spmv_bytes_examples():
    # 3 offsets * 4 + valid slots (2 + 4 + 3 = 9) * 8 * 2 (data, x) + 4 rows * 8 (y)
    assert DIA.from_csr(csr_of(A_BG)).spmv_bytes() == 12 + 9 * 16 + 32
    assert DIA.from_csr(csr_of(A_BG)).spmv_bytes(np.float32) == 12 + 9 * 8 + 16
    # BDIA: 2 band offsets * 4 + 3 band_ptr * 4 + the same data, x and y traffic
    assert BDIA.from_csr(csr_of(B_CL)).spmv_bytes() == 8 + 12 + 9 * 16 + 32


def test_spmv_bytes_rectangular_counts_valid_slots_only():
    dense = np.zeros((3, 6))
    dense[0, 5] = dense[2, 4] = dense[1, 0] = 1  # offsets 5, 2, -1
    fmt = DIA.from_csr(csr_of(dense))
    np.testing.assert_array_equal(fmt.offsets, [-1, 2, 5])
    valid = 2 + 3 + 1  # rows 1..2 for -1, rows 0..2 for 2, row 0 for 5
    assert fmt.spmv_bytes() == 3 * 4 + valid * 16 + 3 * 8
    bd = BDIA.from_csr(csr_of(dense))
    np.testing.assert_array_equal(bd.offsets, [-1, 2, 5])
    np.testing.assert_array_equal(bd.band_ptr, [0, 1, 2, 3])
    assert bd.spmv_bytes() == 3 * 4 + 4 * 4 + valid * 16 + 3 * 8


# --- parameters -------------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORMATS)
@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-32, ValueError), (1.5, TypeError),
                                      (True, TypeError), ("32", TypeError), (None, TypeError)])
def test_bad_align(cls, bad, exc):
    with pytest.raises(exc, match=r"align must be a positive integer"):
        cls.from_csr(csr_of(A_BG), align=bad)


@pytest.mark.parametrize("cls", FORMATS)
@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1.0, ValueError), ("20", TypeError),
                                      (False, TypeError), (float("nan"), ValueError)])
def test_bad_max_fill(cls, bad, exc):
    with pytest.raises(exc, match=r"max_fill must be a positive number or None"):
        cls.from_csr(csr_of(A_BG), max_fill=bad)


@pytest.mark.parametrize("cls", FORMATS)
def test_unknown_parameter(cls):
    with pytest.raises(TypeError, match=r"no parameter 'width'.*align, max_fill"):
        cls.from_csr(csr_of(A_BG), width=3)


@pytest.mark.parametrize("cls", FORMATS)
def test_params_recorded(cls):
    assert cls.from_csr(csr_of(A_BG)).params == {"align": 32, "max_fill": 20.0}
    assert cls.from_csr(csr_of(A_BG), align=np.int64(16), max_fill=None).params["align"] == 16


@pytest.mark.parametrize("cls", FORMATS)
def test_max_fill_refusal(cls):
    n = 50
    csr = csr_of(np.fliplr(np.eye(n)))  # anti-diagonal: n diagonals (odd offsets) of one entry each
    with pytest.raises(FormatFillError, match=rf"format '{cls.name}' would store 2,500 values for 50 stored "
                                              r"entries \(fill 50\.0 > max_fill=20\).*max_fill="):
        cls.from_csr(csr)
    with pytest.raises(FormatFillError):
        cls.from_csr(csr, max_fill=49)
    assert cls.from_csr(csr, max_fill=50).offsets.shape[0] == n  # no two offsets are consecutive
    fmt = cls.from_csr(csr, max_fill=None)
    assert_same_csr(fmt.to_csr(), csr)


# --- layout invariants on random matrices -------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("shape", [(40, 40), (37, 90), (90, 37), (1, 1), (1, 64), (64, 1)])
def test_layout_invariants(seed, shape):
    rng = np.random.default_rng(seed)
    m, n = shape
    csr = random_csr(rng, m, n, 3 * max(m, n), ndiag=6)
    dia = DIA.from_csr(csr, align=16, max_fill=None)
    off = dia.offsets.astype(np.int64)
    assert np.all(np.diff(off) > 0)
    np.testing.assert_array_equal(off, np.unique(csr.indices - csr.row_ids()))
    np.testing.assert_array_equal(diagonal_offsets(csr), dia.offsets)
    assert dia.data.shape == (off.shape[0], -(-m // 16) * 16) and dia.data.dtype == csr.dtype
    dense = csr.to_scipy().toarray()
    for d, o in enumerate(off):
        for i in range(dia.stride):
            j = i + o
            want = dense[i, j] if i < m and 0 <= j < n else 0
            assert dia.data[d, i] == want
    bd = BDIA.from_csr(csr, align=16, max_fill=None)
    np.testing.assert_array_equal(bd.data, dia.data)
    np.testing.assert_array_equal(band_diagonal_offsets(bd.offsets, bd.band_ptr), off)
    ptr = bd.band_ptr
    assert ptr[0] == 0 and ptr[-1] == off.shape[0] and np.all(np.diff(ptr) > 0)
    np.testing.assert_array_equal(bd.offsets, off[ptr[:-1]])
    # bands are maximal: the diagonal after a band's last one is not the next offset
    last = bd.offsets[:-1].astype(np.int64) + np.diff(ptr)[:-1] - 1
    assert np.all(bd.offsets[1:] > last + 1)


def test_bands_of_a_stencil():
    # 2-D 5-point Laplacian on an 8x8 grid: offsets -8, -1, 0, 1, 8 -> bands [-8], [-1..1], [8]
    g = 8
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(g, g))
    L = sp.kronsum(T, T, format="csr")
    fmt = BDIA.from_csr(csr_of(L.toarray()))
    np.testing.assert_array_equal(fmt.offsets, [-8, -1, 8])
    np.testing.assert_array_equal(fmt.band_ptr, [0, 1, 4, 5])
    assert fmt.describe()["widest band"] == 3


# --- round trip and products --------------------------------------------------------------
SHAPES = [(0, 0), (0, 7), (7, 0), (1, 1), (33, 33), (20, 55), (55, 20), (100, 100)]


@pytest.mark.parametrize("cls", FORMATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("banded", [True, False])
def test_round_trip_and_product(cls, shape, dtype, index_dtype, banded):
    rng = np.random.default_rng(zlib.crc32(repr((shape, np.dtype(dtype).name, banded)).encode()))
    m, n = shape
    rows, cols, vals = random_triplets(rng, m, n, 2 * max(m, n), dtype, ndiag=5 if banded else None)
    csr = CSR.from_triplets(rows, cols, vals, shape, index_dtype)
    fmt = cls.from_csr(csr, max_fill=None)
    assert fmt.dtype == np.dtype(dtype) and fmt.data.dtype == np.dtype(dtype)
    assert fmt.offsets.dtype == np.dtype(index_dtype)
    assert fmt.zero_row.dtype == np.dtype(index_dtype)
    assert_same_csr(fmt.to_csr(), csr)
    ref = sp.coo_array((vals, (rows, cols)), shape=shape).toarray()  # duplicates summed
    X = (rng.standard_normal((n, 3)) + (1j * rng.standard_normal((n, 3)) if np.dtype(dtype).kind == "c" else 0))
    X = X.astype(dtype)
    Y = spmv(fmt, X)
    assert Y.shape == (m, 3) and Y.dtype == np.dtype(dtype)
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-12
    np.testing.assert_allclose(Y, ref @ X, rtol=tol, atol=tol)
    y1 = spmv(fmt, X[:, 0].copy())
    assert y1.shape == (m,)
    np.testing.assert_allclose(y1, ref @ X[:, 0], rtol=tol, atol=tol)


@pytest.mark.parametrize("cls", FORMATS)
@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (6, 6)])
def test_no_diagonals(cls, shape):
    m, n = shape
    csr = CSR.from_triplets(np.zeros(0, int), np.zeros(0, int), np.zeros(0), shape, np.int32)
    fmt = cls.from_csr(csr)
    assert fmt.data.shape == (0, -(-m // 32) * 32) and fmt.offsets.shape == (0,)
    assert fmt.stored_slots == 0 and fmt.padding_ratio == 1.0
    assert fmt.spmv_bytes() == m * 8 + (4 if cls is BDIA else 0)
    if cls is BDIA:
        np.testing.assert_array_equal(fmt.band_ptr, [0])
        assert fmt.describe() == {"bands": 0, "diagonals": 0, "stride": fmt.stride}
    else:
        assert fmt.describe() == {"diagonals": 0, "stride": fmt.stride}
    np.testing.assert_array_equal(spmv(fmt, np.ones((n, 2))), np.zeros((m, 2)))
    assert_same_csr(fmt.to_csr(), csr)


@pytest.mark.parametrize("cls", FORMATS)
def test_explicit_zeros_kept(cls):
    # (0, 3) is an explicit zero alone on diagonal 3; (2, 2) a zero on a used diagonal; -0.0 at (1, 0)
    rows = np.array([0, 0, 1, 1, 2, 3])
    cols = np.array([0, 3, 0, 1, 2, 3])
    vals = np.array([1.0, 0.0, -0.0, 2.0, 0.0, 4.0])
    csr = CSR.from_triplets(rows, cols, vals, (4, 4), np.int32)
    fmt = cls.from_csr(csr)
    np.testing.assert_array_equal(fmt.zero_row, [0, 1, 2])
    np.testing.assert_array_equal(fmt.zero_col, [3, 0, 2])
    assert np.signbit(fmt.zero_val[1])
    diag = fmt.offsets if cls is DIA else band_diagonal_offsets(fmt.offsets, fmt.band_ptr)
    np.testing.assert_array_equal(diag, [-1, 0, 3])  # the stored zeros' diagonals are occupied
    back = fmt.to_csr()
    assert_same_csr(back, csr)
    assert back.nnz == 6


@pytest.mark.parametrize("cls", FORMATS)
def test_nan_values_survive(cls):
    csr = csr_of(np.array([[np.nan, 1.0], [0.0, 2.0]]))
    back = cls.from_csr(csr).to_csr()
    np.testing.assert_array_equal(back.indices, csr.indices)
    assert np.isnan(back.data[0]) and back.data[1:].tolist() == [1.0, 2.0]


# --- the reference reads the format's own arrays ------------------------------------------
def _with(fmt, **changes):
    fields = {k: getattr(fmt, k) for k in fmt.array_fields}
    fields.update(changes)
    return type(fmt)(fmt.shape, fmt.dtype, fmt.index_dtype, fmt.nnz, fmt.params, **fields)


@pytest.mark.parametrize("cls", FORMATS)
def test_reference_ignores_padding_and_outside_slots(cls):
    csr = csr_of(A_BG)
    fmt = cls.from_csr(csr)
    data = fmt.data.copy()
    data[0, :2] = np.nan  # diagonal -2, rows 0-1: columns outside the matrix
    data[2, 3] = np.inf  # diagonal 1, row 3: column 4
    data[:, 4:] = np.nan  # alignment padding
    poisoned = _with(fmt, data=data)
    x = np.arange(1.0, 5.0)
    np.testing.assert_array_equal(spmv(poisoned, x), A_BG @ x)
    assert_same_csr(poisoned.to_csr(), csr)


@pytest.mark.parametrize("cls", FORMATS)
def test_reference_reads_data_and_offsets(cls):
    fmt = cls.from_csr(csr_of(A_BG))
    data = fmt.data.copy()
    data[1, 0] = 100.0  # A[0, 0]
    x = np.ones(4)
    want = A_BG @ x
    want[0] += 99.0
    np.testing.assert_array_equal(spmv(_with(fmt, data=data), x), want)
    # shifting the first (band's) offset moves its diagonal: -2 -> -3 keeps only row 3
    off = fmt.offsets.copy()
    off[0] = -3
    got = product_for(fmt)(_with(fmt, offsets=off), np.ones((4, 1)))[:, 0]
    moved = A_BG @ x - np.array([0, 0, 5, 6]) + np.array([0, 0, 0, 6])
    np.testing.assert_array_equal(got, moved)


def test_bdia_reference_uses_band_ptr():
    fmt = BDIA.from_csr(csr_of(B_CL), align=1)
    # one band of three diagonals -2, -1, 0 instead of [-2] + [0, 1]
    changed = _with(fmt, offsets=np.array([-2], np.int32), band_ptr=np.array([0, 3], np.int32))
    x = np.arange(1.0, 5.0)
    dense = np.zeros((4, 4))
    for j, o in enumerate([-2, -1, 0]):
        for i in range(4):
            if 0 <= i + o < 4:
                dense[i, i + o] = fmt.data[j, i]
    np.testing.assert_array_equal(spmv(changed, x), dense @ x)


@pytest.mark.parametrize("cls", FORMATS)
def test_arrays_read_only_and_registered(cls):
    fmt = cls.from_csr(csr_of(A_BG))
    for name in cls.array_fields:
        assert not getattr(fmt, name).flags.writeable
    assert get(cls.name) is cls
    assert fmt.nbytes == sum(getattr(fmt, k).nbytes for k in cls.array_fields)


@pytest.mark.parametrize("cls", FORMATS)
def test_large_stencil_builds_fast(cls):
    import time

    m = 1_000_000
    i = np.arange(m)
    rows = np.concatenate([i, i[1:], i[:-1], i[1000:]])
    cols = np.concatenate([i, i[1:] - 1, i[:-1] + 1, i[1000:] - 1000])
    csr = CSR.from_triplets(rows, cols, np.ones(rows.shape[0]), (m, m), np.int32)
    t = time.perf_counter()
    fmt = cls.from_csr(csr)
    assert time.perf_counter() - t < 5
    assert fmt.data.shape == (4, m)
    y = spmv(fmt, np.ones(m))
    assert y[0] == 2 and y[1500] == 4


@pytest.mark.parametrize("shape, entries", [((30, 30), 120), ((5, 200_000), 4), ((200_000, 3), 5), ((40, 70), 0)])
def test_diagonal_offsets_by_table_and_by_sort_agree(monkeypatch, shape, entries):
    """The occupied diagonals come from a table of flags (one per possible diagonal) or, for a nearly empty
    matrix of far more possible diagonals than entries, from a sort: both are the sorted distinct col - row."""
    from cocktail.formats import dia

    rng = np.random.default_rng(entries)
    rows, cols = rng.integers(0, shape[0], entries), rng.integers(0, shape[1], entries)
    S = sp.csr_array((rng.standard_normal(entries), (rows, cols)), shape=shape)
    S.sum_duplicates()
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, shape)
    expected = np.unique(S.tocoo().col.astype(np.int64) - S.tocoo().row.astype(np.int64))
    built = {}
    for allowance in (10**12, -10**12):  # the table always, then never
        monkeypatch.setattr(dia, "TABLE_ALLOWANCE", allowance)
        np.testing.assert_array_equal(diagonal_offsets(csr), expected)
        assert diagonal_offsets(csr).dtype == csr.index_dtype
        built[allowance] = DIA.from_csr(csr, max_fill=None)
    a, b = built.values()
    for k in DIA.array_fields:
        assert getattr(a, k).dtype == getattr(b, k).dtype
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
    np.testing.assert_array_equal(a.to_csr().to_scipy().toarray(), S.toarray())
