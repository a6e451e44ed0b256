"""``entries(fmt)`` of every format: the stored entries the GPU reference executor multiplies with.

For every (format config, zoo matrix, value dtype, index dtype): the entries are exactly the
canonical CSR's (each (row, col) once, value ``values[pos]`` bit for bit, ``values`` a flat
view of one of the format's own arrays), and a product computed from them alone (a NumPy
scatter-add, :func:`entries_product`) matches the reference product within rounding.  The default tier takes each
(config, zoo matrix) in one of the dtype pairs, in turn (tests/tiers.py); ``pytest --exhaustive`` runs them all.
"""

from __future__ import annotations

import numpy as np
import pytest

from cocktail import reference
from cocktail.formats import CSR, get
from cocktail.reference.entries import Entries, entries_of
from configs import CONFIGS, config_id
from oracle import assert_product_close, assert_same_arrays, build_params, random_operand, raw_arrays, value_limited
from tiers import in_turn
from zoo import ZOO, ZOO_BY_NAME

DTYPES = ["float32", "float64", "complex64", "complex128"]
INDEX_DTYPES = ["int32", "int64"]


def build(name, params, zm, dtype="float64", index_dtype="int32"):
    raw = raw_arrays(zm, dtype, index_dtype, few=value_limited(name, params))
    csr = CSR.from_arrays(*raw, zm.shape, index_dtype=index_dtype)
    return csr, get(name).from_csr(csr, **build_params(name, params, csr.dtype)), raw


def entries_product(fmt, X):
    """``A @ X`` from ``entries_of(fmt)`` alone: one scatter-add per Entries."""
    Y = np.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    for e in entries_of(fmt):
        np.add.at(Y, e.rows, e.values[e.pos][:, None] * X[e.cols])
    return Y


def snapshot(fmt):
    return {k: np.array(v, copy=True) for k, v in fmt.arrays().items()}


def assert_unchanged(fmt, before):
    for k, v in fmt.arrays().items():
        assert_same_arrays(v, before[k])


def check_entries(fmt, csr):
    ents = entries_of(fmt)
    assert isinstance(ents, list) and all(isinstance(e, Entries) for e in ents)
    own = list(fmt.arrays().values())
    for e in ents:
        assert e.rows.dtype == e.cols.dtype == e.pos.dtype == np.int64
        assert e.rows.ndim == e.cols.ndim == e.pos.ndim == 1
        assert e.rows.shape == e.cols.shape == e.pos.shape
        assert e.values.ndim == 1 and e.values.dtype == fmt.dtype
        # a flat view of a whole value array of the format, not a copy
        assert any(e.values.size == a.size and a.dtype == fmt.dtype
                   and (a.size == 0 or np.shares_memory(e.values, a)) for a in own)
        if e.size:
            assert e.pos.min() >= 0 and e.pos.max() < e.values.size
        assert e.nbytes == 3 * 8 * e.size
    assert sum(e.size for e in ents) == csr.nnz
    assert sum(e.nbytes for e in ents) == 3 * 8 * csr.nnz
    rows = np.concatenate([e.rows for e in ents]) if ents else np.zeros(0, np.int64)
    cols = np.concatenate([e.cols for e in ents]) if ents else np.zeros(0, np.int64)
    vals = np.concatenate([e.vals() for e in ents]) if ents else np.zeros(0, fmt.dtype)
    order = np.lexsort((cols, rows))
    # exactly the canonical CSR's entries, each once, with its value bit for bit (-0.0 included)
    assert_same_arrays(rows[order], csr.row_ids().astype(np.int64))
    assert_same_arrays(cols[order], csr.indices.astype(np.int64))
    assert_same_arrays(vals[order], csr.data)


# The default tier: every config on every zoo matrix, in one (dtype, index dtype) taken in turn; the rest exhaustive.
@pytest.mark.parametrize("config,zm,dtype,index_dtype",
                         in_turn([CONFIGS, ZOO, DTYPES, INDEX_DTYPES], [config_id, lambda m: m.name, str, str], 2))
def test_entries_and_their_product(config, zm, dtype, index_dtype):
    name, params = config
    csr, fmt, raw = build(name, params, zm, dtype, index_dtype)
    before = snapshot(fmt)
    check_entries(fmt, csr)

    m, n = zm.shape
    X = random_operand(np.random.default_rng(3), (n, 3), dtype)
    X_before = X.copy()
    Y = entries_product(fmt, X)
    assert Y.shape == (m, 3) and Y.dtype == np.dtype(dtype)
    assert_product_close(Y, *raw, zm.shape, X)
    ref = reference.product_for(fmt)(fmt, X)
    assert_product_close(ref, *raw, zm.shape, X)
    if name in ("csr", "coo"):  # same entries in the same order on the host: the same sums
        assert_same_arrays(Y, ref)
    assert_same_arrays(X, X_before)
    assert_unchanged(fmt, before)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_every_block_and_layout_edge(config):
    """Matrices whose sizes are not multiples of any block or slice, over every config."""
    name, params = config
    for zm in (ZOO_BY_NAME[k] for k in ("tall", "wide", "single_row", "single_col", "dense_block")):
        csr, fmt, raw = build(name, params, zm, "complex128", "int64")
        check_entries(fmt, csr)
        X = random_operand(np.random.default_rng(4), (zm.shape[1], 2), "complex128")
        assert_product_close(entries_product(fmt, X), *raw, zm.shape, X)


@pytest.mark.parametrize("r", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("c", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("name", ["bcsr", "bell", "sbell"])
def test_every_block_shape(name, r, c):
    for zm in (ZOO_BY_NAME[k] for k in ("power_law", "tall", "wide", "explicit_zeros")):
        csr, fmt, raw = build(name, {"block": (r, c)}, zm, "float64", "int32")
        check_entries(fmt, csr)
        X = random_operand(np.random.default_rng(5), (zm.shape[1], 2), "float64")
        assert_product_close(entries_product(fmt, X), *raw, zm.shape, X)


@pytest.mark.parametrize("zm", [z for z in ZOO if 0 in z.shape or z.name == "no_entries"], ids=lambda m: m.name)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_empty_matrices(config, zm):
    name, params = config
    csr, fmt, raw = build(name, params, zm)
    ents = entries_of(fmt)
    assert all(e.size == 0 and e.nbytes == 0 for e in ents)
    m, n = zm.shape
    for k in (0, 2):
        Y = entries_product(fmt, np.ones((n, k)))
        assert Y.shape == (m, k) and (Y == 0).all()


def test_values_are_views_not_copies():
    """Each Entries refers to the format's value array itself (no copy of the values)."""
    for name, params in CONFIGS:
        _, fmt, _ = build(name, params, ZOO_BY_NAME["stencil"])
        value_arrays = [a for k, a in fmt.arrays().items() if a.dtype == fmt.dtype and not k.endswith("zero_val")]
        for e in entries_of(fmt):
            assert any(e.values.size == a.size and (a.size == 0 or np.shares_memory(e.values, a))
                       for a in value_arrays), name
