"""The device-only reference path: ``entries(fmt)`` of every format and ``ScatterProduct``.

For every (format config, zoo matrix, value dtype, index dtype): the entries are exactly the
canonical CSR's (each (row, col) once, value ``values[pos]`` bit for bit, ``values`` a flat
view of one of the format's own arrays), and ``ScatterProduct`` computes the reference
product within rounding.  A guarded array type checks on the host that a call performs none
of the operations that would synchronise a GPU stream.
"""

from __future__ import annotations

import numpy as np
import pytest

from cocktail import reference
from cocktail.formats import CSR, get
from cocktail.reference.entries import Entries, entries_of
from cocktail.reference.scatter import ScatterProduct
from configs import CONFIGS, config_id
from oracle import assert_product_close, assert_same_arrays, random_operand, raw_arrays, unbounded
from zoo import ZOO, ZOO_BY_NAME

DTYPES = ["float32", "float64", "complex64", "complex128"]
INDEX_DTYPES = ["int32", "int64"]


def build(name, params, zm, dtype="float64", index_dtype="int32"):
    raw = raw_arrays(zm, dtype, index_dtype)
    csr = CSR.from_arrays(*raw, zm.shape, index_dtype=index_dtype)
    return csr, get(name).from_csr(csr, **unbounded(name, params)), raw


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
    rows = np.concatenate([e.rows for e in ents]) if ents else np.zeros(0, np.int64)
    cols = np.concatenate([e.cols for e in ents]) if ents else np.zeros(0, np.int64)
    vals = np.concatenate([e.vals() for e in ents]) if ents else np.zeros(0, fmt.dtype)
    order = np.lexsort((cols, rows))
    # exactly the canonical CSR's entries, each once, with its value bit for bit (-0.0 included)
    assert_same_arrays(rows[order], csr.row_ids().astype(np.int64))
    assert_same_arrays(cols[order], csr.indices.astype(np.int64))
    assert_same_arrays(vals[order], csr.data)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zm", ZOO, ids=lambda m: m.name)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_entries_and_scatter_product(config, zm, dtype, index_dtype):
    name, params = config
    csr, fmt, raw = build(name, params, zm, dtype, index_dtype)
    before = snapshot(fmt)
    check_entries(fmt, csr)

    sp = ScatterProduct(fmt)
    assert sp.nnz == csr.nnz
    assert sp.nbytes == 3 * 8 * csr.nnz
    m, n = zm.shape
    X = random_operand(np.random.default_rng(3), (n, 3), dtype)
    X_before = X.copy()
    Y = np.full((m, 3), np.nan, dtype=dtype)
    assert sp(X, Y) is Y
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
        Y = np.empty((zm.shape[0], 2), dtype="complex128")
        assert_product_close(ScatterProduct(fmt)(X, Y), *raw, zm.shape, X)


