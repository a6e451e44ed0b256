"""The blocked formats BCSR, BELL and SBELL (clSpMV §4.4): exact layouts, parameters, products."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import reference
from cocktail.errors import FormatFillError
from cocktail.formats import CSR, block_grid, get
from cocktail.formats.bcsr import BCSR
from cocktail.formats.bell import BELL
from cocktail.formats.sbell import SBELL
from oracle import assert_csr_identical, assert_product_close, assert_same_arrays, random_operand

NAMES = ("bcsr", "bell", "sbell")
SIZES = (1, 2, 3, 4, 8)

# Matrix C of clSpMV Eq. (2); each label's value is its position in LABELS plus one.
LABELS = "0123456789abcdefghijklmnopqrstuv"
C_ROWS = ("0123ghij", "4567klmn", "89abopqr", "cdefstuv")


def vals(text):
    """Values of the labels in ``text`` (spaces ignored)."""
    return np.array([LABELS.index(ch) + 1 for ch in text.replace(" ", "")], dtype=np.float64)


def matrix_c():
    dense = np.array([vals(row) for row in C_ROWS])
    return CSR.from_arrays(*_scipy_arrays(sp.csr_array(dense)), dense.shape)


def _scipy_arrays(S):
    return S.data, S.indices, S.indptr


def csr_from_dense(dense, index_dtype=None):
    S = sp.csr_array(dense)
    return CSR.from_arrays(S.data, S.indices, S.indptr, dense.shape, index_dtype=index_dtype)


def csr_from_triplets(rows, cols, data, shape, index_dtype="int32"):
    idt = np.dtype(index_dtype)
    return CSR.from_triplets(np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(data), shape, idt)


# --- clSpMV's figures ------------------------------------------------------------------------


def test_figure_9_bcsr_2x4():
    fmt = BCSR.from_csr(matrix_c(), block=(2, 4))
    np.testing.assert_array_equal(fmt.row_ptr, [0, 2, 4])
    np.testing.assert_array_equal(fmt.col, [0, 4, 0, 4])
    assert fmt.data.shape == (2, 4, 4)
    np.testing.assert_array_equal(fmt.data.ravel(), vals("0123 ghij 89ab opqr 4567 klmn cdef stuv"))
    assert fmt.row_ptr.dtype == fmt.col.dtype == np.int32


def test_figure_7_bell_2x4():
    fmt = BELL.from_csr(matrix_c(), block=(2, 4), align=1)
    np.testing.assert_array_equal(fmt.col, [[0, 0], [4, 4]])  # "Col = [0 0, 4 4]"
    assert fmt.data.shape == (2, 2, 2, 4)
    np.testing.assert_array_equal(fmt.data.ravel(), vals("0123 89ab 4567 cdef ghij opqr klmn stuv"))


def test_figure_7_bell_default_alignment_pads_superrows():
    fmt = BELL.from_csr(matrix_c(), block=(2, 4))
    assert fmt.col.shape == (2, 32) and fmt.data.shape == (2, 2, 32, 4)
    np.testing.assert_array_equal(fmt.col[:, :2], [[0, 0], [4, 4]])
    assert (fmt.col[:, 2:] == -1).all()
    np.testing.assert_array_equal(fmt.data[:, :, :2, :].ravel(), vals("0123 89ab 4567 cdef ghij opqr klmn stuv"))
    assert not fmt.data[:, :, 2:, :].any()


def test_figure_8_sbell_1x4_slice_height_2():
    fmt = SBELL.from_csr(matrix_c(), block=(1, 4), slice_height=2)
    np.testing.assert_array_equal(fmt.slice_ptr, [0, 4, 8])
    np.testing.assert_array_equal(fmt.col, [0, 0, 4, 4, 0, 0, 4, 4])
    np.testing.assert_array_equal(fmt.data, vals("0123 4567 ghij klmn 89ab cdef opqr stuv"))
    np.testing.assert_array_equal(fmt.slice_widths(), [2, 2])


@pytest.mark.parametrize("name", NAMES)
def test_figures_products_and_round_trip(name):
    csr = matrix_c()
    fmt = get(name).from_csr(csr, block=(2, 4))
    x = np.arange(1.0, 9.0)
    np.testing.assert_allclose(reference.spmv(fmt, x), csr.to_scipy() @ x)
    assert_csr_identical(fmt.to_csr(), csr)


# --- a hand-checked partial-block example -----------------------------------------------------
# 3 x 5, block 2 x 4: 2 superrows, 2 block columns; (2, 4) is an explicit zero that alone
# makes block (1, 1) exist; row 3 and columns 5..7 are padding.

def small_example():
    return csr_from_triplets([0, 0, 1, 2, 2], [0, 4, 1, 3, 4], [1.0, 2.0, 3.0, 4.0, 0.0], (3, 5))


def test_small_example_bcsr():
    fmt = BCSR.from_csr(small_example(), block=(2, 4))
    np.testing.assert_array_equal(fmt.row_ptr, [0, 2, 4])
    np.testing.assert_array_equal(fmt.col, [0, 4, 0, 4])
    want = np.zeros((2, 4, 4))
    want[0, 0, 0], want[1, 0, 1], want[0, 1, 0], want[0, 2, 3] = 1, 3, 2, 4
    np.testing.assert_array_equal(fmt.data, want)
    np.testing.assert_array_equal(fmt.zero_row, [2])
    np.testing.assert_array_equal(fmt.zero_col, [4])
    assert fmt.stored_slots == 32 and fmt.nnz == 5


def test_small_example_bell():
    fmt = BELL.from_csr(small_example(), block=(2, 4), align=1)
    np.testing.assert_array_equal(fmt.col, [[0, 0], [4, 4]])
    want = np.zeros((2, 2, 2, 4))
    want[0, 0, 0, 0], want[0, 1, 0, 1], want[0, 0, 1, 3], want[1, 0, 0, 0] = 1, 3, 4, 2
    np.testing.assert_array_equal(fmt.data, want)


def test_small_example_sbell():
    fmt = SBELL.from_csr(small_example(), block=(2, 4), slice_height=1)
    np.testing.assert_array_equal(fmt.slice_ptr, [0, 2, 4])
    np.testing.assert_array_equal(fmt.col, [0, 4, 0, 4])
    want = np.zeros(32)
    want[[0, 5, 8, 16 + 3]] = [1, 3, 2, 4]
    np.testing.assert_array_equal(fmt.data, want)


def test_sbell_uneven_slices_and_partial_last_slice():
    # rows 0..2, block 1 x 4: row 0 has blocks at columns 0, 4, 8; rows 1 and 2 one each.
    csr = csr_from_triplets([0, 0, 0, 1, 2], [1, 5, 9, 6, 2], [1.0, 2.0, 3.0, 4.0, 5.0], (3, 12))
    fmt = SBELL.from_csr(csr, block=(1, 4), slice_height=2)
    np.testing.assert_array_equal(fmt.slice_ptr, [0, 6, 8])
    np.testing.assert_array_equal(fmt.slice_widths(), [3, 1])
    np.testing.assert_array_equal(fmt.col, [0, 4, 4, -1, 8, -1, 0, -1])
    want = np.zeros(32)
    want[[0 * 4 + 1, 2 * 4 + 1, 4 * 4 + 1, 1 * 4 + 2, 6 * 4 + 2]] = [1, 2, 3, 4, 5]  # slot*4 + cj
    np.testing.assert_array_equal(fmt.data, want)
    # visited slots: slice 0 has 3*2, slice 1 has 1*1 (its second superrow does not exist)
    val, idx = 8, 4
    assert fmt.spmv_bytes() == 3 * idx + 7 * idx + 7 * 4 * val + 5 * 4 * val + 3 * val
    assert_csr_identical(fmt.to_csr(), csr)


def test_extract_places_every_entry():
    blk = block_grid.extract(small_example(), 2, 4)
    assert (blk.superrows, blk.block_cols, blk.nblocks) == (2, 2, 4)
    np.testing.assert_array_equal(blk.block_row, [0, 0, 1, 1])
    np.testing.assert_array_equal(blk.block_col, [0, 1, 0, 1])
    np.testing.assert_array_equal(blk.rank, [0, 1, 0, 1])
    np.testing.assert_array_equal(blk.ptr, [0, 2, 4])
    np.testing.assert_array_equal(blk.entry_block, [0, 1, 0, 2, 3])
    np.testing.assert_array_equal(blk.entry_ri, [0, 0, 1, 0, 0])
    np.testing.assert_array_equal(blk.entry_cj, [0, 0, 1, 3, 0])


# --- independent decoders: the documented layouts, read with plain loops -------------------


def decode(fmt):
    """Dense padded matrix and the block list of ``fmt``, read with loops from the documented layout."""
    m, n = fmt.shape
    r, c = fmt.block
    superrows, block_cols = -(-m // r), -(-n // c)
    dense = np.zeros((superrows * r, block_cols * c), dtype=fmt.dtype)
    blocks = []

    def put(i, col, cell):  # cell(ri, cj) -> value
        assert col % c == 0 and 0 <= col < block_cols * c
        blocks.append((i, col // c))
        for ri in range(r):
            for cj in range(c):
                dense[i * r + ri, col + cj] = cell(ri, cj)

    if fmt.name == "bcsr":
        nb = fmt.col.shape[0]
        assert fmt.data.shape == (r, nb, c) and fmt.row_ptr.shape == (superrows + 1,)
        for i in range(superrows):
            for b in range(fmt.row_ptr[i], fmt.row_ptr[i + 1]):
                put(i, int(fmt.col[b]), lambda ri, cj: fmt.data[ri, b, cj])
    elif fmt.name == "bell":
        K, stride = fmt.col.shape
        assert stride % fmt.params["align"] == 0 and stride >= superrows
        assert fmt.data.shape == (K, r, stride, c)
        for s in range(stride):
            real = fmt.col[:, s] != -1
            assert real[:real.sum()].all()  # blocks packed to the left
            for k in range(K):
                if fmt.col[k, s] == -1:
                    assert not fmt.data[k, :, s, :].any()
                    continue
                assert s < superrows
                put(s, int(fmt.col[k, s]), lambda ri, cj: fmt.data[k, ri, s, cj])
        if K:
            assert (fmt.col[K - 1, :] != -1).any()  # K is the most blocks in one superrow
    else:
        h = fmt.params["slice_height"]
        ptr = fmt.slice_ptr
        assert ptr.shape == (-(-superrows // h) + 1,) and ptr[0] == 0
        assert fmt.col.shape == (int(ptr[-1]),) and fmt.data.shape == (int(ptr[-1]) * r * c,)
        for sl in range(ptr.shape[0] - 1):
            width = (ptr[sl + 1] - ptr[sl]) // h
            assert (ptr[sl + 1] - ptr[sl]) % h == 0
            for u in range(h):
                for k in range(width):
                    slot = ptr[sl] + k * h + u
                    at = [ptr[sl] * r * c + ((k * r + ri) * h + u) * c for ri in range(r)]
                    if fmt.col[slot] == -1:
                        assert not any(fmt.data[a:a + c].any() for a in at)
                        continue
                    assert sl * h + u < superrows
                    put(sl * h + u, int(fmt.col[slot]), lambda ri, cj: fmt.data[at[ri] + cj])
            if width:
                assert (fmt.col[ptr[sl] + (width - 1) * h: ptr[sl + 1]] != -1).any()
    return dense, blocks


def random_csr(rng, m, n, density=0.15, index_dtype="int32", dtype="float64", extras=True):
    """A random CSR with, optionally, duplicates, explicit zeros and empty rows."""
    k = int(density * m * n)
    rows, cols = rng.integers(0, max(m, 1), k), rng.integers(0, max(n, 1), k)
    if extras and m > 3:
        rows = rows[rows % 5 != 2]          # empty rows
        cols = cols[: rows.shape[0]]
    data = rng.standard_normal(rows.shape[0])
    if extras and rows.shape[0] > 4:
        data[::7] = 0.0                      # explicit zeros
        rows = np.r_[rows, rows[:3]]         # duplicates
        cols = np.r_[cols, cols[:3]]
        data = np.r_[data, np.ones(3)]
    data = data.astype(dtype)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal(data.shape[0])
    return csr_from_triplets(rows, cols, data, (m, n), index_dtype)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("c", SIZES)
@pytest.mark.parametrize("r", SIZES)
def test_every_block_shape_layout(name, r, c):
    rng = np.random.default_rng(100 * r + c)
    for m, n in ((13, 11), (17, 10), (9, 29)):
        csr = random_csr(rng, m, n)
        params = {"block": (r, c), "max_fill": None}
        if name == "bell":
            params["align"] = 4
        if name == "sbell":
            params["slice_height"] = 3
        fmt = get(name).from_csr(csr, **params)
        dense, blocks = decode(fmt)
        A = csr.to_scipy().toarray()
        np.testing.assert_array_equal(dense[:m, :n], A)
        assert not dense[m:, :].any() and not dense[:, n:].any()
        # the blocks are exactly those holding a stored entry (explicit zeros included), each once
        rows, cols = np.repeat(np.arange(m), np.diff(csr.indptr)), csr.indices
        want = sorted(set(zip((rows // r).tolist(), (cols // c).tolist())))
        assert sorted(blocks) == want and len(blocks) == len(set(blocks))
        for i in range(-(-m // r)):  # sorted by column within each superrow
            cols_i = [bj for bi, bj in blocks if bi == i]
            assert cols_i == sorted(cols_i)
        assert_csr_identical(fmt.to_csr(), csr)
        x = random_operand(rng, (n, 2), "float64")
        assert_product_close(reference.spmv(fmt, x), csr.data, csr.indices, csr.indptr, (m, n), x)


# --- products and round trips over dtypes -----------------------------------------------------


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("block", [(1, 4), (2, 3), (8, 1), (3, 8)])
@pytest.mark.parametrize("name", NAMES)
def test_products_and_round_trip(name, block, dtype, index_dtype):
    rng = np.random.default_rng(7)
    csr = random_csr(rng, 41, 23, 0.2, index_dtype, dtype)
    fmt = get(name).from_csr(csr, block=block, max_fill=None)
    assert fmt.dtype == np.dtype(dtype) and fmt.index_dtype == np.dtype(index_dtype)
    assert fmt.col.dtype == np.dtype(index_dtype)
    for key in fmt.array_fields:
        assert not getattr(fmt, key).flags.writeable
    assert_csr_identical(fmt.to_csr(), csr)
    args = (csr.data, csr.indices, csr.indptr, csr.shape)
    x = random_operand(rng, (23,), dtype)
    y = reference.spmv(fmt, x)
    assert y.dtype == np.dtype(dtype) and y.shape == (41,)
    assert_product_close(y, *args, x)
    X = random_operand(rng, (23, 3), dtype)
    assert_product_close(reference.spmv(fmt, X), *args, X)


@pytest.mark.parametrize("name", NAMES)
def test_negative_zero_survives_round_trip(name):
    csr = csr_from_triplets([0, 1, 1, 4], [0, 2, 3, 6], [-0.0, 1.0, 0.0, 2.0], (5, 7))
    fmt = get(name).from_csr(csr, block=(2, 2), max_fill=None)
    back = fmt.to_csr()
    assert_csr_identical(back, csr)
    assert np.signbit(back.data[0])


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (6, 9)])
@pytest.mark.parametrize("name", NAMES)
def test_empty_shapes(name, shape):
    csr = csr_from_triplets([], [], np.zeros(0), shape)
    fmt = get(name).from_csr(csr, block=(4, 4))
    assert fmt.nnz == 0
    assert_csr_identical(fmt.to_csr(), csr)
    y = reference.spmv(fmt, np.ones((shape[1], 2)))
    assert y.shape == (shape[0], 2) and not y.any()
    fmt.describe()
    assert fmt.spmv_bytes() >= shape[0] * 8


@pytest.mark.parametrize("name", NAMES)
def test_nan_in_x_outside_the_blocks_is_not_read(name):
    # column 7 is outside every block of a 2 x 4 blocking of this 3 x 8 matrix
    csr = csr_from_triplets([0, 2], [1, 2], [1.0, 2.0], (3, 8))
    fmt = get(name).from_csr(csr, block=(2, 4), max_fill=None)
    x = np.ones(8)
    x[7] = np.nan
    np.testing.assert_array_equal(reference.spmv(fmt, x), [1.0, 0.0, 2.0])


# --- parameters ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_defaults(name):
    cls = get(name)
    assert cls.defaults["block"] == (1, 4)
    assert cls.defaults["max_fill"] == 20.0
    fmt = cls.from_csr(matrix_c())
    assert fmt.block == (1, 4) and fmt.params["block"] == (1, 4)
    if name == "bell":
        assert fmt.params["align"] == 32
    if name == "sbell":
        assert fmt.params["slice_height"] == 32


@pytest.mark.parametrize("bad", [(5, 4), (4, 5), (0, 4), (4,), (1, 4, 1), "1x4", 4, (2.0, 4), (True, 4), None])
@pytest.mark.parametrize("name", NAMES)
def test_bad_block(name, bad):
    with pytest.raises(ValueError, match=r"block must be a pair \(r, c\) with r in \{1, 2, 3, 4, 8\} and c in "
                                         r"\{1, 2, 3, 4, 8\}"):
        get(name).from_csr(matrix_c(), block=bad)


@pytest.mark.parametrize("name", NAMES)
def test_block_as_list_is_accepted(name):
    fmt = get(name).from_csr(matrix_c(), block=[2, np.int64(4)])
    assert fmt.block == (2, 4)


@pytest.mark.parametrize("name,param", [("bell", "align"), ("sbell", "slice_height")])
def test_bad_positive_int(name, param):
    with pytest.raises(ValueError, match=f"{param} must be a positive integer"):
        get(name).from_csr(matrix_c(), **{param: 0})
    with pytest.raises(TypeError, match=f"{param} must be a positive integer"):
        get(name).from_csr(matrix_c(), **{param: 2.5})


@pytest.mark.parametrize("name", NAMES)
def test_bad_max_fill_and_unknown_parameter(name):
    with pytest.raises(ValueError, match="max_fill must be a positive number or None"):
        get(name).from_csr(matrix_c(), max_fill=0)
    with pytest.raises(TypeError, match="max_fill must be a positive number or None"):
        get(name).from_csr(matrix_c(), max_fill="big")
    with pytest.raises(TypeError, match="has no parameter 'slice'"):
        get(name).from_csr(matrix_c(), slice=3)


@pytest.mark.parametrize("name", NAMES)
def test_max_fill_refusal(name):
    # the 8 x 8 identity in one 8 x 8 block: 64 slots for 8 entries
    csr = csr_from_triplets(np.arange(8), np.arange(8), np.ones(8), (8, 8))
    params = {"block": (8, 8)} if name != "sbell" else {"block": (8, 8), "slice_height": 1}
    with pytest.raises(FormatFillError, match=rf"format '{name}' would store 64 values for 8 stored entries "
                                              r"\(fill 8\.0 > max_fill=4\)"):
        get(name).from_csr(csr, max_fill=4, **params)
    get(name).from_csr(csr, max_fill=8, **params)
    get(name).from_csr(csr, max_fill=None, **params)


def test_sbell_fill_excludes_missing_rows_of_the_last_slice():
    # 2 superrows, slice height 4: 2 existing slots of one 1 x 4 block = 8 logical slots for
    # 2 entries; the 2 missing superrows of the slice are padding, like alignment
    csr = csr_from_triplets([0, 1], [0, 0], [1.0, 1.0], (2, 4))
    with pytest.raises(FormatFillError, match="would store 8 values"):
        SBELL.from_csr(csr, slice_height=4, max_fill=3)
    assert SBELL.from_csr(csr, slice_height=4, max_fill=4).stored_slots == 16


def test_bell_fill_excludes_alignment():
    csr = csr_from_triplets([0, 1], [0, 0], [1.0, 1.0], (2, 4))
    fmt = BELL.from_csr(csr, max_fill=4)  # 2 superrows x 1 block x 4 = 8 slots, stride 32
    assert fmt.stored_slots == 32 * 4


# --- byte model and description -----------------------------------------------------------------


def test_spmv_bytes_of_the_figures():
    csr = matrix_c().astype("float32")
    # BCSR 2x4: row_ptr 3*4 + col 4*4 + data 4*8*4 + x 4 blocks*4*4 + y 4*4
    assert BCSR.from_csr(csr, block=(2, 4)).spmv_bytes() == 12 + 16 + 128 + 64 + 16
    assert BCSR.from_csr(csr, block=(2, 4)).spmv_bytes("float64") == 12 + 16 + 256 + 128 + 32
    # BELL 2x4: K*superrows = 4 slots visited whatever the alignment
    for align in (1, 32):
        assert BELL.from_csr(csr, block=(2, 4), align=align).spmv_bytes() == 16 + 128 + 64 + 16
    # SBELL 1x4, h=2: slice_ptr 3*4 + 8 slots (col 32, data 128) + x 8 blocks*4*4 + y 16
    assert SBELL.from_csr(csr, block=(1, 4), slice_height=2).spmv_bytes() == 12 + 32 + 128 + 128 + 16


def test_bell_padding_blocks_are_counted():
    csr = csr_from_triplets([0, 0, 1], [0, 4, 0], [1.0, 2.0, 3.0], (2, 8))
    fmt = BELL.from_csr(csr, block=(1, 4))
    assert fmt.width == 2 and fmt.real_blocks() == 3
    np.testing.assert_array_equal(fmt.col[:, :2], [[0, 0], [4, -1]])
    assert fmt.spmv_bytes() == 4 * 4 + 4 * 4 * 8 + 3 * 4 * 8 + 2 * 8


def test_describe():
    csr = matrix_c()
    d = BCSR.from_csr(csr, block=(2, 4)).describe()
    assert d["block"] == "2x4" and d["blocks"] == 4 and d["fill inside blocks"] == 1.0
    assert d["blocks per superrow max"] == 2
    d = BELL.from_csr(csr, block=(2, 4)).describe()
    assert d["K (blocks per superrow)"] == 2 and d["stride"] == 32 and d["blocks"] == 4
    d = SBELL.from_csr(csr, block=(1, 4), slice_height=2).describe()
    assert d["slices"] == 2 and d["slice width (K_s) min/mean/max"] == "2/2.00/2" and d["blocks"] == 8
    sparse = csr_from_triplets([0], [0], [1.0], (4, 4))
    assert BCSR.from_csr(sparse, block=(4, 4), max_fill=None).describe()["fill inside blocks"] == 16.0


@pytest.mark.parametrize("name", NAMES)
def test_to_xp_numpy_round_trip(name):
    fmt = get(name).from_csr(small_example(), block=(2, 4), max_fill=None)
    other = fmt.to_xp(np)
    for key in fmt.array_fields:
        assert_same_arrays(getattr(fmt, key), getattr(other, key))


@pytest.mark.parametrize("name", NAMES)
def test_huge_column_count_uses_the_overflow_safe_paths(name):
    # superrows * block columns > 2**62: the block keys of block_grid would overflow int64
    n = 2**62
    csr = csr_from_triplets([0, 1, 1, 5, 6], [n - 1, 0, 2**61 + 5, 3, n - 2], [1.0, 2.0, 0.0, 4.0, 5.0],
                            (8, n), "int64")
    fmt = get(name).from_csr(csr, block=(2, 4), max_fill=None)
    assert_csr_identical(fmt.to_csr(), csr)
    assert sorted(int(v) for v in np.asarray(fmt.col).ravel() if v != -1) == sorted(
        [n - 4, 0, 2**61 + 4, 0, n - 4])
