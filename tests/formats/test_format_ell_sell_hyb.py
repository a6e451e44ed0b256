"""ELL, SELL and HYB: exact layouts on the papers' examples, parameters, fill guard, products."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.errors import FormatFillError
from cocktail.formats import CSR, get
from cocktail.formats.ell import ELL, ell_arrays
from cocktail.formats.hyb import HYB
from cocktail.formats._params import pointer_dtype
from cocktail.formats.sell import SELL
from cocktail.reference import spmv
from cocktail.tuning.format_rules import format_params

# Bell & Garland Fig. 7 matrix A, and clSpMV's matrix B (Eq. 1).
A = np.array([[1, 7, 0, 0], [0, 2, 8, 0], [5, 0, 3, 9], [0, 6, 0, 4]], dtype=float)
B = np.array([[3, 7, 0, 0], [0, 4, 8, 0], [1, 0, 5, 9], [0, 2, 0, 6]], dtype=float)


def csr_of(dense, index_dtype=None, dtype=None):
    s = sp.csr_array(np.asarray(dense))
    return CSR.from_arrays(s.data, s.indices, s.indptr, s.shape, index_dtype=index_dtype, dtype=dtype)


def same_csr(a: CSR, b: CSR):
    assert a.shape == b.shape and a.nnz == b.nnz
    assert a.dtype == b.dtype and a.index_dtype == b.index_dtype
    assert a.indptr.dtype == b.indptr.dtype and a.indices.dtype == b.indices.dtype
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data)


def random_csr(m, n, density, rng, dtype=np.float64, index_dtype=np.int32, skew=False):
    """Random canonical CSR with duplicates (summed), explicit zeros and empty rows."""
    k = int(m * n * density)
    rows = rng.integers(0, max(m, 1), k)
    if skew and m:
        rows = np.concatenate([rows, np.full(3 * n // 2, m // 2), np.full(n // 2, 0)])
    k = rows.shape[0]
    cols = rng.integers(0, max(n, 1), k)
    vals = rng.standard_normal(k).astype(dtype)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(k)
    vals[rng.random(k) < 0.1] = 0  # explicit zeros
    dup = rng.integers(0, max(k, 1), k // 5) if k else np.zeros(0, int)
    rows, cols, vals = (np.concatenate([a, a[dup]]) for a in (rows, cols, vals))
    if m > 3:
        keep = (rows % 7) != 3  # a band of empty rows
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    if m == 0 or n == 0:
        rows = cols = np.zeros(0, np.int64)
        vals = np.zeros(0, dtype)
    return CSR.from_triplets(rows, cols, vals.astype(dtype), (m, n), index_dtype)


# --- ELL -----------------------------------------------------------------------------
def test_ell_bell_garland_fig7_layout():
    # Fig. 7: data = [1 7 *; 2 8 *; 5 3 9; 6 4 *] stored column-major.  (The indices of the
    # last row are [1 3 *]; the text copy of the paper garbles them as [6 4 *].)
    e = ELL.from_csr(csr_of(A), align=1)
    np.testing.assert_array_equal(e.data, [[1, 2, 5, 6], [7, 8, 3, 4], [0, 0, 9, 0]])
    np.testing.assert_array_equal(e.col, [[0, 1, 0, 1], [1, 2, 2, 3], [-1, -1, 3, -1]])
    # Fig. 18: linearisation data = [1 2 5 6 7 8 3 4 * * 9 *]
    np.testing.assert_array_equal(e.data.ravel(), [1, 2, 5, 6, 7, 8, 3, 4, 0, 0, 9, 0])
    assert e.width == 3 and e.stride == 4 and e.col.flags.c_contiguous


def test_ell_clspmv_fig3_layout():
    e = ELL.from_csr(csr_of(B), align=1)
    np.testing.assert_array_equal(e.col.ravel(), [0, 1, 0, 1, 1, 2, 2, 3, -1, -1, 3, -1])
    np.testing.assert_array_equal(e.data.ravel(), [3, 4, 1, 2, 7, 8, 5, 6, 0, 0, 9, 0])


def test_ell_default_alignment_pads_rows():
    csr = csr_of(B, index_dtype=np.int64)
    e = ELL.from_csr(csr)
    assert e.col.shape == (3, 32) and e.data.shape == (3, 32)
    assert e.col.dtype == np.int64 and e.data.dtype == np.float64
    assert (e.col[:, 4:] == -1).all() and (e.data[:, 4:] == 0).all()
    assert e.stored_slots == 96 and e.padding_ratio == pytest.approx(96 / 9)
    assert e.params == {"align": 32, "width": None, "max_fill": 20.0}
    same_csr(e.to_csr(), csr)


def test_ell_explicit_width_and_errors():
    csr = csr_of(B)
    e = ELL.from_csr(csr, width=5, align=1)
    assert e.col.shape == (5, 4) and (e.col[3:] == -1).all()
    same_csr(e.to_csr(), csr)
    with pytest.raises(ValueError, match=r"width=2 is smaller than the longest row \(3 entries\).*'hyb'"):
        ELL.from_csr(csr, width=2)
    for bad, exc in ((-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError)):
        with pytest.raises(exc, match="width"):
            ELL.from_csr(csr, width=bad)
    for bad, exc in ((0, ValueError), (2.0, TypeError), (None, TypeError)):
        with pytest.raises(exc, match="align"):
            ELL.from_csr(csr, align=bad)
    for bad, exc in ((0, ValueError), (-1.0, ValueError), ("x", TypeError)):
        with pytest.raises(exc, match="max_fill"):
            ELL.from_csr(csr, max_fill=bad)
    with pytest.raises(TypeError, match="no parameter 'slice_height'"):
        ELL.from_csr(csr, slice_height=4)


def test_ell_max_fill():
    # 100 rows of one entry, one row of 100 entries: ELL would store 101*100 slots for 200 entries.
    rows = np.concatenate([np.arange(100), np.full(100, 100)])
    cols = np.concatenate([np.zeros(100, int), np.arange(100)])
    csr = CSR.from_triplets(rows, cols, np.ones(200), (101, 100), np.int32)
    with pytest.raises(FormatFillError, match=r"format 'ell' would store 10,100 values for 200.*max_fill=20"):
        ELL.from_csr(csr)
    e = ELL.from_csr(csr, max_fill=None)
    assert e.width == 100
    assert ELL.from_csr(csr, max_fill=51).width == 100
    with pytest.raises(FormatFillError):
        ELL.from_csr(csr, max_fill=50)


def test_ell_arrays_overflow_mask():
    csr = csr_of(B)
    col, data, over = ell_arrays(csr, 2, 1)
    np.testing.assert_array_equal(col, [[0, 1, 0, 1], [1, 2, 2, 3]])
    np.testing.assert_array_equal(data, [[3, 4, 1, 2], [7, 8, 5, 6]])
    np.testing.assert_array_equal(over, [0, 0, 0, 0, 0, 0, 1, 0, 0])
    col, data, over = ell_arrays(csr, 0, 8)
    assert col.shape == (0, 8) and over.all()


def test_ell_bytes_and_describe():
    e = ELL.from_csr(csr_of(B))
    # width*rows*(idx+val) + nnz*val + rows*val
    assert e.spmv_bytes() == 3 * 4 * (4 + 8) + 9 * 8 + 4 * 8
    assert e.spmv_bytes(np.float32) == 3 * 4 * (4 + 4) + 9 * 4 + 4 * 4
    assert e.describe() == {"width": 3, "stride": 32, "rows at full width": 1}
    assert e.nbytes == 3 * 32 * (4 + 8)


# --- SELL ----------------------------------------------------------------------------
def test_sell_clspmv_fig4_layout():
    s = SELL.from_csr(csr_of(B), slice_height=2)
    np.testing.assert_array_equal(s.slice_ptr, [0, 4, 10])
    np.testing.assert_array_equal(s.slice_width, [2, 3])
    # Col = [0 1, 1 2; 0 2, 1 3, 3 0]  (the paper pads with 0, we with -1)
    np.testing.assert_array_equal(s.col, [0, 1, 1, 2, 0, 1, 2, 3, 3, -1])
    np.testing.assert_array_equal(s.data, [3, 4, 7, 8, 1, 2, 5, 6, 9, 0])
    np.testing.assert_array_equal(s.perm, [0, 1, 2, 3])
    assert s.slice_ptr.dtype == np.int32 and s.perm.dtype == np.int32 and s.col.dtype == np.int32


def test_sell_last_slice_and_width_multiple():
    dense = np.vstack([B, [[0, 0, 0, 1]]])  # 5 rows, C=2: the 3rd slice has one missing row
    csr = csr_of(dense)
    s = SELL.from_csr(csr, slice_height=2, width_multiple=4)
    np.testing.assert_array_equal(s.slice_width, [4, 4, 4])
    np.testing.assert_array_equal(s.slice_ptr, [0, 8, 16, 24])
    last = s.col[16:].reshape(4, 2)  # (k, local row)
    np.testing.assert_array_equal(last, [[3, -1], [-1, -1], [-1, -1], [-1, -1]])
    assert s.stored_slots == 24
    same_csr(s.to_csr(), csr)
    # bytes: slice_ptr + slots of real rows*(idx+val) + perm + x + y; the missing row's 4 slots are left out
    assert s.spmv_bytes() == 4 * 4 + (24 - 4) * 12 + 5 * 4 + 10 * 8 + 5 * 8


def test_sell_sort_window():
    lengths = [1, 3, 2, 0, 4, 1, 0, 2]
    rows = np.repeat(np.arange(8), lengths)
    cols = np.concatenate([np.arange(k) for k in lengths])
    csr = CSR.from_triplets(rows, cols, np.arange(1, rows.size + 1, dtype=float), (8, 5), np.int32)
    s = SELL.from_csr(csr, slice_height=2, sort_window=4)
    np.testing.assert_array_equal(s.perm, [1, 2, 0, 3, 4, 7, 5, 6])
    np.testing.assert_array_equal(s.slice_width, [3, 1, 4, 1])
    np.testing.assert_array_equal(s.slice_ptr, [0, 6, 8, 16, 18])
    # slice 0 holds rows 1 and 2: row 1 = cols 0,1,2; row 2 = cols 0,1,-
    np.testing.assert_array_equal(s.col[:6], [0, 0, 1, 1, 2, -1])
    same_csr(s.to_csr(), csr)
    x = np.arange(5.0) + 1
    np.testing.assert_allclose(spmv(s, x), csr.to_scipy() @ x)
    # Equal lengths keep their order (stable); one window over everything sorts globally.
    np.testing.assert_array_equal(SELL.from_csr(csr_of(np.eye(4)), slice_height=2, sort_window=4).perm,
                                  [0, 1, 2, 3])
    np.testing.assert_array_equal(SELL.from_csr(csr, slice_height=1, sort_window=8).perm,
                                  [4, 1, 2, 7, 0, 5, 3, 6])
    assert s.describe() == {"slices": 4, "slice height": 2, "slice width min": 1,
                            "slice width max": 4, "sorting window": 4, "short columns": "no"}


def test_sell_parameter_errors():
    csr = csr_of(B)
    with pytest.raises(ValueError, match="sort_window must be 1 .* multiple of slice_height=4, got 6"):
        SELL.from_csr(csr, slice_height=4, sort_window=6)
    for name in ("slice_height", "sort_window", "width_multiple"):
        with pytest.raises(ValueError, match=name):
            SELL.from_csr(csr, **{name: 0})
        with pytest.raises(TypeError, match=name):
            SELL.from_csr(csr, **{name: 2.5})
    with pytest.raises(TypeError, match="no parameter 'width'"):
        SELL.from_csr(csr, width=3)


def test_sell_max_fill():
    rows = np.concatenate([np.arange(64), np.full(64, 0)])
    cols = np.concatenate([np.zeros(64, int), np.arange(64)])
    csr = CSR.from_triplets(rows, cols, np.ones(128), (64, 64), np.int32)  # row 0: 64 entries, others 1
    with pytest.raises(FormatFillError, match=r"format 'sell' would store 2,080 values for 127"):
        SELL.from_csr(csr, slice_height=32, max_fill=10)
    assert SELL.from_csr(csr, slice_height=32, max_fill=None).stored_slots == 2080
    assert SELL.from_csr(csr, slice_height=1).stored_slots == 127  # one-row slices: no padding


def test_wide_slice_pointers():
    assert pointer_dtype(np.int32, 2**31 - 1) == np.int32
    assert pointer_dtype(np.int32, 2**31) == np.int64
    assert pointer_dtype(np.int64, 5) == np.int64


# --- HYB -----------------------------------------------------------------------------
def test_hyb_bell_garland_split():
    csr = csr_of(B)
    h = HYB.from_csr(csr, **format_params("hyb", csr.dtype, {"align": 1}))
    assert h.ell_width == 2  # rows of 2, 2, 3, 2 entries: every row reaches 2
    assert isinstance(h.ell, ELL) and h.ell.params["width"] == 2 and h.ell.nnz == 8
    np.testing.assert_array_equal(h.ell.col, [[0, 1, 0, 1], [1, 2, 2, 3]])
    np.testing.assert_array_equal(h.coo.row, [2])
    np.testing.assert_array_equal(h.coo.col, [3])
    np.testing.assert_array_equal(h.coo.data, [9])
    assert h.nnz == 9 and h.stored_slots == 9
    assert set(h.arrays()) == {"ell.col", "ell.data", "coo.row", "coo.col", "coo.data"}
    same_csr(h.to_csr(), csr)
    ell_bytes = 2 * 4 * 12 + 8 * 8 + 4 * 8  # width*rows*(idx+val) + nnz*val + rows*val
    coo_bytes = 1 * 16 + 1 * 8 + 4 * 8  # nnz*(2*idx+val) + nnz*val + rows*val
    assert h.ell.spmv_bytes() == ell_bytes and h.coo.spmv_bytes() == coo_bytes
    # y once: the ELL kernel writes the 4 rows, then the COO kernel reads and writes row 2 alone
    assert h.spmv_bytes() == ell_bytes + coo_bytes - 4 * 8 + 2 * 1 * 8
    assert h.describe() == {"ell width K": 2, "share in ELL": round(8 / 9, 4),
                            "share in COO": round(1 / 9, 4)}


def test_hyb_explicit_width_and_rule():
    csr = csr_of(B)
    h = HYB.from_csr(csr, ell_width=0)
    assert h.ell.col.shape == (0, 32) and h.coo.nnz == 9
    same_csr(h.to_csr(), csr)
    h = HYB.from_csr(csr, ell_width=5)
    assert h.coo.nnz == 0 and h.ell.width == 5
    same_csr(h.to_csr(), csr)
    h = HYB.from_csr(csr, width_rule=lambda lengths: 1)
    assert h.ell_width == 1 and h.coo.nnz == 5
    np.testing.assert_array_equal(h.coo.row, [0, 1, 2, 2, 3])
    np.testing.assert_array_equal(h.coo.col, [1, 2, 2, 3, 3])
    same_csr(h.to_csr(), csr)
    with pytest.raises(TypeError, match="width_rule must be a callable"):
        HYB.from_csr(csr, width_rule=3)
    with pytest.raises(ValueError, match="width_rule result"):
        HYB.from_csr(csr, width_rule=lambda lengths: -1)
    with pytest.raises(ValueError, match="ell_width"):
        HYB.from_csr(csr, ell_width=-2)
    with pytest.raises(TypeError, match="align"):
        HYB.from_csr(csr, align="32")
    with pytest.raises(TypeError, match="no parameter 'max_fill'"):
        HYB.from_csr(csr, max_fill=3)


def test_hyb_needs_a_width_or_a_rule():
    csr = csr_of(B)
    for params in ({}, {"ell_width": None}, {"ell_width": None, "width_rule": None, "align": 1}):
        with pytest.raises(TypeError, match=r"hyb needs ell_width= or width_rule=.*format_params") as info:
            HYB.from_csr(csr, **params)
        assert "SparseMatrix" in str(info.value)
    assert HYB.defaults["width_rule"] is None and HYB.defaults["ell_width"] is None


def test_hyb_explicit_width_fill_guard():
    csr = csr_of(B)
    with pytest.raises(FormatFillError, match=r"format 'hyb' would store 400 values.*smaller ell_width="):
        HYB.from_csr(csr, ell_width=100)
    HYB.from_csr(csr, ell_width=45)  # 180 slots = 20 per entry: allowed


def test_hyb_skewed_rows():
    rng = np.random.default_rng(5)
    csr = random_csr(300, 200, 0.02, rng, skew=True)
    h = HYB.from_csr(csr, **format_params("hyb", csr.dtype, {}))
    lengths = np.diff(csr.indptr)
    k = h.ell_width
    assert (lengths >= k).sum() >= 100 and (lengths >= k + 1).sum() < 100
    assert h.coo.nnz == np.maximum(lengths - k, 0).sum() and h.ell.nnz + h.coo.nnz == csr.nnz
    assert np.all(np.diff(h.coo.row) >= 0)
    same_csr(h.to_csr(), csr)
    x = rng.standard_normal(200)
    np.testing.assert_allclose(spmv(h, x), csr.to_scipy() @ x, rtol=1e-12, atol=1e-12)


# --- all three: products and round trips ---------------------------------------------
VARIANTS = [
    ("ell", {}),
    ("ell", {"align": 1, "width": 40}),
    ("sell", {}),
    ("sell", {"slice_height": 4, "sort_window": 8, "width_multiple": 2}),
    ("sell", {"slice_height": 1}),
    ("hyb", {}),
    ("hyb", {"ell_width": 1, "align": 1}),
]


@pytest.mark.parametrize("name,params", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_products_and_round_trip(name, params, dtype, index_dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}{params}{np.dtype(dtype).name}".encode()))
    csr = random_csr(97, 61, 0.05, rng, dtype=dtype, index_dtype=index_dtype, skew=name != "ell")
    assert (csr.data == 0).any()  # explicit zeros are part of the test
    given = {"max_fill": None, **params} if name != "hyb" else params
    fmt = get(name).from_csr(csr, **format_params(name, dtype, given))
    assert fmt.nnz == csr.nnz and fmt.dtype == np.dtype(dtype) and fmt.index_dtype == np.dtype(index_dtype)
    for arr in fmt.arrays().values():
        assert not arr.flags.writeable
        if arr.dtype.kind == "i":
            assert arr.dtype == np.dtype(index_dtype)
    same_csr(fmt.to_csr(), csr)
    ref = csr.to_scipy()
    tol = 2e-5 if dtype == np.float32 else 1e-12
    x = rng.standard_normal(61).astype(dtype)
    y = spmv(fmt, x)
    assert y.dtype == np.dtype(dtype) and y.shape == (97,)
    np.testing.assert_allclose(y, ref @ x, rtol=tol, atol=tol)
    X = rng.standard_normal((61, 3)).astype(dtype)
    np.testing.assert_allclose(spmv(fmt, X), ref @ X, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["ell", "sell", "hyb"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (6, 4)])
def test_empty_shapes(name, shape):
    csr = CSR.from_triplets(np.zeros(0, int), np.zeros(0, int), np.zeros(0), shape, np.int32)
    fmt = get(name).from_csr(csr, **format_params(name, csr.dtype, {}))
    same_csr(fmt.to_csr(), csr)
    assert fmt.nnz == 0 and fmt.padding_ratio >= 0
    y = spmv(fmt, np.ones(shape[1]))
    np.testing.assert_array_equal(y, np.zeros(shape[0]))
    assert spmv(fmt, np.ones((shape[1], 2))).shape == (shape[0], 2)
    fmt.describe()
    assert fmt.spmv_bytes() >= 0


@pytest.mark.parametrize("name", ["ell", "sell", "hyb"])
def test_padding_never_reads_x(name):
    # Column n-1 holds no entry; a padding slot that indexed x with -1 would pick up the NaN.
    csr = csr_of(np.hstack([B, np.zeros((4, 1))]))
    x = np.array([1.0, 2.0, 3.0, 4.0, np.nan])
    np.testing.assert_array_equal(spmv(get(name).from_csr(csr, **format_params(name, csr.dtype, {})), x), B @ x[:4])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("name", ["ell", "sell", "hyb"])
def test_explicit_zero_survives(name):
    csr = CSR.from_triplets(np.array([0, 0, 1, 2]), np.array([0, 2, 1, 2]), np.array([1.0, 0.0, 0.0, 2.0]),
                            (3, 3), np.int32)
    fmt = get(name).from_csr(csr, **({"ell_width": 1} if name == "hyb" else {}))
    same_csr(fmt.to_csr(), csr)
    # A stored zero multiplies x like any entry (0 * inf = nan, as in the CSR reference).
    y = spmv(fmt, np.array([1.0, np.inf, 1.0]))
    assert np.isnan(y[1]) and y[0] == 1.0 and y[2] == 2.0


def test_reference_reads_the_arrays():
    csr = csr_of(B)
    for fmt in (ELL.from_csr(csr), SELL.from_csr(csr, slice_height=2)):
        copies = {}

        def grab(a, copies=copies):
            copies[id(a)] = a.copy()
            return copies[id(a)]

        twin = fmt._replace(grab)
        data = copies[id(fmt.data)]
        data[data == 9] = 10  # B[2, 3]: 9 -> 10
        y = spmv(twin, np.ones(4))
        np.testing.assert_array_equal(y, B.sum(axis=1) + [0, 0, 1, 0])


def test_large_build_is_vectorised():
    import time

    rng = np.random.default_rng(1)
    m = 200_000
    lengths = rng.poisson(8, m)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = rng.integers(0, m, indptr[-1]).astype(np.int32)
    indices.sort()  # any order: from_arrays canonicalises
    csr = CSR.from_arrays(rng.standard_normal(indptr[-1]), indices, indptr, (m, m))
    start = time.perf_counter()
    for name, params in (("ell", {}), ("sell", {"sort_window": 256}), ("hyb", {})):
        get(name).from_csr(csr, **format_params(name, csr.dtype, params)).to_csr()
    assert time.perf_counter() - start < 20


def test_sell_fill_excludes_missing_rows_of_the_last_slice():
    csr = CSR.from_triplets(np.arange(5), np.zeros(5, int), np.ones(5), (5, 3), np.int32)
    # one slice of 32 rows holds only 5 real rows: 5 logical slots, fill 1.0
    fmt = SELL.from_csr(csr, slice_height=32, max_fill=1.0)
    assert fmt.stored_slots == 32


def test_sell_short_columns():
    """16-bit columns as offsets from each slice's lowest one: the same matrix, 2 bytes an index."""
    rng = np.random.default_rng(5)
    n = 250_000
    rows = np.repeat(np.arange(64), 5)
    cols = rows * 3000 + rng.integers(0, 50_000, rows.size)  # a slice of 4 rows spans under 59,000 columns
    S = sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(64, n))
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    full = SELL.from_csr(csr, slice_height=4)
    short = SELL.from_csr(csr, slice_height=4, short_columns=None)  # where it fits: here it does
    assert short.short and short.col.dtype == np.uint16 and short.slice_base.shape == (16,)
    assert short.resolved_params()["short_columns"] is True and "yes" in short.describe()["short columns"]
    np.testing.assert_array_equal(short.columns(), full.columns())
    same_csr(short.to_csr(), csr)
    x = rng.standard_normal(n)
    np.testing.assert_allclose(spmv(short, x), S @ x, rtol=1e-12)
    saved = full.col.nbytes - short.col.nbytes - short.slice_base.nbytes
    assert full.spmv_bytes() - short.spmv_bytes() == saved == full.stored_slots * 2 - 16 * 4
    assert full.dram_bytes() - short.dram_bytes() == saved
    # a slice spanning more than 65,535 columns: None keeps full columns, True names the slice
    W = sp.csr_array((np.ones(2), ([0, 0], [0, 70_000])), shape=(1, 70_001))
    wide = CSR.from_arrays(W.data, W.indices, W.indptr, W.shape)
    assert not SELL.from_csr(wide, short_columns=None).short
    with pytest.raises(ValueError, match="slice 0 spans 70,001 .columns 0 to 70000."):
        SELL.from_csr(wide, short_columns=True)
    with pytest.raises(ValueError, match="short_columns must be True, False or None"):
        SELL.from_csr(wide, short_columns=1)


