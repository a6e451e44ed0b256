"""DIA-VI: the layout on the papers' example, the value table and its limit, round trips, the reference, refusals."""

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix
from cocktail.errors import FormatFillError, FormatValuesError
from cocktail.formats import get
from cocktail.formats.csr import CSR
from cocktail.formats.dia import DIA
from cocktail.formats.dia_vi import DIAVI, MAX_VALUES
from cocktail.reference import product_for, spmv
from cocktail.reference.entries import entries_of
from oracle import assert_csr_identical

# Bell & Garland Fig. 5: offsets -2, 0, 1.
A_BG = np.array([[1, 7, 0, 0], [0, 2, 8, 0], [5, 0, 3, 9], [0, 6, 0, 4]], dtype=float)


def csr_of(dense, index_dtype=None, dtype=None):
    S = sp.csr_array(np.asarray(dense))
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype, dtype=dtype)


def stencil(k):
    """The 5-point Laplacian of a k x k grid: two distinct values, 4 and -1."""
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(k, k))
    return sp.kronsum(T, T, format="csr")


def band_with_values(values, m=None, offsets=(0,)):
    """An m x m matrix whose diagonals ``offsets`` hold ``values`` in turn (row by row)."""
    m = m or len(values)
    rows, cols = [], []
    for o in offsets:
        r = np.arange(max(0, -o), min(m, m - o))
        rows.append(r)
        cols.append(r + o)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    vals = np.resize(np.asarray(values, dtype=float), rows.size)
    return CSR.from_triplets(rows, cols, vals, (m, m), np.int32)


# --- the layout ------------------------------------------------------------------------------------
def test_bell_garland_fig5():
    fmt = DIAVI.from_csr(csr_of(A_BG), align=1)
    np.testing.assert_array_equal(fmt.offsets, [-2, 0, 1])
    np.testing.assert_array_equal(fmt.table, np.arange(10.0))  # 1..9 and the padding zero, sorted
    np.testing.assert_array_equal(fmt.codes, [[0, 0, 5, 6], [1, 2, 3, 4], [7, 8, 9, 0]])
    assert fmt.codes.dtype == np.uint8 and fmt.codes.flags.c_contiguous and fmt.table.dtype == np.float64
    assert fmt.stride == 4 and fmt.stored_slots == 12
    assert fmt.describe() == {"diagonals": 3, "stride": 4, "offsets": "-2..1", "distinct values": 10}
    np.testing.assert_array_equal(fmt.values(), DIA.from_csr(csr_of(A_BG), align=1).data)


def test_default_align_pads_the_codes():
    fmt = DIAVI.from_csr(csr_of(A_BG))
    assert fmt.codes.shape == (3, 32) and fmt.stride == 32 and fmt.stored_slots == 96
    assert (fmt.table[fmt.codes[:, 4:]] == 0).all()
    assert fmt.params == {"align": 32, "max_fill": 20.0}
    assert fmt.stride % 4 == 0  # the kernel's four-row loads need it


def test_a_stencil_has_three_values():
    S = stencil(12)
    fmt = SparseMatrix(S, format="dia_vi", device="cpu").storage
    np.testing.assert_array_equal(fmt.table, [-1.0, 0.0, 4.0])  # the two values and the padding zero
    np.testing.assert_array_equal(fmt.offsets, [-12, -1, 0, 1, 12])
    x = np.random.default_rng(0).standard_normal(144)
    np.testing.assert_allclose(spmv(fmt, x), S @ x, rtol=1e-13, atol=1e-13)


def test_codes_decode_to_dia_data_on_random_diagonals():
    rng = np.random.default_rng(3)
    for m, n in ((40, 40), (37, 90), (90, 37)):
        offsets = rng.choice(np.arange(-m + 1, n), size=6, replace=False)
        rows = rng.integers(0, m, 4 * m)
        cols = rows + offsets[rng.integers(0, 6, rows.size)]
        keep = (cols >= 0) & (cols < n)
        vals = rng.choice([-2.0, 0.5, 3.0, 7.25], size=rows.size)
        csr = CSR.from_triplets(rows[keep], cols[keep], vals[keep], (m, n), np.int32)
        fmt, dia = DIAVI.from_csr(csr, align=16, max_fill=None), DIA.from_csr(csr, align=16, max_fill=None)
        np.testing.assert_array_equal(fmt.offsets, dia.offsets)
        assert fmt.codes.shape == dia.data.shape
        np.testing.assert_array_equal(fmt.values(), dia.data)
        assert np.all(np.diff(fmt.table) > 0)  # sorted and distinct
        assert_csr_identical(fmt.to_csr(), csr)


