"""The public API: SparseMatrix construction, attributes, products, conversion and description."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import CPUFallbackWarning, SparseMatrix, matrix
from cocktail.auto import fixed_rule as auto
from oracle import unbounded
from zoo import ZOO_BY_NAME

ALL_FORMATS = ["csr", "csr_pattern", "csr_vi", "coo", "dia", "dia_vi", "bdia", "ell", "sell", "hyb", "pkt", "bcsr", "bell", "sbell"]


def sample(m=40, n=30, seed=0):
    return sp.random_array((m, n), density=0.15, format="csr", random_state=seed)


def test_every_format_is_registered():
    assert cocktail.formats.names() == ALL_FORMATS + ["cocktail"]  # the Cocktail is built from a plan
    assert [n for n in cocktail.formats.names() if cocktail.formats.get(n).standalone] == ALL_FORMATS


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "bsr", "lil", "dok"])
def test_scipy_inputs(kind):
    S = sample().asformat(kind)
    A = SparseMatrix(S, device="cpu")
    x = np.arange(30, dtype=np.float64)
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-13)


def test_spmatrix_input():
    S = sp.csr_matrix(sample())
    np.testing.assert_allclose(SparseMatrix(S, device="cpu") @ np.ones(30), S @ np.ones(30), rtol=1e-13)


def test_tuple_and_matrix_inputs():
    S = sample()
    A = SparseMatrix((S.data, S.indices, S.indptr), shape=S.shape, format="ell", device="cpu")
    B = SparseMatrix(A, format="coo", device="cpu")
    assert (B.to_scipy() != S).nnz == 0
    with pytest.raises(ValueError, match="disagrees with the matrix's shape"):
        SparseMatrix(S, shape=(3, 3), device="cpu")


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_attributes_and_products(fmt):
    S = sample()
    if cocktail.formats.get(fmt).max_values == 1:
        S.data[:] = 0.5
    A = SparseMatrix(S, format=fmt, device="cpu", **unbounded(fmt, {}))
    assert A.shape == (40, 30) and A.dtype == np.float64 and A.nnz == S.nnz
    assert A.format == fmt and A.device == "cpu" and isinstance(A.params, dict)
    rng = np.random.default_rng(0)
    x, X, y0 = rng.standard_normal(30), rng.standard_normal((30, 4)), rng.standard_normal(40)
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(A.matmat(X), S @ X, rtol=1e-12, atol=1e-14)
    out = y0.copy()
    assert A.matvec(x, out=out, alpha=2.0, beta=-1.0) is out
    np.testing.assert_allclose(out, 2 * (S @ x) - y0, rtol=1e-12, atol=1e-14)
    assert (A.to_scipy() != S).nnz == 0
    text = A.explain()
    assert fmt in text and "padding ratio" in text and "bytes per SpMV" in text and "parameters" in text
    assert repr(A).startswith(f"<cocktail.SparseMatrix 40x30 format={fmt}")


def test_caller_matrix_untouched():
    zm = ZOO_BY_NAME["duplicates"]
    S = sp.csr_array((zm.data.copy(), zm.indices.copy(), zm.indptr.copy()), shape=zm.shape)
    assert not S.has_canonical_format
    snapshot = [a.copy() for a in (S.data, S.indices, S.indptr)]
    A = SparseMatrix(S, format="ell", device="cpu")
    A @ np.ones(zm.shape[1])
    for a, b in zip((S.data, S.indices, S.indptr), snapshot):
        np.testing.assert_array_equal(a, b)
    assert A.nnz < len(zm.data)  # duplicates summed in our copy only


def test_storage_is_read_only():
    A = SparseMatrix(sample(), format="ell", device="cpu")
    with pytest.raises(ValueError):
        A.storage.data[0, 0] = 1.0


def test_dtype_conversion():
    A = SparseMatrix(sample(), dtype=np.float32, device="cpu")
    assert A.dtype == np.float32 and (A @ np.ones(30, dtype=np.float32)).dtype == np.float32
    C = SparseMatrix(sample(), dtype="complex64", format="sell", device="cpu")
    assert (C @ np.ones(30, dtype=np.complex64)).dtype == np.complex64


def test_empty_shapes():
    for shape in [(0, 0), (0, 5), (5, 0)]:
        A = SparseMatrix(sp.csr_array(shape), device="cpu")
        y = A @ np.ones(shape[1])
        assert y.shape == (shape[0],) and not y.any()


def test_cpu_fallback_warns_once(monkeypatch):
    monkeypatch.setattr(matrix, "cuda_available", lambda: False)
    monkeypatch.setattr(matrix, "_warned_cpu_fallback", False)
    with pytest.warns(CPUFallbackWarning, match="no CUDA GPU found"):
        A = SparseMatrix(sample())
    assert A.device == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SparseMatrix(sample())  # second time: silent


def test_cuda_without_gpu(monkeypatch):
    monkeypatch.setattr(matrix, "cuda_available", lambda: False)
    with pytest.raises(RuntimeError, match="device='cuda' was asked for but CuPy sees no CUDA GPU"):
        SparseMatrix(sample(), device="cuda")


def test_auto_rule():
    stencil = ZOO_BY_NAME["stencil"]
    S = sp.csr_array((stencil.data, stencil.indices, stencil.indptr), shape=stencil.shape)
    assert SparseMatrix(S, format="auto", device="cpu").format == "csr"  # SciPy's fastest product on the CPU
    assert auto.choose_format(SparseMatrix(S, device="cpu").storage, device="cuda") == "dia"
    regular = sp.csr_array((np.ones(400), np.random.default_rng(0).integers(0, 100, 400), np.arange(0, 401, 4)),
                           shape=(100, 100))
    assert auto.choose_format(SparseMatrix(regular, device="cpu").storage, device="cuda") == "ell"
    assert SparseMatrix(sp.csr_array((4, 4)), format="auto", device="cpu").format == "csr"
    lengths = np.r_[np.full(99, 3), 90]
    rows = np.repeat(np.arange(100), lengths)
    cols = np.concatenate([np.arange(k) for k in lengths])
    skewed = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(100, 100))
    assert auto.choose_format(SparseMatrix(skewed, device="cpu").storage) == "hyb"


def test_vendor_is_a_flag_of_format_auto():
    S = sp.random_array((30, 20), density=0.2, format="csr", rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="vendor must be True or False"):
        SparseMatrix(S, device="cpu", vendor="no")
    with pytest.raises(ValueError, match="vendor=False applies to format='auto'"):
        SparseMatrix(S, format="csr", device="cpu", vendor=False)
    A = SparseMatrix(S, device="cpu", vendor=False)  # the CPU's csr: nothing to leave out
    np.testing.assert_allclose(A @ np.ones(20), S @ np.ones(20))
