"""Sizes past int32 on the GPU: more than 2**31 rows, and more than 2**31 entries, with int64 indices.

Each test allocates tens of GB of GPU memory and a few seconds of work, so they run only when
``COCKTAIL_LARGE_TESTS=1`` (``scripts/gpu_check.sh large`` sets it) and the GPU has the memory;
the skip says which is missing.  The matrices are built so that every product is exact in
float32 (integer sums below 2**24), whatever the order of the additions.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import cocktail
from cocktail import SparseMatrix

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

INT32_LIMIT = 2**31
CSR_KERNELS = ("csr_scalar", "csr_vector", "csr_merge", "csr_stream")
COO_KERNELS = ("coo_atomic", "coo_segmented")


def _need(gigabytes: float) -> None:
    if os.environ.get("COCKTAIL_LARGE_TESTS") != "1":
        pytest.skip("set COCKTAIL_LARGE_TESTS=1 to run the tests past int32 (tens of GB of GPU memory)")
    cupy.get_default_memory_pool().free_all_blocks()
    free = cupy.cuda.runtime.memGetInfo()[0]
    if free < gigabytes * 1e9:
        pytest.skip(f"needs {gigabytes:.0f} GB of free GPU memory, {free / 1e9:.1f} GB free")


@pytest.fixture
def release():
    """Free every pooled block after the test, so the next large test starts from an empty pool."""
    yield
    gc.collect()  # a failed test's frames hold its arrays until collected
    cupy.get_default_memory_pool().free_all_blocks()


def _tall(rows: int):
    """A rows x 3 matrix with four entries: in the first, the last and a middle row past 2**31."""
    entry_rows = np.array([0, INT32_LIMIT + 5, INT32_LIMIT + 5, rows - 1], dtype=np.int64)
    entry_cols = np.array([1, 0, 2, 1], dtype=np.int64)
    values = np.array([2.0, 3.0, 5.0, 7.0], dtype=np.float32)
    indptr = cupy.zeros(rows + 1, dtype=cupy.int64)
    for r in entry_rows:
        indptr[int(r) + 1] += 1
    indptr = cupy.cumsum(indptr)
    return (cupy.asarray(values), cupy.asarray(entry_cols), indptr), entry_rows, entry_cols, values


@pytest.mark.parametrize("kernel", CSR_KERNELS + COO_KERNELS)
def test_more_rows_than_int32(kernel, release):
    rows = INT32_LIMIT + 64
    # int64 row pointers (17 GB): the caller's, the canonical copy and a temporary; float32 y (8.6 GB).
    _need((3 * rows * 8 + rows * 4) / 1e9 + 4)
    arrays, entry_rows, entry_cols, values = _tall(rows)
    fmt = "coo" if kernel in COO_KERNELS else "csr"
    A = SparseMatrix(arrays, shape=(rows, 3), format=fmt, kernel=kernel, device="cuda")
    del arrays
    assert A.index_dtype == np.int64
    x = cupy.asarray(np.array([1.0, 10.0, 100.0], dtype=np.float32))
    y = cupy.full(rows, 9.0, dtype=cupy.float32)
    A.matvec(x, out=y, alpha=1.0, beta=0.0)
    expected = {}
    for r, c, v in zip(entry_rows, entry_cols, values):
        expected[int(r)] = expected.get(int(r), 0.0) + float(v) * float(x[int(c)])
    got = {r: float(y[r]) for r in expected}
    assert got == expected
    assert int(cupy.count_nonzero(y)) == len(expected)  # beta=0: every other row written as 0


@pytest.mark.parametrize("kernel", CSR_KERNELS)
def test_more_entries_than_int32(kernel, release):
    rows, width = 2**16, 2**15 + 1  # 2**31 + 2**16 entries: every row has `width` of them
    nnz = rows * width
    assert nnz > INT32_LIMIT
    # int64 indices and float32 values, the caller's and the canonical copy.
    _need(2 * nnz * 12 / 1e9 + 6)
    indptr = cupy.arange(rows + 1, dtype=cupy.int64) * width
    indices = cupy.tile(cupy.arange(width, dtype=cupy.int64), rows)
    row_value = (cupy.arange(rows, dtype=cupy.int64) % 7 + 1).astype(cupy.float32)
    data = cupy.repeat(row_value, width)
    A = SparseMatrix((data, indices, indptr), shape=(rows, width), format="csr", kernel=kernel, device="cuda")
    del data, indices, indptr
    assert A.index_dtype == np.int64 and A.nnz == nnz
    x = cupy.ones(width, dtype=cupy.float32)
    y = A @ x
    expected = row_value * width  # at most 7 * 32769 < 2**24: exact in float32 in any order
    assert bool(cupy.array_equal(y, expected))
