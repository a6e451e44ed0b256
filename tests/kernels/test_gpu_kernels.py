"""Every GPU kernel against the reference executor on the same format (IsEquivalentToRef).

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix, reference
from kernel_configs import KERNEL_CONFIGS, kernel_config_id
from oracle import assert_product_close, raw_arrays, value_limited
from zoo import ZOO, ZooMatrix, raw_csr

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _big_matrices():
    rng = np.random.default_rng(5000)
    out = []
    lengths = np.minimum(rng.zipf(1.7, size=5000), 3000)
    rows = np.repeat(np.arange(5000), lengths)
    cols = np.concatenate([rng.choice(3000, size=k, replace=False) for k in lengths])
    data, indices, indptr = raw_csr(rows, cols, rng.standard_normal(rows.size), (5000, 3000))
    out.append(ZooMatrix("powerlaw_5000x3000", data, indices, indptr, (5000, 3000)))
    k = 20  # 7-point Laplacian on 20^3: 8000 rows, more than one block of threads
    idx = np.arange(k ** 3).reshape(k, k, k)
    r, c = [idx.ravel()], [idx.ravel()]
    for axis in range(3):
        for shift in (1, -1):
            src = np.moveaxis(idx, axis, 0)[max(0, -shift):k - max(0, shift)]
            dst = np.moveaxis(idx, axis, 0)[max(0, shift):k - max(0, -shift) or None]
            r.append(src.ravel())
            c.append(dst.ravel())
    r, c = np.concatenate(r), np.concatenate(c)
    v = np.where(r == c, 6.0, -1.0)
    out.append(ZooMatrix("laplace7_20^3", *raw_csr(r, c, v, (k ** 3, k ** 3)), (k ** 3, k ** 3)))
    lengths = np.r_[np.full(300, 3), [20000, 5000], np.full(300, 1)]  # a few very long rows
    rows = np.repeat(np.arange(lengths.size), lengths)
    cols = np.concatenate([rng.choice(30000, size=n, replace=False) for n in lengths])
    out.append(ZooMatrix("long_rows", *raw_csr(rows, cols, rng.standard_normal(rows.size),
                                                (lengths.size, 30000)), (lengths.size, 30000)))
    return out


MATRICES = ZOO + _big_matrices()


def build(zm, fmt, fparams, kernel, kparams, dtype, index_dtype):
    data, indices, indptr = raw_arrays(zm, dtype, index_dtype, few=value_limited(fmt, fparams))
    S = sp.csr_array((data, indices, indptr), shape=zm.shape)
    A = SparseMatrix(S, format=fmt, device="cuda", kernel=kernel, index_dtype=index_dtype, **fparams, **kparams)
    return A, (data, indices, indptr)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("config", KERNEL_CONFIGS, ids=kernel_config_id)
def test_kernel_equivalent_to_reference(config, zm, dtype, index_dtype):
    kernel, fmt, fparams, kparams = config
    A, raw = build(zm, fmt, fparams, kernel, kparams, dtype, index_dtype)
    assert A.kernel == kernel
    rng = np.random.default_rng(7)
    m, n = zm.shape
    x_host = rng.standard_normal(n).astype(dtype)
    y0_host = rng.standard_normal(m).astype(dtype)
    x = cupy.asarray(x_host)
    x_before = x.copy()
    host_storage = A.storage.to_xp(np)

    y = A @ x
    assert isinstance(y, cupy.ndarray) and y.dtype == np.dtype(dtype) and y.shape == (m,)
    assert_product_close(y.get(), *raw, zm.shape, x_host)
    ref = reference.spmv(host_storage, x_host)
    assert_product_close(y.get(), *raw, zm.shape, x_host)  # vs SciPy in float64
    np.testing.assert_allclose(y.get(), ref, rtol=1e-4 if dtype == "float32" else 1e-11,
                               atol=1e-4 * (np.abs(ref).max() if ref.size else 1))
    cupy.testing.assert_array_equal(x, x_before)

    out = cupy.asarray(y0_host)
    assert A.matvec(x, out=out, alpha=-0.5, beta=2.0) is out
    assert_product_close(out.get(), *raw, zm.shape, x_host, alpha=-0.5, beta=2.0, y0=y0_host)

    out = cupy.full(m, cupy.nan, dtype=dtype)
    A.matvec(x, out=out, alpha=3.0, beta=0.0)
    assert bool(cupy.isfinite(out).all())
    assert_product_close(out.get(), *raw, zm.shape, x_host, alpha=3.0)


@pytest.mark.parametrize("config", KERNEL_CONFIGS, ids=kernel_config_id)
def test_kernel_block_of_vectors(config):
    kernel, fmt, fparams, kparams = config
    zm = MATRICES[-3]  # power law 5000 x 3000
    A, raw = build(zm, fmt, fparams, kernel, kparams, "float64", "int32")
    X_host = np.random.default_rng(3).standard_normal((zm.shape[1], 3))
    Y = A @ cupy.asarray(X_host)
    assert Y.shape == (zm.shape[0], 3)
    assert_product_close(Y.get(), *raw, zm.shape, X_host)


@pytest.mark.parametrize("config", KERNEL_CONFIGS, ids=kernel_config_id)
def test_kernel_determinism(config):
    kernel, fmt, fparams, kparams = config
    zm = MATRICES[-3]
    A, raw = build(zm, fmt, fparams, kernel, kparams, "float64", "int32")
    x = cupy.asarray(np.random.default_rng(4).standard_normal(zm.shape[1]))
    first = A @ x
    runs = [A @ x for _ in range(10)]
    if A.deterministic:  # the product's own declaration: a composed kernel's parts included
        for y in runs:
            cupy.testing.assert_array_equal(y, first)  # bit-identical
    else:
        for y in runs:
            cupy.testing.assert_allclose(y, first, rtol=1e-12, atol=1e-12)


def test_numpy_x_is_refused():
    A = SparseMatrix(sp.eye_array(4, format="csr"), device="cuda")
    with pytest.raises(TypeError, match="host memory but the matrix is on the GPU"):
        A @ np.ones(4)


def test_torch_tensors_without_copy():
    torch = pytest.importorskip("torch")
    S = sp.random_array((300, 200), density=0.05, format="csr", random_state=2)
    A = SparseMatrix(S, device="cuda")
    x = torch.randn(200, dtype=torch.float64, device="cuda")
    out = torch.zeros(300, dtype=torch.float64, device="cuda")
    got = A.matvec(x, out=out)
    assert got is out
    assert_product_close(out.cpu().numpy(), S.data, S.indices, S.indptr, S.shape, x.cpu().numpy())


def test_cupyx_input_and_current_stream():
    import cupyx.scipy.sparse as csp

    S = sp.random_array((400, 400), density=0.02, format="csr", random_state=9)
    A = SparseMatrix(csp.csr_matrix(S), format="ell")  # device=None with a GPU input: cuda
    assert A.device == "cuda" and A.kernel == "ell"
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.ones(400)
        y = A @ x
    stream.synchronize()
    np.testing.assert_allclose(y.get(), S @ np.ones(400), rtol=1e-12)


def test_default_kernel_choice():
    S = sp.random_array((2000, 2000), density=0.01, format="csr", random_state=1)
    assert SparseMatrix(S, device="cuda").kernel in ("csr_vector", "csr_scalar")
    assert SparseMatrix(S, format="coo", device="cuda").kernel == "coo_atomic"
    assert SparseMatrix(S.astype(np.complex128), format="pkt", device="cuda").kernel == "reference"
    assert SparseMatrix(S.astype(np.complex128), format="csr", device="cuda").kernel in ("csr_vector", "csr_scalar")
    assert SparseMatrix(S, format="sell", device="cuda").kernel == "sell"


def test_kernel_errors():
    S = sp.random_array((50, 50), density=0.1, format="csr", random_state=1)
    with pytest.raises(ValueError, match="kernel 'ell' multiplies ell matrices, not 'csr'"):
        SparseMatrix(S, format="csr", device="cuda", kernel="ell")
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        SparseMatrix(S, format="csr", device="cuda", kernel="nope")
    with pytest.raises(TypeError, match="has no instantiation for complex128"):
        SparseMatrix(S.astype(np.complex128), format="bell", device="cuda", kernel="bell")
    with pytest.raises(TypeError, match="format='auto' picks its own format, kernel"):
        SparseMatrix(S, device="cuda", kernel="csr_scalar")
