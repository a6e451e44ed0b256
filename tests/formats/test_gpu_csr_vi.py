"""csr_vi on the GPU: its kernels (the csr kernels' CODED_VALUES instantiations) equal the csr kernels bit for
bit, in every precision they are instantiated for, and its block products loop over the columns; csr_stream
reads csr_pattern's and csr_vi's short columns, bit for bit as their full ones.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix, precision
from test_gpu_csr_pattern import power_law_graph

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

KERNELS = [("csr_scalar", {}), ("csr_vector", {"threads_per_row": 4}), ("csr_vector", {"threads_per_row": 32}),
           ("csr_stream", {}), ("csr_stream", {"items_per_lane": 4, "stream": False})]
#: A few values, signed zeros, an infinity: each stored once in the table, decoded to its own bits.
TABLE = np.array([-2.5, -1.0, -0.0, 0.0, 0.125, 3.0, 1e30, np.inf])
#: A full table: codes 128 to 255 too.
FULL_TABLE = np.r_[np.linspace(-8.0, 8.0, 254), -0.0, 0.0]
TABLES = {"few": TABLE[:-1], "inf": TABLE, "256": FULL_TABLE}


def coded_graph(n=60_000, seed=7, table=TABLE[:-1]):
    """A power-law graph (rows up to 5,000 long: csr_stream's pieces) whose entries hold values of ``table``."""
    S = power_law_graph(n=n, seed=seed)
    S.data[:] = table[np.random.default_rng(seed).integers(0, table.size, S.nnz)]
    return S


def distinct(values) -> int:
    """Distinct values by their bits (a value table's count)."""
    return int(np.unique(np.ascontiguousarray(values).view(f"V{values.itemsize}")).size)


@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("kernel,params", KERNELS, ids=lambda v: str(v))
def test_a_coded_kernel_equals_its_csr_kernel_bit_for_bit(kernel, params, dtype, table):
    S = coded_graph(table=TABLES[table]).astype(dtype)
    if np.dtype(dtype).kind == "c":
        S.data = S.data * (1 - 0.5j)
    x = cupy.asarray(np.random.default_rng(1).standard_normal(S.shape[1]).astype(dtype))
    A = SparseMatrix(S, format="csr", kernel=kernel, **params)
    V = SparseMatrix(S, format="csr_vi", kernel=kernel, **params)
    assert V.format == "csr_vi" and V.kernel == kernel
    assert V.storage.table.shape[0] == distinct(S.data)  # each value once (-0.0 apart from 0.0)
    val = np.dtype(dtype).itemsize
    assert A.storage.nbytes - V.storage.nbytes == S.nnz * (val - 1) - V.storage.table.shape[0] * val
    # table[code] * x for every entry, as CSR's data[j] * x: the same products and additions
    cupy.testing.assert_array_equal(V @ x, A @ x)
    y0 = cupy.asarray(np.random.default_rng(2).standard_normal(S.shape[0]).astype(dtype))
    ya, yv = y0.copy(), y0.copy()
    A.matvec(x, out=ya, alpha=1.5, beta=-0.5)
    V.matvec(x, out=yv, alpha=1.5, beta=-0.5)
    cupy.testing.assert_array_equal(yv, ya)
    bound = V.bind(x, yv)
    bound()
    bound()  # a replay of the captured graph: csr_stream's tickets returned to zero
    cupy.testing.assert_array_equal(yv, A @ x)


@pytest.mark.parametrize("dtype", ["float16"] + (["bfloat16"] if precision.BFLOAT16 is not None else []))
def test_a_half_coded_matrix_equals_its_half_csr(dtype):
    S = coded_graph(n=20_000, table=np.array([-2.5, -0.0, 0.0, 0.125, 3.0]))  # each exact in a half type
    x = np.random.default_rng(3).standard_normal(S.shape[1])
    for kernel in ("csr_vector", "csr_stream"):
        A = SparseMatrix(S, format="csr", kernel=kernel, dtype=dtype)
        V = SparseMatrix(S, format="csr_vi", kernel=kernel, dtype=dtype)
        assert V.storage.table.dtype == A.storage.data.dtype
        xd = cupy.asarray(x.astype(A.dtype))
        # compared by their bits (CuPy has no bfloat16 comparison)
        np.testing.assert_array_equal((V @ xd).get().view(np.uint16), (A @ xd).get().view(np.uint16))


def test_float64_products_of_float32_coded_values():
    S = coded_graph(n=20_000)
    A = SparseMatrix(S, format="csr", kernel="csr_stream", value_dtype="float32")  # the same kernel: the same order
    V = SparseMatrix(S, format="csr_vi", kernel="csr_stream", value_dtype="float32")
    assert V.storage.table.dtype == np.float32 and V.dtype == np.float64
    x = cupy.asarray(np.random.default_rng(4).standard_normal(S.shape[1]))
    cupy.testing.assert_array_equal(V @ x, A @ x)


def test_a_coded_block_product_loops_over_columns():
    S = coded_graph(n=20_000)
    V = SparseMatrix(S, format="csr_vi")
    assert V.block_plan(3) == f"{V.kernel} per column"  # no block kernel reads codes
    X = np.random.default_rng(5).standard_normal((S.shape[1], 3))
    want = S @ X
    got = (V @ cupy.asarray(X)).get()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def local_power_law(m=20_000, n=2_000_000, seed=11):
    """Power-law row lengths (up to 5,000: csr_stream's pieces) with each row's columns within 50,000 of
    ``row * n / m``: short columns fit, their bases far from column 0."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.6, m), 5_000)
    rows = np.repeat(np.arange(m), lengths)
    cols = np.clip(rows * (n // m) + rng.integers(0, 50_000, rows.size), 0, n - 1)
    S = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(m, n))
    S.data[:] = 1.0
    return S


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128]
                         + (["bfloat16"] if precision.BFLOAT16 is not None else []))
@pytest.mark.parametrize("fmt", ["csr_pattern", "csr_vi"])
@pytest.mark.parametrize("params", [{}, {"items_per_lane": 4, "stream": False}], ids=str)
def test_short_columns_equal_full_ones_bit_for_bit(fmt, params, dtype):
    S = local_power_law()
    if fmt == "csr_vi":
        S.data = np.array([-2.5, 0.125, 3.0])[np.random.default_rng(1).integers(0, 3, S.nnz)]
    full = SparseMatrix(S, format=fmt, kernel="csr_stream", dtype=dtype, **params)
    short = SparseMatrix(S, format=fmt, kernel="csr_stream", dtype=dtype, short_columns=True, **params)
    assert short.storage.short and not full.storage.short and short.kernel == "csr_stream"
    x = cupy.asarray(np.random.default_rng(2).standard_normal(S.shape[1]).astype(full.dtype))
    # the same entries in the same order, each column decoded exactly: the same products and additions
    np.testing.assert_array_equal((short @ x).get().view(np.uint8), (full @ x).get().view(np.uint8))
    y = cupy.zeros(S.shape[0], dtype=full.dtype)
    bound = short.bind(x, y)
    bound()
    bound()
    np.testing.assert_array_equal(y.get().view(np.uint8), (full @ x).get().view(np.uint8))


def test_a_short_matrix_names_the_kernel_that_reads_it():
    from test_format_csr_vi import wide_band

    S = wide_band()  # short rows: the row-length rule says csr_vector, which reads no short columns
    A = SparseMatrix(S, format="csr_pattern", short_columns=True)
    assert A.storage.short and A.kernel == "csr_stream"  # the one that reads them
    with pytest.raises(TypeError, match="does not read csr_pattern stored with short_columns"):
        SparseMatrix(S, format="csr_pattern", short_columns=True, kernel="csr_vector")
    B = SparseMatrix(S, format="csr_pattern", short_columns=None, kernel="csr_vector")  # where it fits and is read
    assert not B.storage.short and B.kernel == "csr_vector"
    assert SparseMatrix(S, format="csr_pattern", short_columns=None, kernel="csr_stream").storage.short
    X = np.random.default_rng(3).standard_normal((S.shape[1], 3))
    np.testing.assert_allclose((A @ cupy.asarray(X)).get(), S @ X, rtol=1e-10, atol=1e-10 * np.abs(S @ X).max())
