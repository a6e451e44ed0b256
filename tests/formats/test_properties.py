"""Hypothesis property tests: random sparsity patterns through every format."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocktail import formats, reference
from cocktail.formats import CSR, get
from configs import CONFIGS
from hypothesis_cases import campaign_settings, check_random_product, cpu_cases
from oracle import assert_csr_identical, assert_product_close, build_params, one_value, value_limited
from zoo import raw_csr

DISTINCT_CONFIGS = list({name: (name, params) for name, params in CONFIGS}.values())


@st.composite
def sparse_inputs(draw):
    """Raw CSR arrays with a random pattern: possibly unsorted, with duplicates and explicit zeros."""
    m = draw(st.integers(0, 40))
    n = draw(st.integers(0, 40))
    nnz = draw(st.integers(0, 120)) if m and n else 0
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, m, nnz) if nnz else np.zeros(0, int)
    cols = rng.integers(0, n, nnz) if nnz else np.zeros(0, int)
    vals = rng.standard_normal(nnz)
    vals[rng.random(nnz) < draw(st.floats(0, 0.3))] = 0.0
    data, indices, indptr = raw_csr(rows, cols, vals, (m, n), rng, shuffle=draw(st.booleans()))
    return data, indices, indptr, (m, n), seed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=sparse_inputs(), config_index=st.integers(0, len(DISTINCT_CONFIGS) - 1),
       index_dtype=st.sampled_from(["int32", "int64"]), dtype=st.sampled_from(["float32", "float64"]))
def test_random_patterns(inputs, config_index, index_dtype, dtype):
    data, indices, indptr, shape, seed = inputs
    data = data.astype(dtype)
    name, params = DISTINCT_CONFIGS[config_index]
    if value_limited(name, params) == 1:
        data = one_value(data, indices, indptr, shape).astype(dtype)
    csr = CSR.from_arrays(data, indices.astype(index_dtype), indptr.astype(index_dtype), shape)
    fmt = get(name).from_csr(csr, **build_params(name, params, csr.dtype))
    assert_csr_identical(fmt.to_csr(), csr)
    x = np.random.default_rng(seed).standard_normal(shape[1]).astype(dtype)
    assert_product_close(reference.spmv(fmt, x), data, indices, indptr, shape, x)


@settings(max_examples=60, deadline=None)
@given(inputs=sparse_inputs())
def test_canonical_csr_matches_scipy(inputs):
    import scipy.sparse as sp

    data, indices, indptr, shape, _ = inputs
    csr = CSR.from_arrays(data, indices, indptr, shape)
    S = sp.csr_array((data, indices, indptr), shape=shape)
    S.sum_duplicates()  # scipy keeps explicit zeros here too
    np.testing.assert_array_equal(csr.indptr, S.indptr)
    np.testing.assert_array_equal(csr.indices, S.indices)
    # duplicates may be summed in another order than SciPy's: allow rounding of the sum
    scale = float(np.abs(data).max()) if data.size else 0.0
    np.testing.assert_allclose(csr.data, S.data, rtol=1e-14, atol=8 * np.finfo(np.float64).eps * scale)


@pytest.mark.parametrize("name", formats.names())
@campaign_settings(max_examples=15)
@given(data=st.data())
def test_random_products_within_gamma_bound_on_the_cpu(name, data):
    """The GPU campaign's strategy and check (tests/kernels/test_gpu_hypothesis.py), on the CPU executors."""
    check_random_product(data, name, cpu_cases(name), "cpu")


def _rising_brute_force(indices, indptr) -> bool:
    bounds = [int(p) for p in indptr]
    return all(all(indices[k] < indices[k + 1] for k in range(bounds[r], bounds[r + 1] - 1))
               for r in range(len(bounds) - 1))


@settings(max_examples=300, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), max_size=12), seed=st.integers(0, 2**32 - 1),
       index_dtype=st.sampled_from(["int32", "int64", "uint32"]))
def test_canonical_input_check_matches_its_definition(lengths, seed, index_dtype):
    from cocktail.formats.csr import _rising_within_rows

    rng = np.random.default_rng(seed)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(index_dtype)
    rows = [np.sort(rng.choice(6, k, replace=rng.random() < 0.7)) for k in lengths]
    indices = (np.concatenate(rows) if rows else np.zeros(0)).astype(index_dtype)
    if indices.size > 1 and rng.random() < 0.5:
        indices = rng.permutation(indices).astype(index_dtype)
    assert _rising_within_rows(indices, indptr) == _rising_brute_force(indices, indptr)


@pytest.mark.parametrize("dtype", [None, "float32"])
def test_a_canonical_input_is_copied_not_shared(dtype):
    import scipy.sparse as sp

    S = sp.random_array((40, 30), density=0.2, format="csr", random_state=2)
    assert S.has_canonical_format
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, dtype=dtype)
    for mine, theirs in ((csr.data, S.data), (csr.indices, S.indices), (csr.indptr, S.indptr)):
        assert not np.shares_memory(mine, theirs)
    expected = S.toarray()
    S.data[:] = -1.0  # the caller changes its arrays afterwards: the copy does not see it
    np.testing.assert_allclose(csr.to_scipy().toarray(), expected, rtol=1e-6)