@pytest.mark.parametrize("r", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("c", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("name", ["bcsr", "bell", "sbell"])
def test_every_block_shape(name, r, c):
    for zm in (ZOO_BY_NAME[k] for k in ("power_law", "tall", "wide", "explicit_zeros")):
        csr, fmt, raw = build(name, {"block": (r, c)}, zm, "float64", "int32")
        check_entries(fmt, csr)
        X = random_operand(np.random.default_rng(5), (zm.shape[1], 2), "float64")
        Y = np.empty((zm.shape[0], 2))
        assert_product_close(ScatterProduct(fmt)(X, Y), *raw, zm.shape, X)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_strided_operands_and_empty_blocks(config):
    name, params = config
    csr, fmt, raw = build(name, params, ZOO_BY_NAME["stencil"], "complex64", "int32")
    m, n = fmt.shape
    sp = ScatterProduct(fmt)
    rng = np.random.default_rng(6)
    X = np.asfortranarray(random_operand(rng, (n, 4), "complex64"))  # column-major X
    big = np.full((m, 9), np.nan, dtype="complex64")
    Y = big[:, 1::2]  # a strided output: not C-contiguous
    assert sp(X, Y) is Y
    assert_product_close(Y, *raw, fmt.shape, X)
    assert np.isnan(big[:, 0::2]).all()  # nothing written outside Y
    Xs = random_operand(rng, (n, 8), "complex64")[:, ::2]  # strided X
    assert_product_close(sp(Xs, np.empty((m, 4), "complex64")), *raw, fmt.shape, Xs)
    # k = 0
    Y0 = np.empty((m, 0), "complex64")
    assert sp(np.empty((n, 0), "complex64"), Y0) is Y0


@pytest.mark.parametrize("zm", [z for z in ZOO if 0 in z.shape or z.name == "no_entries"], ids=lambda m: m.name)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_empty_matrices(config, zm):
    name, params = config
    csr, fmt, raw = build(name, params, zm)
    sp = ScatterProduct(fmt)
    assert sp.nnz == 0 and sp.nbytes == 0
    m, n = zm.shape
    for k in (0, 2):
        Y = np.full((m, k), np.nan)
        sp(np.ones((n, k)), Y)
        assert (Y == 0).all()


def test_operand_checks():
    csr, fmt, _ = build("ell", {}, ZOO_BY_NAME["empty_rows"])
    sp = ScatterProduct(fmt)
    m, n = fmt.shape
    with pytest.raises(TypeError, match="dtype"):
        sp(np.ones((n, 1), np.float32), np.empty((m, 1)))
    with pytest.raises(TypeError, match="dtype"):
        sp(np.ones((n, 1)), np.empty((m, 1), np.complex128))
    with pytest.raises(ValueError, match="shape"):
        sp(np.ones(n), np.empty((m, 1)))
    with pytest.raises(ValueError, match="shape"):
        sp(np.ones((n + 1, 1)), np.empty((m, 1)))
    with pytest.raises(ValueError, match="columns"):
        sp(np.ones((n, 2)), np.empty((m, 1)))


def test_values_are_views_not_copies():
    """Each Entries refers to the format's value array itself (no copy of the values)."""
    for name, params in CONFIGS:
        _, fmt, _ = build(name, params, ZOO_BY_NAME["stencil"])
        value_arrays = [a for k, a in fmt.arrays().items() if a.dtype == fmt.dtype and not k.endswith("zero_val")]
        for e in entries_of(fmt):
            assert any(e.values.size == a.size and (a.size == 0 or np.shares_memory(e.values, a))
                       for a in value_arrays), name


# --- no host synchronisation in a call -----------------------------------------------------

class SyncError(AssertionError):
    pass


def _full_reduction_refused(name):
    def method(self, axis=None, *args, **kwargs):
        if axis is None:  # a scalar the host would read
            raise SyncError(f"full {name}")
        return getattr(np.ndarray, name)(self, axis, *args, **kwargs)
    return method


class Guarded(np.ndarray):
    """An ndarray that refuses what would synchronise a GPU stream: reading a value on the host
    (bool/int/float/item/tolist), boolean-mask indexing and the data-dependent-size functions."""

    def _refuse(self, *args, **kwargs):
        raise SyncError("host synchronisation")

    __bool__ = __int__ = __float__ = __complex__ = __index__ = _refuse
    item = tolist = nonzero = tobytes = _refuse
    sum, prod, max, min, any, all, argmax, argmin = map(
        _full_reduction_refused, ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin"))

    def __getitem__(self, key):
        for k in key if isinstance(key, tuple) else (key,):
            if getattr(k, "dtype", None) is not None and np.dtype(k.dtype) == bool:
                raise SyncError("boolean mask")
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        for k in key if isinstance(key, tuple) else (key,):
            if getattr(k, "dtype", None) is not None and np.dtype(k.dtype) == bool:
                raise SyncError("boolean mask")
        super().__setitem__(key, value)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract, np.compress) or (
                func is np.where and len(args) + len(kwargs) == 1):
            raise SyncError(func.__name__)
        return super().__array_function__(func, types, args, kwargs)


def guard(a):
    return a.view(Guarded)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_call_does_not_synchronise(config, dtype):
    name, params = config
    csr, fmt, raw = build(name, params, ZOO_BY_NAME["dense_block"], dtype)
    sp = ScatterProduct(fmt)
    sp.entries = tuple(Entries(guard(e.rows), guard(e.cols), guard(e.pos), guard(e.values)) for e in sp.entries)
    m, n = fmt.shape
    X = guard(random_operand(np.random.default_rng(8), (n, 2), dtype))
    Y = guard(np.full((m, 2), np.nan, dtype=dtype))
    for refused in (lambda: bool(Y[:1, 0] == 0), lambda: Y[Y == 0], lambda: np.nonzero(X), lambda: X.tolist(),
                    lambda: int(sp.entries[0].rows[:1]), lambda: sp.entries[0].rows.max(),
                    lambda: np.any(Y)):
        with pytest.raises(SyncError):  # the guard works
            refused()
    sp(X, Y)
    assert_product_close(np.asarray(Y.view(np.ndarray)), *raw, fmt.shape, np.asarray(X.view(np.ndarray)))
