"""ScatterProduct on the GPU: its first call is captured in a CUDA graph and replayed.

A call that synchronised with the host (a device-to-host copy, ``nonzero``, a boolean mask,
``.item()``) would fail inside the capture.  Marked ``gpu``: skipped where CuPy sees no CUDA
device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import reference
from cocktail.formats import CSR, get
from cocktail.reference.scatter import ScatterProduct
from configs import CONFIGS, config_id
from oracle import assert_product_close, random_operand, raw_arrays, unbounded
from zoo import ZOO, ZOO_BY_NAME

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail._xp.cuda_available() else None

DTYPES = ["float32", "float64", "complex64", "complex128"]
# Matrices with at least one row and one column (an empty output would capture an empty graph).
CAPTURED = [ZOO_BY_NAME[k] for k in ("1x1", "empty_rows", "long_row", "power_law", "tall", "wide",
                                     "explicit_zeros", "stencil", "dense_block", "no_entries")]


def build(name, params, zm, dtype, index_dtype):
    raw = raw_arrays(zm, dtype, index_dtype)
    csr = CSR.from_arrays(*raw, zm.shape, index_dtype=index_dtype)
    return get(name).from_csr(csr, **unbounded(name, params)), raw


def assert_matches(got, want, raw, shape, X):
    """``got`` (from the device) and ``want`` (the host reference product) differ by at most twice
    the rounding bound of ``oracle.assert_product_close``: 4 eps (row length + 2) |A||X| each."""
    data, indices, indptr = raw
    absA = sp.csr_array((np.abs(data).astype(np.float64), indices.astype(np.int64), indptr.astype(np.int64)),
                        shape=shape)
    lengths = np.diff(indptr.astype(np.int64)).astype(np.float64)[:, None]
    eps = np.finfo(got.dtype).eps
    bound = 8 * eps * (lengths + 2) * (absA @ np.abs(X).astype(np.float64)) + np.finfo(got.dtype).tiny
    assert got.shape == want.shape and got.dtype == want.dtype
    assert (np.abs(got.astype(np.complex128) - want) <= bound).all()


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zm", CAPTURED, ids=lambda m: m.name)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_first_call_captured_in_a_cuda_graph(config, zm, dtype, index_dtype):
    name, params = config
    host, raw = build(name, params, zm, dtype, index_dtype)
    dev = host.to_xp(cupy)
    assert dev.xp is cupy
    product = ScatterProduct(dev)  # every host synchronisation happens here
    m, n = zm.shape
    k = 3
    X_host = random_operand(np.random.default_rng(21), (n, k), dtype)
    want = reference.product_for(host)(host, X_host)
    X = cupy.asarray(X_host)
    Y = cupy.empty((m, k), dtype=dtype)
    cupy.cuda.Device().synchronize()  # the uploads (legacy stream) are done before the capture

    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        try:
            out = product(X, Y)  # the first call
        finally:
            g = s.end_capture()
        assert out is Y
        Y.fill(np.nan)  # the capture only recorded the work: replaying it must overwrite this
        g.launch(s)
        s.synchronize()
    got = Y.get()
    assert np.isfinite(got).all()
    assert_product_close(got, *raw, zm.shape, X_host)
    assert_matches(got, want, raw, zm.shape, X_host)
    np.testing.assert_array_equal(X.get(), X_host)

    # the graph replays: a second launch on new contents of X gives the new product
    X_host2 = random_operand(np.random.default_rng(22), (n, k), dtype)
    X.set(X_host2, stream=s)
    with s:
        Y.fill(np.nan)
        g.launch(s)
        s.synchronize()
    assert_product_close(Y.get(), *raw, zm.shape, X_host2)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_device_product_empty_and_strided(config, dtype):
    """Uncaptured calls on the device: every zoo matrix, k = 0, a strided output."""
    name, params = config
    for zm in ZOO:
        host, raw = build(name, params, zm, dtype, "int32")
        product = ScatterProduct(host.to_xp(cupy))
        m, n = zm.shape
        X_host = random_operand(np.random.default_rng(23), (n, 2), dtype)
        big = cupy.full((m, 5), np.nan, dtype=dtype)
        Y = big[:, 1::2]
        assert product(cupy.asarray(X_host), Y) is Y
        assert_product_close(Y.get(), *raw, zm.shape, X_host)
        assert np.isnan(big[:, 0::2].get()).all()
        Y0 = cupy.full((m, 0), np.nan, dtype=dtype)
        assert product(cupy.empty((n, 0), dtype=dtype), Y0) is Y0