@pytest.mark.parametrize("params", [{"slice_height": 4}, {"slice_height": 4, "sort_window": 8},
                                    {"slice_height": 3, "width_multiple": 2}, {"slice_height": 32}])
def test_sell_short_columns_hold_each_slice_from_its_lowest_column(params):
    """Short columns are the offsets from each slice's lowest column, found from each row's first and last entry
    (empty rows and a partial last slice included): checked against every slot's column."""
    rng = np.random.default_rng(11)
    csr = random_csr(45, 90, 0.08, rng)
    short = get("sell").from_csr(csr, short_columns=None, max_fill=None, **params)
    full = get("sell").from_csr(csr, short_columns=False, max_fill=None, **params)
    assert short.short and not full.short
    cols = full.col.astype(np.int64)
    c = short.slice_height
    for s in range(short.nslices):
        lo, hi = int(full.slice_ptr[s]), int(full.slice_ptr[s + 1])
        real = cols[lo:hi][cols[lo:hi] >= 0]
        assert int(short.slice_base[s]) == (int(real.min()) if real.size else 0)
        expect = np.where(cols[lo:hi] >= 0, cols[lo:hi] - int(short.slice_base[s]), 0xFFFF)
        np.testing.assert_array_equal(short.col[lo:hi], expect.astype(np.uint16))
    np.testing.assert_array_equal(short.columns(), cols)
    for k in ("slice_ptr", "slice_width", "data", "perm"):
        np.testing.assert_array_equal(getattr(short, k), getattr(full, k))
    assert c == params["slice_height"]
