"""Structural features computed on the GPU equal those computed on the host (every zoo matrix).

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from cocktail.formats import CSR
from cocktail.auto import features
from zoo import ZOO

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _same(a, b):
    assert a.shape == b.shape and a.nnz == b.nnz and a.max_row == b.max_row
    assert a.mean_row == pytest.approx(b.mean_row)
    assert tuple(a.row_length_histogram) == tuple(b.row_length_histogram)
    np.testing.assert_array_equal(a.diagonal_counts.offsets, b.diagonal_counts.offsets)
    np.testing.assert_array_equal(a.diagonal_counts.counts, b.diagonal_counts.counts)
    assert dict(a.blocks) == dict(b.blocks)
    assert features.fingerprint(a) == features.fingerprint(b)
    assert dict(a.groups) == dict(b.groups) and a.distinct_values == b.distinct_values
    assert set(a.x_scatter) == set(b.x_scatter)
    for size in a.x_scatter:  # sums of floats in another order: equal within rounding
        assert a.x_scatter[size] == pytest.approx(b.x_scatter[size], abs=1e-9)


@pytest.mark.parametrize("zm", ZOO, ids=lambda m: m.name)
def test_device_features_equal_host_features(zm):
    host = CSR.from_arrays(zm.data, zm.indices, zm.indptr, zm.shape)
    device = CSR.from_arrays(*(cupy.asarray(a) for a in (zm.data, zm.indices, zm.indptr)), zm.shape)
    _same(features.compute(device), features.compute(host))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_device_fingerprint_equals_host_fingerprint(index_dtype):
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    lengths = np.r_[0, 1, 2, 3, 4, 5, 0, rng.integers(0, 40, 5_000), 3_000, 0]  # empty, every bucket edge, a long row
    m, n = lengths.shape[0], 4_000
    cols = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths])
    S = sp.csr_array((np.ones(cols.shape[0]), cols, np.r_[0, np.cumsum(lengths)]), shape=(m, n))
    host = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    device = CSR.from_arrays(*(cupy.asarray(a) for a in (S.data, S.indices, S.indptr)), S.shape,
                             index_dtype=index_dtype)
    assert device.indptr.dtype == index_dtype
    assert features.length_histogram(device) == features.length_histogram(host)
    assert sum(features.length_histogram(device)) == m and features.length_histogram(device)[0] == int((lengths == 0).sum())
    assert features.structure_fingerprint(device) == features.structure_fingerprint(host)
