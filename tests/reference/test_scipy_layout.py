"""SciPy sparse arrays over the formats' own arrays (``reference.scipy_layout``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import reference
from cocktail.formats import CSR, get
from cocktail.reference.scipy_layout import scipy_copy_bytes, scipy_matrix
from configs import CONFIGS, config_id
from oracle import assert_product_close, assert_same_arrays, build_params, random_operand, raw_arrays, value_limited
from zoo import ZOO, ZOO_BY_NAME

DTYPES = ["float32", "float64", "complex64", "complex128"]
INDEX_DTYPES = ["int32", "int64"]
SCIPY_FORMATS = ("csr", "coo", "dia", "bcsr")
SCIPY_CONFIGS = [c for c in CONFIGS if c[0] in SCIPY_FORMATS]
OTHER_CONFIGS = [c for c in CONFIGS if c[0] not in SCIPY_FORMATS]


def build(name, params, zm, dtype="float64", index_dtype="int32"):
    raw = raw_arrays(zm, dtype, index_dtype, few=value_limited(name, params))
    csr = CSR.from_arrays(*raw, zm.shape, index_dtype=index_dtype)
    return get(name).from_csr(csr, **build_params(name, params, csr.dtype)), raw


def expressible(fmt) -> bool:
    if fmt.name != "bcsr":
        return True
    (m, n), (r, c) = fmt.shape, fmt.block
    return m % r == 0 and n % c == 0


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zm", ZOO, ids=lambda m: m.name)
@pytest.mark.parametrize("config", SCIPY_CONFIGS, ids=config_id)
def test_scipy_product(config, zm, dtype, index_dtype):
    name, params = config
    fmt, raw = build(name, params, zm, dtype, index_dtype)
    before = {k: np.array(v, copy=True) for k, v in fmt.arrays().items()}
    S = scipy_matrix(fmt)
    if not expressible(fmt):
        assert S is None and scipy_copy_bytes(fmt) is None
        return
    assert isinstance(S, sp.sparray) and S.shape == zm.shape
    assert S.dtype == fmt.dtype
    rng = np.random.default_rng(11)
    m, n = zm.shape
    for shape in ((n,), (n, 3), (n, 0)):
        X = random_operand(rng, shape, dtype)
        got = S @ X
        if len(shape) == 1 and name == "coo" and m == 1:
            got = np.reshape(got, (1,))  # SciPy 1.17: a 1 x n coo_array @ a vector gives a scalar
        assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype)
        assert_product_close(got, *raw, zm.shape, X)
        if len(shape) == 2 and shape[1]:  # (the blocked reference products fail for k = 0)
            ref = reference.product_for(fmt)(fmt, X)
            assert_product_close(ref, *raw, zm.shape, X)
    for k, v in fmt.arrays().items():  # SciPy modified nothing
        assert_same_arrays(v, before[k])
    copied = scipy_copy_bytes(fmt, S)
    assert copied == scipy_copy_bytes(fmt)
    if name in ("csr", "coo"):
        assert copied == 0


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_csr_and_coo_share_their_arrays(dtype, index_dtype):
    zm = ZOO_BY_NAME["power_law"]
    fmt, _ = build("csr", {}, zm, dtype, index_dtype)
    S = scipy_matrix(fmt)
    assert isinstance(S, sp.csr_array)
    for ours, theirs in ((fmt.data, S.data), (fmt.indices, S.indices), (fmt.indptr, S.indptr)):
        assert np.shares_memory(ours, theirs)
        assert theirs.dtype == ours.dtype and theirs.shape == ours.shape
    assert not fmt.data.flags.writeable  # read-only views, and SciPy accepted them as they are
    coo, _ = build("coo", {}, zm, dtype, index_dtype)
    C = scipy_matrix(coo)
    assert isinstance(C, sp.coo_array)
    for ours, theirs in ((coo.data, C.data), (coo.row, C.coords[0]), (coo.col, C.coords[1])):
        assert np.shares_memory(ours, theirs)
    # a product neither copies nor sorts the arrays in place (they are read-only: it would raise)
    x = np.ones(zm.shape[1], dtype)
    S @ x, C @ x
    assert np.shares_memory(fmt.indices, S.indices) and np.shares_memory(coo.row, C.coords[0])


def test_what_dia_and_bcsr_copy():
    zm = ZOO_BY_NAME["stencil"]  # 144 x 144: a multiple of every block tried here
    dia, _ = build("dia", {}, zm)
    D = scipy_matrix(dia)
    assert isinstance(D, sp.dia_array)
    # SciPy's column-aligned data is a copy, (ndiag, n); nothing else is
    assert D.data.shape == (dia.offsets.shape[0], zm.shape[1])
    assert not np.shares_memory(D.data, dia.data)
    assert scipy_copy_bytes(dia) == D.data.nbytes + (0 if np.shares_memory(D.offsets, dia.offsets) else D.offsets.nbytes)

    for (r, c) in ((1, 4), (2, 3), (4, 1), (1, 1)):
        fmt, _ = build("bcsr", {"block": (r, c)}, zm)
        B = scipy_matrix(fmt)
        assert isinstance(B, sp.bsr_array) and B.blocksize == (r, c)
        assert np.shares_memory(B.indptr, fmt.row_ptr)
        assert np.shares_memory(B.data, fmt.data) == (r == 1)  # (1, nb, c) transposed is contiguous
        assert np.shares_memory(B.indices, fmt.col) == (c == 1)
        expected = (0 if r == 1 else B.data.nbytes) + (0 if c == 1 else B.indices.nbytes)
        assert scipy_copy_bytes(fmt, B) == expected


@pytest.mark.parametrize("block", [(2, 1), (1, 4), (3, 8)])
def test_bcsr_partial_edge_blocks_are_refused(block):
    zm = ZOO_BY_NAME["tall"]  # 120 x 15
    fmt, _ = build("bcsr", {"block": block}, zm)
    r, c = block
    if zm.shape[0] % r == 0 and zm.shape[1] % c == 0:
        assert scipy_matrix(fmt) is not None
    else:
        assert scipy_matrix(fmt) is None


@pytest.mark.parametrize("config", OTHER_CONFIGS, ids=config_id)
def test_other_formats_have_no_scipy_layout(config):
    fmt, _ = build(*config, ZOO_BY_NAME["stencil"])
    assert scipy_matrix(fmt) is None
    assert scipy_copy_bytes(fmt) is None
