"""The DRAM traffic model (``SparseFormat.dram_bytes``): exact byte counts on small matrices.

Every expected count is written out from the layout: the arrays a product reads, once; ``x``
once when it fits in L2, else one read per multiplied slot (at least ``n`` values); ``y``
written once, plus a read and a write of the rows a later kernel adds into.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.formats import CSR, get
from cocktail.tuning.format_rules import format_params

# 4 x 5, 7 entries: rows of 2, 1, 0 and 4 entries.
A = np.array([[1, 0, 2, 0, 0],
              [0, 3, 0, 0, 0],
              [0, 0, 0, 0, 0],
              [4, 5, 0, 6, 7]], dtype=float)
# 4 x 4 tridiagonal, 10 entries on offsets -1, 0, 1.
TRI = np.array([[1, 2, 0, 0],
                [3, 4, 5, 0],
                [0, 6, 7, 8],
                [0, 0, 9, 10]], dtype=float)
# HYB's example: rows of 2, 2, 3 and 2 entries, so K = 2 and row 2's last entry goes to COO.
B = np.array([[1, 2, 0, 0],
              [0, 3, 4, 0],
              [5, 0, 6, 9],
              [0, 7, 0, 8]], dtype=float)


def _csr(dense, dtype=None):
    S = sp.csr_array(np.asarray(dense))
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, dtype=dtype)


def _build(name, dense, **params):
    csr = _csr(dense)
    return get(name).from_csr(csr, **format_params(name, csr.dtype, params))


def test_csr_counts_every_array_x_and_y_once():
    csr = _csr(A)
    arrays = 7 * 8 + 7 * 4 + 5 * 4  # data, indices, indptr (int32)
    assert csr.dram_bytes() == arrays + 5 * 8 + 4 * 8
    assert csr.dram_bytes(l2_bytes=40) == arrays + 5 * 8 + 4 * 8  # x (40 bytes) fits exactly
    # x does not fit: one read per entry (7) beats the n = 5 floor
    assert csr.dram_bytes(l2_bytes=39) == arrays + 7 * 8 + 4 * 8
    assert csr.dram_bytes(dtype="float32") == 7 * 4 + 7 * 4 + 5 * 4 + 5 * 4 + 4 * 4
    assert _csr(A, dtype=np.float32).dram_bytes() == csr.dram_bytes(dtype="float32")


def test_x_reads_never_count_below_n_values():
    sparse = np.zeros((3, 6))
    sparse[0, 1] = sparse[2, 4] = 1.0
    csr = _csr(sparse)
    arrays = 2 * 8 + 2 * 4 + 4 * 4
    assert csr.dram_bytes(l2_bytes=0) == arrays + 6 * 8 + 3 * 8  # 2 reads, but x is 6 values


def test_coo_counts_three_arrays_and_touched_rows_when_adding():
    coo = _build("coo", A)
    arrays = 7 * (4 + 4 + 8)
    assert coo.dram_bytes() == arrays + 5 * 8 + 4 * 8
    assert coo.dram_bytes(l2_bytes=1) == arrays + 7 * 8 + 4 * 8
    assert coo.touched_rows() == 3  # rows 0, 1 and 3
    assert coo.y_bytes(8, accumulate=True) == 2 * 3 * 8
    assert coo.y_bytes(8) == 4 * 8


def test_dia_reads_in_matrix_slots_only_and_skips_the_explicit_zeros():
    S = sp.csr_array(TRI)
    S.data[S.indptr[1] + 2] = 0.0  # row 1 holds columns 0, 1, 2: an explicit zero at (1, 2)
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    assert int((csr.data == 0).sum()) == 1  # the explicit zero at (1, 2)
    dia = get("dia").from_csr(csr)
    assert dia.stride == 32 and dia.zero_val.shape == (1,)
    # offsets 3*4; data: 10 in-matrix slots of 3*32 (padding and the two corners are never read);
    # the explicit-zero side arrays are left out
    assert dia.dram_bytes() == 3 * 4 + 10 * 8 + 4 * 8 + 4 * 8
    assert dia.dram_bytes(l2_bytes=16) == 3 * 4 + 10 * 8 + 10 * 8 + 4 * 8  # 10 multiplied slots
    bdia = get("bdia").from_csr(csr)  # one band: offsets 1*4, band_ptr 2*4
    assert bdia.dram_bytes() == 4 + 2 * 4 + 10 * 8 + 4 * 8 + 4 * 8


def test_hyb_counts_y_once_and_the_coo_rows_it_adds_into():
    h = _build("hyb", B, align=1)
    assert h.ell_width == 2 and h.coo.nnz == 1
    ell = 2 * 4 * (4 + 8)  # col and data, (2, 4)
    coo = 1 * (4 + 4 + 8)
    y = 4 * 8 + 2 * 1 * 8  # ELL writes the 4 rows; COO reads and writes row 2
    assert h.dram_bytes() == ell + coo + 4 * 8 + y
    assert h.dram_bytes(l2_bytes=0) == ell + coo + 9 * 8 + y


def test_cocktail_counts_x_once_and_each_later_part_adding_into_y():
    fmt = _build("cocktail", TRI, parts=[("dia", {}, ("diagonals", [0, 1])), ("coo", {}, ("rest",))])
    dia, coo = fmt.parts
    assert dia.nnz == 7 and coo.nnz == 3
    dia_bytes = 2 * 4 + 7 * 8  # two offsets, 4 + 3 in-matrix slots
    coo_bytes = 3 * (4 + 4 + 8)
    y = 4 * 8 + 2 * 3 * 8  # DIA writes the 4 rows; COO (rows 1, 2, 3) reads and writes its 3
    assert fmt.dram_bytes() == dia_bytes + coo_bytes + 4 * 8 + y
    assert fmt.dram_bytes(l2_bytes=31) == dia_bytes + coo_bytes + (7 + 3) * 8 + y
    assert fmt.dram_bytes(dtype="float32") == 2 * 4 + 7 * 4 + 3 * 12 + 4 * 4 + 4 * 4 + 2 * 3 * 4


def test_cocktail_later_parts_that_are_not_coo_read_and_write_every_row():
    fmt = _build("cocktail", TRI, parts=[("dia", {}, ("diagonals", [0])), ("csr", {}, ("rest",))])
    assert [p.nnz for p in fmt.parts] == [4, 6]
    assert fmt.dram_bytes() == (4 + 4 * 8) + (6 * 12 + 5 * 4) + 4 * 8 + 4 * 8 + 2 * 4 * 8


def test_sell_leaves_out_slice_width_and_perm_unless_rows_are_sorted():
    plain = _build("sell", A, slice_height=2)
    unread = plain.slice_width.nbytes + plain.perm.nbytes
    assert plain.dram_bytes() == plain.nbytes - unread + 5 * 8 + 4 * 8
    sorted_rows = _build("sell", A, slice_height=2, sort_window=4)
    assert sorted_rows.dram_bytes() == sorted_rows.nbytes - sorted_rows.slice_width.nbytes + 5 * 8 + 4 * 8


@pytest.mark.parametrize("name", ["bcsr", "bell", "sbell"])
def test_blocked_formats_leave_out_the_explicit_zeros_and_reuse_x_segments(name):
    S = sp.csr_array(A)
    S.data[0] = 0.0  # an explicit zero at (0, 0)
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    fmt = get(name).from_csr(csr, block=(1, 4))
    zeros = fmt.zero_row.nbytes + fmt.zero_col.nbytes + fmt.zero_val.nbytes
    assert zeros == 4 + 4 + 8
    assert fmt.dram_bytes() == fmt.nbytes - zeros + 5 * 8 + 4 * 8
    blocks = 4  # (0, 0:4), (1, 0:4), (3, 0:4), (3, 4:8): one x segment of 4 each
    assert fmt.x_reads() == blocks * 4
    assert fmt.dram_bytes(l2_bytes=0) == fmt.nbytes - zeros + blocks * 4 * 8 + 4 * 8


def test_a_block_product_reads_the_matrix_once_and_x_and_y_k_times():
    csr = _csr(A)
    val, idx = 8, 4
    matrix = 5 * idx + 7 * (idx + val)  # indptr, then indices and data
    for k in (1, 2, 16):
        assert csr.dram_bytes(k=k) == matrix + k * 5 * val + k * 4 * val
    # X past L2 when all k columns count: one row of X per multiplied entry
    assert csr.dram_bytes(l2_bytes=5 * val * 3, k=4) == matrix + 4 * 7 * val + 4 * 4 * val
    assert csr.dram_bytes(l2_bytes=5 * val * 4, k=4) == matrix + 4 * 5 * val + 4 * 4 * val


@pytest.mark.parametrize("k", [0, -1, 2.0, True, "4"])
def test_a_block_product_needs_a_positive_int_k(k):
    with pytest.raises(ValueError, match="k must be a positive int"):
        _csr(A).dram_bytes(k=k)


def test_a_banded_x_past_l2_is_read_once_when_its_window_fits():
    # A tridiagonal 2000 x 2000: x is 16000 bytes, but rows worked on together read a window of 3 rows
    # of it, which slides down x: with L2 below x and above the window, x still moves once.
    n = 2000
    S = sp.diags_array([np.ones(n - 1), 2 * np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    for name in ("dia", "dia_vi", "bdia"):
        fmt = get(name).from_csr(csr)
        assert fmt.x_window() == 3
        assert fmt.dram_bytes(l2_bytes=1000) == fmt.dram_bytes()  # the window fits: x once
        assert fmt.dram_bytes(l2_bytes=1000, k=16) == fmt.dram_bytes(k=16)  # 3 rows x 16 columns still fit
        assert fmt.dram_bytes(l2_bytes=1000, k=64) > fmt.dram_bytes(k=64)  # 3 x 64 x 8 bytes do not
    assert csr.x_window() == n and csr.dram_bytes(l2_bytes=1000) > csr.dram_bytes()  # CSR knows no reach
