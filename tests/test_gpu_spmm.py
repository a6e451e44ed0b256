"""Block kernels (``A @ X`` for a block of k vectors, each stored entry read once per tile of columns)
against SciPy in float64, on the zoo and the larger matrices of the kernel tests.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: Column counts: one (the SpMV kernel), a few, not a power of two, past a warp (two columns per lane),
#: a full tile, and a second tile.
KS = (1, 2, 3, 8, 33, 256, 300)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
def test_csr_block_kernel_equivalent_to_scipy(zm, k, dtype, index_dtype):
    A, raw = build(zm, "csr", {}, "csr_vector", {}, dtype, index_dtype)
    assert A._executor.block_spec.name == "csr_spmm"
    m, n = zm.shape
    rng = np.random.default_rng(k)
    X_host = rng.standard_normal((n, k)).astype(dtype)
    X = cupy.asarray(X_host)
    X_before = X.copy()

    Y = A @ X
    assert Y.shape == (m, k) and Y.dtype == np.dtype(dtype) and Y.flags.c_contiguous
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
    cupy.testing.assert_array_equal(X, X_before)  # the operand is never written
    if m and k > 1:
        assert k in A._executor._block_launches  # the block kernel ran, bound for this k

    Y0_host = rng.standard_normal((m, k)).astype(dtype)
    for order in ("C", "F"):
        out = cupy.asarray(np.array(Y0_host, order=order))
        assert A.matmat(X, out=out, alpha=-0.5, beta=2.0) is out
        assert_product_close(out.get(), *raw, zm.shape, X_host, alpha=-0.5, beta=2.0, y0=Y0_host)
        out = cupy.full((m, k), cupy.nan, dtype=dtype, order=order)
        A.matmat(X, out=out, alpha=3.0, beta=0.0)  # beta = 0 never reads out
        assert bool(cupy.isfinite(out).all())
        assert_product_close(out.get(), *raw, zm.shape, X_host, alpha=3.0)


def test_a_fortran_ordered_x_is_copied_and_a_strided_out_keeps_its_neighbours():
    zm = MATRICES[-3]  # power law 5000 x 3000
    A, raw = build(zm, "csr", {}, "csr_scalar", {}, "float64", "int32")
    m, n = zm.shape
    X_host = np.asfortranarray(np.random.default_rng(9).standard_normal((n, 5)))
    wide = cupy.zeros((m, 9))
    window = wide[:, 2:7]
    A.matmat(cupy.asarray(X_host), out=window)
    assert_product_close(window.get(), *raw, zm.shape, X_host)
    assert not bool(wide[:, :2].any()) and not bool(wide[:, 7:].any())
    assert 5 in A._executor._block_launches


def test_the_block_kernel_is_deterministic():
    zm = MATRICES[-3]
    A, _ = build(zm, "csr", {}, "csr_vector", {}, "float64", "int32")
    X = cupy.asarray(np.random.default_rng(4).standard_normal((zm.shape[1], 40)))
    first = A @ X
    for _ in range(5):
        cupy.testing.assert_array_equal(A @ X, first)


def test_a_load_balanced_kernel_keeps_multiplying_a_block_column_by_column():
    zm = MATRICES[-1]  # a few very long rows
    A, raw = build(zm, "csr", {}, "csr_merge", {}, "float64", "int32")
    assert A._executor.block_spec is None
    X_host = np.random.default_rng(2).standard_normal((zm.shape[1], 4))
    assert_product_close((A @ cupy.asarray(X_host)).get(), *raw, zm.shape, X_host)


def test_the_block_kernel_takes_the_matrix_kernels_read_path_and_block():
    zm = MATRICES[-3]
    A, raw = build(zm, "csr", {}, "csr_vector", {"ldg": False, "block_threads": 128}, "float32", "int64")
    X_host = np.random.default_rng(6).standard_normal((zm.shape[1], 16)).astype("float32")
    assert_product_close((A @ cupy.asarray(X_host)).get(), *raw, zm.shape, X_host)
    assert all(launch.block == 128 for launch in A._executor._block_launches[16])
