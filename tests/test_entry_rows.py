"""arrays.entry_rows: every stored entry's row, on the host (a repeat) and on the device (a scatter of the row
starts and a scan), against a search per entry."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.arrays import entry_rows
from cocktail.formats.csr import CSR


def _matrices():
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 50, size=400)
    lengths[::9] = 0
    lengths[-3:] = 0  # empty rows at the end: pointers equal to nnz
    rows = np.repeat(np.arange(400), lengths)
    yield "mixed", sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, 300, rows.size))), shape=(400, 300))
    yield "no entries", sp.csr_array((5, 4))
    yield "no rows", sp.csr_array((0, 4))
    yield "one row", sp.csr_array(np.ones((1, 70)))
    yield "leading empty rows", sp.csr_array(np.array([[0.0, 0], [0, 0], [1, 2]]))


def _expected(S):
    return np.searchsorted(S.indptr[1:], np.arange(S.nnz), side="right")


@pytest.mark.parametrize("name,S", list(_matrices()), ids=[n for n, _ in _matrices()])
def test_entry_rows_on_the_host(name, S):
    S.sum_duplicates()
    got = entry_rows(CSR.from_arrays(S.data, S.indices, S.indptr, S.shape))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, _expected(S))


@pytest.mark.gpu
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_entry_rows_on_the_device(index):
    import cupy

    for name, S in _matrices():
        S.sum_duplicates()
        csr = CSR.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices.astype(index)),
                              cupy.asarray(S.indptr.astype(index)), S.shape)
        got = entry_rows(csr)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(cupy.asnumpy(got), _expected(S), err_msg=name)