def test_spmv_bytes():
    # 3 offsets * 4 + 9 valid slots * 1 (codes) + 10 table values * 8 + 9 * 8 (x) + 4 rows * 8 (y)
    fmt = DIAVI.from_csr(csr_of(A_BG))
    assert fmt.spmv_bytes() == 12 + 9 + 10 * 8 + 9 * 8 + 32
    assert fmt.spmv_bytes(np.float32) == 12 + 9 + 10 * 4 + 9 * 4 + 16
    assert fmt.spmv_bytes() < DIA.from_csr(csr_of(A_BG)).spmv_bytes() + 10 * 8
    S = stencil(100)  # offsets -100, -1, 0, 1, 100 of 10,000 rows; two values and the padding zero
    valid = 10_000 + 2 * 9_999 + 2 * 9_900
    vi, dia = (SparseMatrix(S, format=f, device="cpu").storage for f in ("dia_vi", "dia"))
    assert dia.spmv_bytes() == 5 * 4 + valid * (8 + 8) + 10_000 * 8
    assert vi.spmv_bytes() == 5 * 4 + valid * (1 + 8) + 3 * 8 + 10_000 * 8


# --- the value table's limit -----------------------------------------------------------------------
def test_256_values_fit_and_257_are_refused():
    fits = band_with_values(np.arange(1.0, 256.0), m=300)  # 255 values and the padding zero
    fmt = DIAVI.from_csr(fits)
    assert fmt.table.shape == (MAX_VALUES,) and fmt.codes.max() == 255
    assert_csr_identical(fmt.to_csr(), fits)
    over = band_with_values(np.arange(1.0, 257.0), m=300)
    with pytest.raises(FormatValuesError, match=r"format 'dia_vi' would need a table of 257 distinct values "
                                                r"\(the padding zero included\), more than the 256"):
        DIAVI.from_csr(over)
    try:
        DIAVI.from_csr(over)
    except FormatValuesError as exc:
        assert (exc.distinct, exc.limit) == (257, 256)


def test_no_padding_no_zero_in_the_table():
    # 256 rows, one full diagonal, a stride of 256: every slot is an entry, 256 nonzero values fit exactly
    csr = band_with_values(np.arange(1.0, 257.0))
    fmt = DIAVI.from_csr(csr)
    assert fmt.stride == 256 and fmt.table.shape == (256,) and 0 not in fmt.table
    assert_csr_identical(fmt.to_csr(), csr)
    with pytest.raises(FormatValuesError, match=r"257 distinct values \(the padding zero included\)"):
        DIAVI.from_csr(csr, align=3)  # a stride of 258: two padding slots need the zero


def test_many_values_refused_through_sparse_matrix_and_the_package():
    S = sp.random_array((300, 300), density=0.05, format="csr", random_state=1)
    with pytest.raises(cocktail.FormatValuesError, match=r"would need a table of 4,501 distinct values"):
        SparseMatrix(S, format="dia_vi", device="cpu", max_fill=None)
    assert issubclass(cocktail.FormatValuesError, ValueError)
    assert issubclass(cocktail.FormatValuesError, cocktail.CocktailError)


def test_max_fill_refusal_names_dia_vi():
    csr = csr_of(np.fliplr(np.eye(50)))
    with pytest.raises(FormatFillError, match=r"format 'dia_vi' would store 2,500 values for 50 stored entries"):
        DIAVI.from_csr(csr)
    assert DIAVI.from_csr(csr, max_fill=None).offsets.shape[0] == 50


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (1.5, TypeError), (None, TypeError)])
def test_bad_align(bad, exc):
    with pytest.raises(exc, match=r"dia_vi: align must be a positive integer"):
        DIAVI.from_csr(csr_of(A_BG), align=bad)


