"""The conformance suite: every format and parameter set, over the whole matrix zoo.

For each (format config, zoo matrix, value dtype, index dtype) it checks the exact
round trip through ``to_csr()`` and the reference product against SciPy in float64.  A
format with a value table (dia_vi) gets the zoo's matrices with few distinct values
(``oracle.few_values``); its refusal of many is tested in ``test_format_dia_vi``.  The default tier takes each
(config, zoo matrix) in one of the dtype pairs, in turn (tests/tiers.py); ``pytest --exhaustive`` runs them all.
"""

from __future__ import annotations

import numpy as np
import pytest

from cocktail import reference
from cocktail.formats import CSR, get
from configs import BLOCK_SIZES, CONFIGS, config_id
from oracle import (assert_csr_identical, assert_product_close, build_params, canonical_scipy, random_operand,
                    raw_arrays, value_limited)
from tiers import in_turn
from zoo import ZOO, ZOO_BY_NAME

DTYPES = ["float32", "float64", "complex64", "complex128"]
INDEX_DTYPES = ["int32", "int64"]


def check_format(name, params, zm, dtype, index_dtype, seed=0):
    data, indices, indptr = raw_arrays(zm, dtype, index_dtype, few=value_limited(name, params))
    before = [a.copy() for a in (data, indices, indptr)]
    csr = CSR.from_arrays(data, indices, indptr, zm.shape, index_dtype=index_dtype)
    fmt = get(name).from_csr(csr, **build_params(name, params, csr.dtype))
    for a, b in zip((data, indices, indptr), before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched

    # metadata and byte model
    assert fmt.name == name
    assert fmt.shape == zm.shape and fmt.dtype == np.dtype(dtype)
    assert fmt.index_dtype == np.dtype(index_dtype)
    assert fmt.nnz == csr.nnz == canonical_scipy(data, indices, indptr, zm.shape).nnz
    assert fmt.stored_slots >= fmt.nnz
    assert fmt.padding_ratio >= 1.0
    itemsize = np.dtype(dtype).itemsize
    assert fmt.spmv_bytes() >= fmt.nnz * itemsize + zm.shape[0] * itemsize
    assert fmt.spmv_bytes("float64") >= fmt.spmv_bytes("float32")
    # a value-indexed format (or part) reads a one-byte code per entry, a pattern format none
    per_value = {None: itemsize, 1: 0}.get(value_limited(name, params), 1)
    floor = fmt.nnz * per_value + sum(zm.shape) * itemsize  # the values, x and y, each once
    assert floor <= fmt.dram_bytes() <= fmt.dram_bytes(l2_bytes=0)
    assert fmt.dram_bytes(dtype="float64") >= fmt.dram_bytes(dtype="float32")
    # a block product of k columns reads the matrix once: only X and Y grow, k values a row
    one, eight = fmt.dram_bytes(), fmt.dram_bytes(k=8)
    assert eight - one == 7 * (fmt.dram_bytes(k=2) - one) >= 7 * sum(zm.shape) * itemsize
    assert fmt.nbytes == sum(a.nbytes for a in fmt.arrays().values())

    # exact round trip
    assert_csr_identical(fmt.to_csr(), csr)

    # products
    rng = np.random.default_rng(seed)
    m, n = zm.shape
    x = random_operand(rng, (n,), dtype)
    x_before = x.copy()
    y = reference.spmv(fmt, x)
    assert_product_close(y, data, indices, indptr, zm.shape, x)
    np.testing.assert_array_equal(x, x_before)

    alpha, beta = (1.5 - 0.5j, -0.25 + 1j) if np.dtype(dtype).kind == "c" else (1.5, -0.25)
    y0 = random_operand(rng, (m,), dtype)
    out = y0.copy()
    got = reference.spmv(fmt, x, out=out, alpha=alpha, beta=beta)
    assert got is out
    assert_product_close(out, data, indices, indptr, zm.shape, x, alpha, beta, y0)

    X = random_operand(rng, (n, 3), dtype)
    assert_product_close(reference.spmv(fmt, X), data, indices, indptr, zm.shape, X)


# The default tier: every config on every zoo matrix, in one (dtype, index dtype) taken in turn; the rest exhaustive.
@pytest.mark.parametrize("config,zm,dtype,index_dtype",
                         in_turn([CONFIGS, ZOO, DTYPES, INDEX_DTYPES], [config_id, lambda m: m.name, str, str], 2))
def test_conformance(config, zm, dtype, index_dtype):
    check_format(*config, zm, dtype, index_dtype)


# The default tier: every block shape on one of the four matrices, taken in turn; the rest exhaustive.
@pytest.mark.parametrize("name,r,c,zm",
                         in_turn([["bcsr", "bell", "sbell"], BLOCK_SIZES, BLOCK_SIZES,
                                  [ZOO_BY_NAME[k] for k in ("power_law", "tall", "wide", "dense_block")]],
                                 [str, str, str, lambda m: m.name]))
def test_every_block_shape(name, r, c, zm):
    check_format(name, {"block": (r, c)}, zm, "float64", "int32")


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_beta_zero_ignores_nan_in_out(config):
    name, params = config
    zm = ZOO_BY_NAME["empty_rows"]
    data, indices, indptr = raw_arrays(zm, "float64", "int32", few=value_limited(name, params))
    fmt = get(name).from_csr(CSR.from_arrays(data, indices, indptr, zm.shape), **build_params(name, params, data.dtype))
    x = random_operand(np.random.default_rng(1), (zm.shape[1],), "float64")
    out = np.full(zm.shape[0], np.nan)
    out[::2] = np.inf
    reference.spmv(fmt, x, out=out, alpha=2.0, beta=0.0)
    assert np.isfinite(out).all()
    assert_product_close(out, data, indices, indptr, zm.shape, x, alpha=2.0)
