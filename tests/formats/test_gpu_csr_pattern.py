"""csr_pattern on the GPU: its kernels equal the csr kernels bit for bit where every value is 1, and
``format="auto"`` stores a one-value matrix's CSR parts pattern-only by itself.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix
from test_gpu_planner import _check_product

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def power_law_graph(n=60_000, seed=7, value=1.0):
    """A graph of power-law degrees (rows up to 5,000 long, every eleventh empty), every entry ``value``."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.6, n), 5_000)
    lengths[::11] = 0
    rows = np.repeat(np.arange(n), lengths)
    S = sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    S.data[:] = value
    return S


KERNELS = [("csr_scalar", {}), ("csr_vector", {"threads_per_row": 4}), ("csr_vector", {"threads_per_row": 32}),
           ("csr_stream", {}), ("csr_stream", {"items_per_lane": 16, "stream": False})]


@pytest.mark.parametrize("value", [1.0, -0.375, np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,params", KERNELS, ids=lambda v: str(v))
def test_a_pattern_kernel_equals_its_csr_kernel_bit_for_bit(kernel, params, dtype, value):
    S = power_law_graph(value=value).astype(dtype)
    x = cupy.asarray(np.random.default_rng(1).standard_normal(S.shape[1]).astype(dtype))
    A = SparseMatrix(S, format="csr", kernel=kernel, **params)
    P = SparseMatrix(S, format="csr_pattern", kernel=kernel, **params)
    assert P.format == "csr_pattern" and P.kernel == kernel
    assert A.storage.nbytes - P.storage.nbytes == (S.nnz - 1) * np.dtype(dtype).itemsize
    # value * x for every entry, as CSR's: the same products and additions (an empty row stays 0, even for inf)
    cupy.testing.assert_array_equal(P @ x, A @ x)
    y0 = cupy.asarray(np.random.default_rng(2).standard_normal(S.shape[0]).astype(dtype))
    ya, yp = y0.copy(), y0.copy()
    A.matvec(x, out=ya, alpha=1.5, beta=-0.5)
    P.matvec(x, out=yp, alpha=1.5, beta=-0.5)
    cupy.testing.assert_array_equal(yp, ya)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_pattern_matrix_of_another_value_and_its_block_product(dtype):
    S = power_law_graph(value=-0.375).astype(dtype)
    P = SparseMatrix(S, format="csr_pattern")
    _check_product(P, S, dtype)
    X = np.random.default_rng(3).standard_normal((S.shape[1], 3)).astype(dtype)
    want = S.astype(np.float64) @ X.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose((P @ cupy.asarray(X)).get(), want, rtol=tol, atol=tol * np.abs(want).max())


def test_auto_cuts_a_one_value_matrix_and_runs_it(modelled):
    S = power_law_graph()
    A = SparseMatrix(S)
    cut = [p for p in A.auto.planning.candidates if any(part.pattern for part in p.parts)]
    assert cut, "the planner stores no part of a one-value matrix pattern-only"
    assert all(part.format == "csr_pattern" for p in cut for part in p.parts if part.pattern)
    if any(part.pattern for part in A.auto.plan.parts):
        assert "csr_pattern" in (A.format, *(p.name for p in getattr(A.storage, "parts", ())))
    _check_product(A, S, np.float64)
    T = sp.csr_array(S, copy=True)
    T.data[::3] = 2.0
    C = SparseMatrix(T)
    assert not any(part.pattern for p in C.auto.planning.candidates for part in p.parts)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,block", [("csr_vector", "csr_spmm"), ("csr_stream", "csr_spmm_merge")])
@pytest.mark.parametrize("k", [3, 16])
def test_a_pattern_block_product_runs_the_csr_block_kernel(kernel, block, k, dtype):
    S = power_law_graph(n=20_000).astype(dtype)
    X = cupy.asarray(np.random.default_rng(4).standard_normal((S.shape[1], k)).astype(dtype))
    A = SparseMatrix(S, format="csr", kernel=kernel)
    P = SparseMatrix(S, format="csr_pattern", kernel=kernel)
    assert [s.name for s in P._executor.block_specs] == [block]  # its own block kernel, no column loop
    cupy.testing.assert_array_equal(P @ X, A @ X)  # data[0] read for every entry: the same products
    T = power_law_graph(n=20_000, value=2.5).astype(dtype)
    Q = SparseMatrix(T, format="csr_pattern", kernel=kernel)
    want = T.astype(np.float64) @ X.get().astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose((Q @ X).get(), want, rtol=tol, atol=tol * np.abs(want).max())