def test_unknown_parameter():
    with pytest.raises(TypeError, match=r"format 'dia_vi' has no parameter 'width'.*align, max_fill"):
        DIAVI.from_csr(csr_of(A_BG), width=3)


# --- exact round trips -----------------------------------------------------------------------------
def test_explicit_zeros_signed_zeros_and_nan_survive_bit_for_bit():
    rows = np.array([0, 0, 1, 1, 2, 3, 3])
    cols = np.array([0, 3, 0, 1, 2, 3, 2])
    vals = np.array([1.0, 0.0, -0.0, 2.0, 0.0, 4.0, np.nan])
    csr = CSR.from_triplets(rows, cols, vals, (4, 4), np.int32)
    fmt = DIAVI.from_csr(csr)
    np.testing.assert_array_equal(fmt.zero_row, [0, 1, 2])
    assert np.signbit(fmt.zero_val[1])
    assert_csr_identical(fmt.to_csr(), csr)
    # complex values whose components differ only by the sign of zero are distinct table entries
    cvals = np.array([complex(-0.0, 1.0), complex(0.0, 1.0), complex(1.0, -0.0), complex(1.0, 0.0)])
    ccsr = CSR.from_triplets(np.arange(4), np.arange(4), cvals, (4, 4), np.int32)
    cfmt = DIAVI.from_csr(ccsr)
    assert cfmt.table.shape == (5,)  # four bit patterns and the padding zero
    assert_csr_identical(cfmt.to_csr(), ccsr)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (6, 6)])
def test_no_diagonals(shape):
    m, n = shape
    csr = CSR.from_triplets(np.zeros(0, int), np.zeros(0, int), np.zeros(0), shape, np.int32)
    fmt = DIAVI.from_csr(csr)
    assert fmt.codes.shape == (0, -(-m // 32) * 32) and fmt.table.shape == (0,)
    assert fmt.stored_slots == 0 and fmt.spmv_bytes() == m * 8
    assert fmt.describe() == {"diagonals": 0, "stride": fmt.stride, "distinct values": 0}
    np.testing.assert_array_equal(spmv(fmt, np.ones((n, 2))), np.zeros((m, 2)))
    assert_csr_identical(fmt.to_csr(), csr)


# --- the reference reads the format's own arrays ---------------------------------------------------
def _with(fmt, **changes):
    fields = {k: getattr(fmt, k) for k in fmt.array_fields}
    fields.update(changes)
    return type(fmt)(fmt.shape, fmt.dtype, fmt.index_dtype, fmt.nnz, fmt.params, **fields)


def test_reference_reads_codes_and_table():
    fmt = DIAVI.from_csr(csr_of(A_BG))
    x = np.ones(4)
    table = fmt.table.copy()
    table[2] = 100.0  # the value 2 = A[1, 1]
    want = A_BG @ x
    want[1] += 98.0
    np.testing.assert_array_equal(spmv(_with(fmt, table=table), x), want)
    codes = fmt.codes.copy()
    codes[1, 0] = 9  # A[0, 0] now decodes as 9
    want = A_BG @ x
    want[0] += 8.0
    np.testing.assert_array_equal(product_for(fmt)(_with(fmt, codes=codes), x[:, None])[:, 0], want)


def test_reference_ignores_padding_and_outside_slots():
    csr = csr_of(A_BG)
    fmt = DIAVI.from_csr(csr)
    table = np.r_[fmt.table, np.nan]  # a poisoned entry that only unread slots point at
    poison = table.shape[0] - 1
    codes = fmt.codes.copy()
    codes[0, :2] = poison  # diagonal -2, rows 0-1: columns outside the matrix
    codes[2, 3] = poison  # diagonal 1, row 3: column 4
    codes[:, 4:] = poison  # alignment padding
    poisoned = _with(fmt, codes=codes, table=table)
    x = np.arange(1.0, 5.0)
    np.testing.assert_array_equal(spmv(poisoned, x), A_BG @ x)
    assert_csr_identical(poisoned.to_csr(), csr)
    [entries] = entries_of(poisoned)
    assert not np.isnan(entries.vals()).any()


def test_arrays_read_only_and_registered():
    fmt = DIAVI.from_csr(csr_of(A_BG))
    for name in DIAVI.array_fields:
        assert not getattr(fmt, name).flags.writeable
    assert get("dia_vi") is DIAVI and DIAVI.max_values == MAX_VALUES == 256
    assert DIA.max_values is None


# --- the benchmark treats a refusal as an unavailable method ---------------------------------------
def test_bench_reports_the_refusal():
    from cocktail.bench.measuring import methods

    rng = np.random.default_rng(2)
    S = sp.diags_array([rng.standard_normal(199), rng.standard_normal(200)], offsets=[-1, 0], format="csr")
    inputs = methods.Inputs.create(S, np.float64, on_gpu=False)
    with pytest.raises(methods.Unavailable, match=r"refused: 400 distinct values > 256"):
        methods.HostMethod("dia_vi").prepare(inputs)
    few = methods.Inputs.create(stencil(10), np.float64, on_gpu=False)
    prepared = methods.HostMethod("dia_vi").prepare(few)
    np.testing.assert_allclose(prepared.result(), few.want, rtol=1e-13)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex64, np.complex128])
@pytest.mark.parametrize("padded", [False, True])
def test_value_table_equals_one_sort_of_every_entry(dtype, padded):
    """The table proposed by a sample and completed by the entries it misses (values far apart, signed zeros,
    NaN payloads, rare values off the sample) is bit for bit the one a sort of every entry gives."""
    from cocktail.formats.dia_vi import SAMPLE, sorted_value_table, value_table

    rng = np.random.default_rng(3)
    nnz = 3 * SAMPLE + 17
    data = rng.choice(np.array([4.0, -1.0, 0.5, -0.0, 0.0, 6e4]), size=nnz).astype(dtype)
    data[[1, 5, 9000, nnz - 2]] = np.array([7.0, 9.5, -3.25, 11.0], dtype=dtype)  # off the sample's positions
    nan = np.array([np.nan], dtype=dtype)
    data[[2, 3]] = nan[0]
    if np.dtype(dtype).kind == "f":  # another NaN payload, and a negative NaN
        bits = data.view(f"uint{8 * np.dtype(dtype).itemsize}")
        bits[3] |= 1
        data[4] = -nan[0]
    csr = CSR((nnz, 7), data.dtype, np.int32, nnz, {}, data=data, indices=(np.arange(nnz) % 7).astype(np.int32),
              indptr=np.arange(nnz + 1, dtype=np.int32))
    slots = nnz + 1 if padded else nnz
    got, expected = value_table("dia_vi", csr, slots), sorted_value_table("dia_vi", csr, slots)
    assert got[0].dtype == expected[0].dtype and got[1].dtype == expected[1].dtype == np.uint8
    np.testing.assert_array_equal(_bits(got[0]), _bits(expected[0]))
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[2] == expected[2]


def test_value_table_counts_every_distinct_value_when_the_sample_misses_too_many():
    """Past 256 distinct values found beyond the sample, the refusal counts them all, as a sort would."""
    from cocktail.formats.dia_vi import SAMPLE, sorted_value_table, value_table

    nnz = 4 * SAMPLE
    data = np.ones(nnz)
    data[1:nnz:4][:300] = np.arange(2, 302)  # off the sample (every 4th entry from 0)
    csr = CSR((nnz, 1), data.dtype, np.int32, nnz, {}, data=data, indices=np.zeros(nnz, np.int32),
              indptr=np.arange(nnz + 1, dtype=np.int32))
    for padded in (False, True):
        with pytest.raises(FormatValuesError) as got:
            value_table("csr_vi", csr, nnz + padded, instead="csr")
        with pytest.raises(FormatValuesError) as expected:
            sorted_value_table("csr_vi", csr, nnz + padded, instead="csr")
        assert str(got.value) == str(expected.value) and got.value.distinct == 301 + padded
